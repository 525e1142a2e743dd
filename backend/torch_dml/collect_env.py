"""``python -m torch_dml.collect_env``: versions, adapters, features and limits, for bug reports."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
from typing import Any


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def collect() -> dict[str, Any]:
    """Everything the report prints, as data (the conformance and benchmark reports embed it)."""
    import torch

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_dml": _version("torch-dml"),
        "wgpu": _version("wgpu"),
    }
    try:
        import torch_dml
        from torch_dml import _C

        info["wgpu_native"] = _C._wgpu_version()
        info["wgpu_library"] = _C._wgpu_library()
        info["adapters"] = _C._adapters(True)
        info["enumeration_error"] = _C._enumeration_error()
        info["strict"] = torch_dml.is_strict()
    except Exception as error:  # noqa: BLE001 -- a report must still print when the backend cannot load
        info["error"] = f"{type(error).__name__}: {error}"
    return info


def render(info: dict[str, Any]) -> str:
    lines = [f"{key:12} {info[key]}" for key in ("python", "platform", "torch", "torch_dml", "wgpu")]
    if "error" in info:
        lines.append(f"{'error':12} {info['error']}")
        return "\n".join(lines)
    lines.append(f"{'wgpu-native':12} {info['wgpu_native']} ({info['wgpu_library']})")
    adapters = info["adapters"]
    lines.append(f"{'adapters':12} {len(adapters)}" + (f" ({info['enumeration_error']})" if not adapters else ""))
    for adapter in adapters:
        lines.append(
            f"  dml:{adapter['index']}  {adapter['name']}  [{adapter['backend']}, {adapter['adapter_type']}, "
            f"vendor 0x{adapter['vendor_id']:04x}, device 0x{adapter['device_id']:04x}]"
        )
        lines.append(f"          driver: {adapter['driver']}")
        lines.append(f"          features: {', '.join(adapter['features'])}")
        limits = ", ".join(f"{name}={value}" for name, value in adapter["limits"].items())
        lines.append(f"          limits: {limits}")
    return "\n".join(lines)


def main() -> None:
    info = collect()
    if "--json" in sys.argv:
        print(json.dumps(info, indent=2))
    else:
        print(render(info))


if __name__ == "__main__":
    main()
