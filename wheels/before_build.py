"""cibuildwheel's before-build: the build environment's torch (CPU build, exact version) and build tools.

The wheel is built without isolation against this torch, so its minor decides the wheel's version label
and torch pin (setup.py). TORCH_VERSION (exact, e.g. 2.13.0) or TORCH_MINOR (e.g. 2.13) picks it; the
wheels workflow sets both from matrix/matrix.yaml.
"""

from __future__ import annotations

import os
import subprocess
import sys

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# wgpu gives the build its headers and the wgpu-native library the wheel bundles; it does not install on
# Python 3.10, where setup.py downloads its wheel instead (backend/wgpu_bundle.py).
BUILD_TOOLS = ["setuptools>=77", "wheel", "ninja", "wgpu==0.32.0; python_version >= '3.11'", "pyyaml"]


def torch_requirement(environ: dict[str, str]) -> str:
    if environ.get("TORCH_VERSION"):
        return f"torch=={environ['TORCH_VERSION']}"
    if environ.get("TORCH_MINOR"):
        return f"torch=={environ['TORCH_MINOR']}.*"
    raise SystemExit("before_build: set TORCH_VERSION (e.g. 2.13.0) or TORCH_MINOR (e.g. 2.13)")


def main() -> None:
    # PEP 440 sorts 2.13.0+cpu above 2.13.0, so with the CPU index visible the CPU build wins over
    # PyPI's Linux wheel (which pulls gigabytes of CUDA libraries).
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--extra-index-url",
        CPU_INDEX,
        torch_requirement(dict(os.environ)),
        *BUILD_TOOLS,
    ]
    print("before_build:", " ".join(command), flush=True)
    subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
