"""setup.py's check that the built extension shares the process's C++ runtime instead of carrying its own.

Some toolchains link libstdc++ statically by default (a CXX wrapper on a lent GPU machine did). The
module then holds a second libstdc++ beside torch's, the two disagree on locale facet ids, and the first
kernel build dies in ``std::ostream::operator<<`` reaching a codecvt facet: ``torch.zeros(16,
device="dml")`` segfaulted. A shared C++ runtime among the module's NEEDED entries rules that out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence

SHARED_CXX_RUNTIMES = ("libstdc++.so", "libc++.so")


def needed_libraries(readelf_dynamic: str) -> list[str]:
    """The NEEDED entries of ``readelf -d`` output (run with LC_ALL=C: the words are translated)."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf_dynamic)


def static_runtime_error(needed: Sequence[str], compiler: str) -> str | None:
    """Why the extension must not be used, or None when it links a shared C++ runtime."""
    if any(name.startswith(SHARED_CXX_RUNTIMES) for name in needed):
        return None
    return (
        f"torch_dml._C was linked by `{compiler}` without a shared C++ runtime (NEEDED: "
        f"{', '.join(needed) or 'nothing'}), i.e. with its own static copy of libstdc++. Beside torch's "
        "libstdc++ that copy crashes the process at the first kernel build, so the build refuses it. "
        "Build with the system compiler, which links libstdc++ shared: "
        "CC=gcc CXX=g++ pip install --no-build-isolation -e ."
    )


def check_extension(path: str, compiler: str) -> str | None:
    """``static_runtime_error`` for a built module; ELF platforms only (Mach-O and PE link theirs shared)."""
    if not sys.platform.startswith("linux"):
        return None
    readelf = shutil.which("readelf") or shutil.which("llvm-readelf")
    if readelf is None:
        print(f"cxx_runtime: no readelf, cannot check which C++ runtime {path} links", file=sys.stderr)
        return None
    output = subprocess.run(
        [readelf, "-d", path], check=True, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}
    ).stdout
    return static_runtime_error(needed_libraries(output), compiler)
