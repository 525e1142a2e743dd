"""Keeps a Python exit right after a dml backward from aborting the process.

torch (2.13) stashes the caller's ``contextvars`` context in thread-local state for every backward pass,
and the autograd engine's graph task captures that state. A dml backward runs on the engine's dml worker
thread, which drops its graph task a moment after ``backward()`` has returned; when the interpreter is
already finalizing by then, the decref needs the GIL, Python ends the thread with ``pthread_exit``, and
the unwind through the engine's C++ frames calls ``std::terminate`` ("terminate called without an active
exception", exit status 134). The same happens to a graph task whose results went back to Python
(``torch.autograd.grad``): its future holds them. At exit, before finalization, one tiny backward is run
straight through the engine (no stash, no results: it accumulates into its own leaf): the worker takes
tasks in order, so once it is done every earlier graph task has been released. Its own task holds no
Python object, and every tensor it touched stays referenced here while the worker lets go of it (a
short sleep, which releases the GIL).
"""

from __future__ import annotations

import atexit
import time

import torch

from torch_dml import _C


def _drain_autograd_worker() -> None:
    if not _C._is_initialized():
        return
    try:
        index = _C._get_device()
        with torch.enable_grad():
            leaf = torch.zeros(1, device=torch.device("dml", index), requires_grad=True)
            out = (leaf * 2).sum()
            seed = torch.ones_like(out)
            engine = torch.autograd.Variable._execution_engine  # type: ignore[attr-defined]
            engine.run_backward((out,), (seed,), False, False, (), True, True)
        time.sleep(0.01)
    except Exception:  # noqa: BLE001, S110 - a device already broken has nothing left to drain: exit quietly
        pass


def register() -> None:
    atexit.register(_drain_autograd_worker)
