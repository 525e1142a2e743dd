"""Smoke test of an installed torch-dml: what a user does first, run against the wheel, not the source.

    python wheels/smoke.py                    # cibuildwheel's test-command (a container may have no GPU)
    python wheels/smoke.py --require-adapter  # tox -e wheel: a WebGPU adapter must be there

Checks that the wheel's torch pin matches the torch it runs with, that `import torch_dml` registers the
`dml` device with the wgpu-native the wheel carries (no `wgpu` package needed), and, with an adapter, a
tensor on dml and its round trip to the CPU; then that `import torch` alone autoloads the backend (the
torch.backends entry point).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import subprocess
import sys


def check_pin() -> str:
    import torch

    requires = importlib.metadata.requires("torch-dml") or []
    pins = [r.replace(" ", "") for r in requires if r.replace(" ", "").startswith("torch==")]
    minor = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    if pins != [f"torch=={minor}.*"]:
        raise SystemExit(f"smoke: torch-dml requires {pins}, but runs with torch {torch.__version__}")
    return pins[0]


def check_bundled_wgpu() -> str:
    """The wheel must not need `wgpu` (it does not install on Python 3.10) and must load its own copy."""
    import torch_dml

    requires = [r.replace(" ", "") for r in importlib.metadata.requires("torch-dml") or []]
    if any(re.match(r"wgpu([=<>!~;\[]|$)", r) for r in requires):
        raise SystemExit(f"smoke: torch-dml requires {requires}; the wheel should carry wgpu-native instead")
    loaded = torch_dml._C._wgpu_library()
    bundle = os.path.join(os.path.dirname(torch_dml.__file__), "wgpu_native")
    overridden = os.environ.get("TORCH_DML_WGPU_LIBRARY")
    if not overridden and os.path.dirname(os.path.abspath(loaded)) != os.path.abspath(bundle):
        raise SystemExit(f"smoke: loaded wgpu-native from {loaded}, not the wheel's own copy in {bundle}")
    return loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--require-adapter", action="store_true", help="fail when no WebGPU adapter is found")
    args = parser.parse_args(argv)

    import torch
    import torch_dml

    version = importlib.metadata.version("torch-dml")
    print(f"smoke: torch-dml {version} ({check_pin()}), torch {torch.__version__}, from {torch_dml.__file__}")
    print(f"smoke: wgpu-native {torch_dml._C._wgpu_version()} from {check_bundled_wgpu()}")
    count = torch_dml.device_count()
    print(f"smoke: device_count() = {count}")
    if count == 0:
        if args.require_adapter:
            raise SystemExit("smoke: no WebGPU adapter (on Linux: apt-get install mesa-vulkan-drivers)")
        torch.device("dml")  # the backend is registered even without an adapter
        print("smoke: no adapter here; registration checked, tensors skipped")
        return 0

    print(f"smoke: dml:0 is {torch_dml.device_name(0)}")
    source = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    on_device = source.to(torch_dml.device())
    if on_device.device.type != "dml":
        raise SystemExit(f"smoke: tensor landed on {on_device.device}, not dml")
    back = (on_device * 2 + 1).cpu()
    if not torch.equal(back, source * 2 + 1):
        raise SystemExit(f"smoke: round trip gave {back}, expected {source * 2 + 1}")
    print("smoke: tensor on dml, arithmetic and round trip to the CPU OK")

    # Autoload: a fresh interpreter that imports only torch must see the device.
    code = "import torch; print(torch.ones(2, device='dml').device)"
    environ = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=environ, timeout=300
    )
    if result.returncode != 0 or "dml:0" not in result.stdout:
        raise SystemExit(f"smoke: autoload failed:\n{result.stdout}{result.stderr}")
    print("smoke: `import torch` autoloads torch_dml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
