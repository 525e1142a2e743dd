"""The CPU fallback's counters and strict mode: what the conformance suite uses to tell native kernels
from ops that only ran on the CPU."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from torch_dml import _C

FallbackError = _C.FallbackError
"""Raised (a ``NotImplementedError``) when an op would run on the CPU fallback in strict mode."""


def fallback_counts() -> dict[str, int]:
    """How many times each aten operator ran through the CPU fallback since the last reset."""
    return dict(_C._fallback_counts())


def reset_fallback_counts() -> None:
    _C._reset_fallback_counts()


def is_strict() -> bool:
    return _C._get_strict()


@contextlib.contextmanager
def strict(enabled: bool = True) -> Iterator[None]:
    """Within the block, an op that would fall back to the CPU raises ``FallbackError`` instead.

    Process-wide (autograd runs backward on its own threads), restored on exit.
    """
    previous = _C._get_strict()
    _C._set_strict(enabled)
    try:
        yield
    finally:
        _C._set_strict(previous)


def _init_from_environment() -> None:
    if os.environ.get("TORCH_DML_STRICT", "0") not in ("", "0"):
        _C._set_strict(True)
