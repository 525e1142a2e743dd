"""Running a snippet in a fresh interpreter, for behaviour that happens once per process
(autoload, environment variables read at start-up, warnings issued once); the wide tiles on small
problems; the kernels a call dispatches."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=environment, timeout=300
    )


@contextlib.contextmanager
def wide_tiles_from(groups: int) -> Iterator[None]:
    """Within: the GEMM and convolution kernels take their 128x128 tile from `groups` of its workgroups
    on every adapter (by default, a GPU's floor is 256, beyond lavapipe test sizes, and a CPU adapter's
    twice its threads: kernels/wide_tile.h)."""
    import torch_dml

    previous = torch_dml._C._set_wide_tile_groups(groups)
    try:
        yield
    finally:
        torch_dml._C._set_wide_tile_groups(previous)


def kernels_of(fn: Callable[[], object], device: int = 0) -> list[str]:
    """The names of the kernels fn() dispatches on dml:`device`, in order (torch_dml's dispatch timer,
    which waits for the device as it starts: count host waits after it, not around it)."""
    import torch_dml

    torch_dml.synchronize()
    torch_dml._C._start_kernel_timing(device)
    try:
        fn()
        torch_dml.synchronize()
    finally:
        timings = torch_dml._C._stop_kernel_timing(device)
    return [kernel for kernel, *_ in timings]
