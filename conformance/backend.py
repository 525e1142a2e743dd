"""Which backend is under test, what its adapter is, and how the dispatcher serves each aten overload."""

from __future__ import annotations

import importlib
import os
from typing import Any

import torch

ADAPTER_CLASSES = [
    ("lavapipe", ("llvmpipe", "lavapipe")),
    ("warp", ("microsoft basic render", "warp")),
    ("nvidia", ("nvidia", "geforce", "rtx", "quadro", "tesla")),
    ("amd", ("amd", "radeon")),
    ("intel", ("intel",)),
    ("apple", ("apple",)),
]


def load(module: str, device: str) -> Any:
    """Imports the backend (before torch.testing._internal is imported anywhere) and checks it works."""
    backend = importlib.import_module(module)
    device_module = getattr(torch, device, None)
    if device_module is None or not device_module.is_available():
        raise RuntimeError(f"backend {module!r} gives no available '{device}' device")
    return backend


def adapter_class(name: str) -> str:
    lowered = name.lower()
    for cls, needles in ADAPTER_CLASSES:
        if any(needle in lowered for needle in needles):
            return cls
    return "other"


def describe(module: str, device: str) -> dict[str, Any]:
    backend = importlib.import_module(module)
    info: dict[str, Any] = {"module": module, "device": device, "torch": torch.__version__}
    adapters = getattr(getattr(backend, "_C", None), "_adapters", None)
    if adapters is not None:
        first = adapters(True)[0]
        info["adapter"] = {key: first[key] for key in ("name", "backend", "adapter_type", "driver", "features")}
    else:
        name_fn = getattr(backend, "device_name", None)
        info["adapter"] = {"name": name_fn(0) if name_fn else device, "features": []}
    info["adapter_class"] = adapter_class(info["adapter"]["name"])
    info["env"] = {k: v for k, v in os.environ.items() if k.startswith("TORCH_DML_")}
    return info


def dispatch_kind(overload: str) -> str:
    """native / composite / fallback / missing for one aten overload on PrivateUse1."""
    name = overload if overload.startswith("aten::") else f"aten::{overload}"
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    try:
        if has(name, "PrivateUse1"):
            return "native"
        if has(name, "CompositeImplicitAutograd") or has(name, "CompositeExplicitAutograd"):
            return "composite"
    except RuntimeError:
        return "missing"
    table = torch._C._dispatch_dump_table(name)
    for line in table.splitlines():
        if line.startswith("PrivateUse1:") and "default backend kernel" in line:
            return "native-structured"
    if torch._C._dispatch_has_backend_fallback(torch._C.DispatchKey.PrivateUse1):
        return "fallback"
    return "missing"


def registered_overloads() -> list[str]:
    """Aten overloads with a kernel registered directly for PrivateUse1."""
    names = torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
    return sorted(n for n in names if n.startswith("aten::"))
