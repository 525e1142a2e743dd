"""setup.py's precompiled header: torch's heaviest headers parsed once per build instead of once per source.

Most of a fresh build is spent parsing the same headers: `ATen/ATen.h` alone takes ~7.5 s per source on
the 2-core CI machine, and 70 sources include it or `torch/library.h`. GCC can load them from a
precompiled header (a `.gch` beside the header, `-include`d into every source) in well under a second;
`aten/softmax_ops.cpp` then compiles in 5.7 s instead of 21 s.

The `.gch` must be built with exactly the flags the sources compile with, which torch composes inside
BuildExtension. So within `precompiled_header` torch's `_write_ninja_file_and_compile_objects` runs
through a stand-in that takes those flags, builds the `.gch` with them (once: it lives in a folder named
by a hash of the command, the header and the compiler), and adds `-include` of it to every source. When
anything in that hash changes the folder changes, so ninja sees new commands and rebuilds every object.

GCC only: clang reads no `.gch` and MSVC precompiles differently, so elsewhere the build is as before.
GCC falls back to the plain header when a `.gch` does not fit the flags (`-Winvalid-pch` says so), so a
mismatch is slow, never wrong. `TORCH_DML_PCH=0` turns it off. Include hygiene does not depend on it:
`.ci/torch-headers-check` compiles every source without it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

HEADER = Path(__file__).parent / "csrc" / "precompiled.h"
NAME = "torch_dml_pch.h"


@functools.cache
def compiler_version(compiler: str) -> str:
    """`compiler --version`'s output ("" when it cannot run): asked once per build."""
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def is_gcc(compiler: str) -> bool:
    version = compiler_version(compiler).lower()
    return "clang" not in version and ("gcc" in version or "free software foundation" in version)


def header_command(compiler: str, cflags: Sequence[str], post_cflags: Sequence[str], header: Path) -> list[str]:
    """The command that precompiles `header` with the sources' flags (torch's are shell-quoted and end in -c)."""
    flags = [flag for flag in shlex.split(" ".join(cflags)) if flag != "-c"]
    return [compiler, *flags, "-x", "c++-header", str(header), "-o", f"{header}.gch",
            *shlex.split(" ".join(post_cflags))]


def folder_for(compiler: str, flags: Sequence[str], text: str, build_temp: str) -> Path:
    """The .gch's folder: named by everything that makes it unfit (the compiler, its flags, the header)."""
    key = hashlib.sha256("\0".join([compiler, compiler_version(compiler), *flags, text]).encode()).hexdigest()[:16]
    return Path(build_temp) / "pch" / key


def build(compiler: str, cflags: Sequence[str], post_cflags: Sequence[str], build_temp: str) -> Path | None:
    """The precompiled header for these flags, built if missing; None when it cannot be built."""
    text = HEADER.read_text()
    folder = folder_for(compiler, [*cflags, *post_cflags], text, build_temp)
    header = folder / NAME
    if (folder / f"{NAME}.gch").exists():
        return header
    if folder.parent.exists():  # an older key's .gch is ~0.5 GB: keep one
        shutil.rmtree(folder.parent)
    folder.mkdir(parents=True)
    header.write_text(text)
    command = header_command(compiler, cflags, post_cflags, header)
    print("torch-dml: precompiling torch's headers (once per compiler, flags and torch; ~40 s)", flush=True)
    started = time.monotonic()
    # ccache would store the 0.5 GB result for nothing.
    result = subprocess.run(command, check=False, capture_output=True, text=True, env={**os.environ, "CCACHE_DISABLE": "1"})
    if result.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        print(f"torch-dml: precompiling the headers failed; building without them:\n{result.stderr[-2000:]}",
              flush=True)
        return None
    print(f"torch-dml: precompiled headers ready ({time.monotonic() - started:.0f} s)", flush=True)
    return header


@contextlib.contextmanager
def precompiled_header(build_temp: str) -> Iterator[None]:
    """Within: torch's ninja builds `-include` the precompiled header (see the module docstring)."""
    from torch.utils import cpp_extension

    original = getattr(cpp_extension, "_write_ninja_file_and_compile_objects", None)
    compiler = cpp_extension.get_cxx_compiler()
    if (original is None or not sys.platform.startswith("linux") or os.environ.get("TORCH_DML_PCH", "1") == "0"
            or not is_gcc(compiler)):
        yield
        return

    def write_and_compile(*args, **kwargs):
        cflags, post_cflags = kwargs.get("cflags"), kwargs.get("post_cflags")
        header = build(compiler, cflags, post_cflags, build_temp) if cflags is not None and post_cflags else None
        if header is not None:
            # Python's CFLAGS bring -Wsign-compare, which fires on a c10 template the header instantiates;
            # from a precompiled header GCC repeats that at the end of every source, where no pragma
            # reaches. Our sources have no such warning, and builds without the header still check.
            kwargs["post_cflags"] = [*post_cflags, "-Wno-sign-compare", "-Winvalid-pch", "-include",
                                     shlex.quote(str(header))]
            # ccache caches objects built with a precompiled header only when told these are safe.
            sloppiness = os.environ.get("CCACHE_SLOPPINESS", "")
            os.environ["CCACHE_SLOPPINESS"] = ",".join(filter(None, [sloppiness, "pch_defines,time_macros"]))
        return original(*args, **kwargs)

    cpp_extension._write_ninja_file_and_compile_objects = write_and_compile
    try:
        yield
    finally:
        cpp_extension._write_ninja_file_and_compile_objects = original
