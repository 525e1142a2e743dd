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
    ("qualcomm", ("adreno", "qualcomm")),
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
    info["float64"] = has_float64(backend)
    info["fallback_detection"] = hasattr(backend, "strict") and hasattr(backend, "FallbackError")
    info["env"] = {k: v for k, v in os.environ.items() if k.startswith("TORCH_DML_")}
    return info


# The tag _dispatch_dump_table prints at the end of an op's PrivateUse1 line -> how the backend serves it.
DISPATCH_TAGS = {"[kernel]": "native", "[default backend kernel]": "composite", "[math kernel]": "composite",
                 "[backend fallback]": "fallback"}


def dispatch_kind(overload: str, dispatch_key: str = "PrivateUse1") -> str:
    """native / composite / fallback / missing for one aten overload ('add.Tensor' or 'aten::add.Tensor')."""
    name = overload if "::" in overload else f"aten::{overload}"
    try:
        table = torch._C._dispatch_dump_table(name)
    except RuntimeError:
        return "missing"
    for line in table.splitlines():
        if line.startswith(f"{dispatch_key}:"):
            for tag, kind in DISPATCH_TAGS.items():
                if line.rstrip().endswith(tag):
                    return kind
            return "native"  # registered some other way (a Python kernel): the backend's own
    return "missing"


def has_float64(backend: Any) -> bool:
    """Whether the adapter runs float64 (torch_dml: shader-f64); backends without the query are assumed to."""
    query = getattr(backend, "has_float64_support", None)
    return bool(query(0)) if query else True


def registered_overloads() -> list[str]:
    """aten overloads with a kernel registered directly for PrivateUse1 or AutogradPrivateUse1."""
    from conformance.generate import registered_overloads as found

    return found()
