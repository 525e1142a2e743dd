"""dml tensors and torch.multiprocessing: a clear refusal instead of ``_share_fd_: only available on CPU``.

``torch.multiprocessing`` registers reducers with ``multiprocessing``'s ``ForkingPickler`` that share a
tensor's storage with the receiving process: an IPC handle for CUDA, a shared-memory file for CPU.
WebGPU has no inter-process handle for a buffer, so a dml tensor cannot travel that way; without a
check the CPU path is tried and fails deep inside. The reducers torch registered are wrapped, so
everything that is not on dml is reduced exactly as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from multiprocessing.reduction import ForkingPickler
from typing import Any

import torch
from torch.multiprocessing import reductions

_TORCH_REDUCERS = ("reduce_tensor", "reduce_storage", "reduce_typed_storage", "reduce_typed_storage_child")


def _untyped(obj: Any) -> Any:
    # TypedStorage's own .device and .nbytes() warn that TypedStorage is deprecated.
    return obj._untyped_storage if isinstance(obj, torch.storage.TypedStorage) else obj


def _refusal(obj: Any) -> RuntimeError:
    if isinstance(obj, torch.Tensor):
        what = f"a dml tensor (shape {list(obj.shape)}, {obj.dtype}, on {obj.device})"
        fix = "move it to the CPU first (tensor.cpu()) and back with .to('dml') in the receiving process"
    else:
        storage = _untyped(obj)
        what = f"a dml storage ({storage.nbytes()} bytes, on {storage.device})"
        fix = "send the tensor moved to the CPU (tensor.cpu()) and move it back with .to('dml') there"
    return RuntimeError(
        f"torch_dml: {what} cannot be shared between processes (torch.multiprocessing, a Queue, a Pipe or a "
        f"Process argument): WebGPU has no inter-process memory handles; {fix}"
    )


def _refusing(reducer: Callable[[Any], Any]) -> Callable[[Any], Any]:
    @functools.wraps(reducer)
    def reduce(obj: Any) -> Any:
        if _untyped(obj).device.type == "dml":
            raise _refusal(obj)
        return reducer(obj)

    return reduce


def register() -> None:
    """Wraps every reducer torch.multiprocessing registered for tensors and storages. Idempotent: a
    wrapped reducer is no longer one of torch's, so a second call leaves it alone."""
    torch_reducers = {getattr(reductions, name) for name in _TORCH_REDUCERS if hasattr(reductions, name)}
    for cls, reducer in list(ForkingPickler._extra_reducers.items()):
        if reducer in torch_reducers:
            ForkingPickler.register(cls, _refusing(reducer))
