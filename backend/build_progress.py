"""setup.py's view of the C++ build: one short line per compiled source, with the time left.

torch's BuildExtension runs `ninja -v`, whose every status line is a whole compiler command (a few kB
of flags and include paths), and pip shows none of it unless run with -v. A fresh build takes several
minutes (~5-10 on 2 cores), so silence reads as a hang and the full commands bury the errors. Here ninja
is run the same way but each `[n/N] <command>` becomes `[n/N] backend/csrc/x.cpp (elapsed, ETA)`;
every other line (warnings, FAILED:, compiler errors) passes through unchanged.
TORCH_DML_BUILD_VERBOSE=1 keeps torch's own output (the full commands).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

STATUS = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")
# The path after the flag: torch's cflags end in a bare -c of their own, so `-c -c x.cpp` is usual.
SOURCE = re.compile(r"(?:^|\s)-c\s+([^-\s]\S*)")
OUTPUT = re.compile(r"(?:^|\s)-o\s+([^-\s]\S*)")


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def what(command: str, root: str) -> str:
    """The file a ninja edge makes, short: the source it compiles, else its output (the link)."""
    found = SOURCE.search(command) or OUTPUT.search(command)
    if found is None:
        return command[:100]
    path = found.group(1).strip("'\"")
    return os.path.relpath(path, root) if os.path.isabs(path) and path.startswith(root) else path


def condense(line: str, root: str, elapsed: float) -> str:
    """One line of `ninja -v` output as shown: status lines shortened, with an estimate from the mean
    time per edge so far; anything else unchanged."""
    status = STATUS.match(line)
    if status is None:
        return line
    done, total = int(status.group(1)), int(status.group(2))
    left = f", about {duration(elapsed / done * (total - done))} left" if 0 < done < total else ""
    return f"[{done}/{total}] {what(status.group(3), root)} ({duration(elapsed)}{left})"


def run_ninja(command: list[str], cwd: str, root: str, out: TextIO,
              clock: Callable[[], float] = time.monotonic) -> int:
    started = clock()
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", bufsize=1) as process:
        assert process.stdout is not None
        for line in process.stdout:
            out.write(condense(line.rstrip("\n"), root, clock() - started) + "\n")
            out.flush()
    return process.returncode


@contextlib.contextmanager
def condensed_ninja(root: str, sources: int) -> Iterator[None]:
    """Within: torch's ninja runs through run_ninja (unless TORCH_DML_BUILD_VERBOSE is set, or this
    torch has no `_run_ninja_build(build_directory, verbose, error_prefix)` to stand in for)."""
    from torch.utils import cpp_extension

    original = getattr(cpp_extension, "_run_ninja_build", None)
    verbose = os.environ.get("TORCH_DML_BUILD_VERBOSE", "") not in ("", "0")
    if original is None or verbose or sys.platform == "win32":  # Windows: torch's sets up the MSVC env
        yield
        return

    def run(build_directory: str, verbose: bool, error_prefix: str) -> None:
        jobs = os.environ.get("MAX_JOBS", "")
        print(f"torch-dml: building {sources} C++ sources with ninja{f' -j{jobs}' if jobs else ''} (a fresh "
              "build takes ~5 min on 2 cores with GCC, a few seconds when little changed; "
              "TORCH_DML_BUILD_VERBOSE=1 shows the full commands)", flush=True)
        command = ["ninja", "-v", *(["-j", jobs] if jobs else [])]
        code = run_ninja(command, build_directory, root, sys.stdout)
        if code:
            raise RuntimeError(f"{error_prefix}: ninja exited with {code} (its output is above)")

    cpp_extension._run_ninja_build = run
    try:
        yield
    finally:
        cpp_extension._run_ninja_build = original
