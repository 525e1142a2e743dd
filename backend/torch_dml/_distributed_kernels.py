"""PrivateUse1 kernels for the ``c10d`` collective ops, so C++ callers reach the ``dmlccl`` group too.

``torch.distributed`` from Python calls a group's methods directly, and C++ callers of the methods PyTorch's
``ProcessGroup`` trampoline forwards to Python (all-reduce, broadcast, the single-tensor and coalesced
all-gather / reduce-scatter that the functional collectives use...) reach ``StagedProcessGroup`` that way.
The other methods (gather, scatter, reduce, the list all-to-all and all-gather-coalesced) and anyone
calling ``torch.ops.c10d.*`` go through the dispatcher instead, whose PrivateUse1 kernels (Ops.cpp) ask the
group for the C++ ``Backend`` it holds for the device: a Python group has none for dml, so they fail with
"No backend type associated with device type dml". These kernels replace those: a dmlccl group gets the
staged collective; any other group gets what PyTorch's kernel did, its dml backend's method.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as c10d

_library: torch.library.Library | None = None


def _options(kind: type, *, async_op: bool | None = None, timeout: int = -1, reduce_op: Any = None,
             **fields: Any) -> Any:
    """A c10d options object from an op's boxed arguments (``timeout`` in milliseconds, -1 for the
    group's own; ``reduce_op`` the boxed ``ReduceOp``)."""
    options = kind()
    if async_op is not None:
        options.asyncOp = async_op
    if timeout >= 0:
        options.timeout = timedelta(milliseconds=timeout)
    if reduce_op is not None:
        # The boxed ReduceOp shows only its type; PREMUL_SUM's factor does not cross, and Gloo has no
        # PREMUL_SUM anyway.
        op = dist.ReduceOp.RedOpType(reduce_op.op())
        if op == dist.ReduceOp.PREMUL_SUM:
            raise NotImplementedError("torch_dml dmlccl: ReduceOp.PREMUL_SUM is not supported on dml tensors")
        options.reduceOp = op
    for name, value in fields.items():
        setattr(options, name, value)
    return options


def _call(boxed_group: torch.ScriptObject, method: str, *args: Any) -> torch.ScriptObject:
    """``method`` of the group's collective: the dmlccl group's own (staged), else the dml backend's, as
    PyTorch's kernel would."""
    from torch_dml.distributed import StagedProcessGroup, StagedWork

    group = dist.ProcessGroup.unbox(boxed_group)
    if isinstance(group, StagedProcessGroup):
        work = getattr(group, method)(*args)
        if isinstance(work, StagedWork):
            # Boxing a Python Work keeps only its C++ half, whose wait() would never return once the Python
            # object is gone: hand over a C++ Work on the same future (its wait() does not raise a failed
            # collective's error; get_future().wait() does).
            return c10d._create_work_from_future(work.get_future()).boxed()
        return work.boxed()
    backend = group._get_backend(torch.device("dml"))  # raises PyTorch's "No backend type" where none
    if not hasattr(backend, method):
        raise NotImplementedError(
            f"torch_dml: the {type(backend).__name__} backend of this process group offers no {method} "
            "to Python for dml tensors; use a dmlccl group (init_process_group('dmlccl'))"
        )
    return getattr(backend, method)(*args).boxed()


_Tensors = list[torch.Tensor]
_Rows = list[list[torch.Tensor]]
_Boxed = torch.ScriptObject  # a ProcessGroup, ReduceOp or Work as the dispatcher passes it


def _send(tensors: _Tensors, group: _Boxed, dst: int, tag: int) -> _Boxed:
    return _call(group, "send", tensors, dst, tag)


def _recv(tensors: _Tensors, group: _Boxed, src: int, tag: int) -> _Boxed:
    return _call(group, "recv", tensors, src, tag)


def _recv_any_source(tensors: _Tensors, group: _Boxed, tag: int) -> _Boxed:
    return _call(group, "recv_anysource", tensors, tag)


def _reduce(tensors: _Tensors, group: _Boxed, reduce_op: _Boxed, root_rank: int, root_tensor: int,
            async_op: bool = True, timeout: int = -1) -> _Boxed:
    options = _options(c10d.ReduceOptions, async_op=async_op, timeout=timeout, reduce_op=reduce_op,
                       rootRank=root_rank, rootTensor=root_tensor)
    return _call(group, "reduce", tensors, options)


def _broadcast(tensors: _Tensors, group: _Boxed, root_rank: int, root_tensor: int, async_op: bool = True,
               timeout: int = -1) -> tuple[_Tensors, _Boxed]:
    options = _options(c10d.BroadcastOptions, async_op=async_op, timeout=timeout, rootRank=root_rank,
                       rootTensor=root_tensor)
    return tensors, _call(group, "broadcast", tensors, options)


def _allreduce(tensors: _Tensors, group: _Boxed, reduce_op: _Boxed,
               sparse_indices: torch.Tensor | None = None, async_op: bool = True,
               timeout: int = -1) -> tuple[_Tensors, _Boxed]:
    if sparse_indices is not None:
        raise NotImplementedError("torch_dml dmlccl: sparse all_reduce is not supported on dml tensors")
    options = _options(c10d.AllreduceOptions, async_op=async_op, timeout=timeout, reduce_op=reduce_op)
    return tensors, _call(group, "allreduce", tensors, options)


def _allreduce_coalesced(tensors: _Tensors, group: _Boxed, reduce_op: _Boxed, async_op: bool = True,
                         timeout: int = -1) -> _Boxed:
    options = _options(c10d.AllreduceCoalescedOptions, async_op=async_op, timeout=timeout, reduce_op=reduce_op)
    return _call(group, "allreduce_coalesced", tensors, options)


def _allgather(outputs: _Rows, inputs: _Tensors, group: _Boxed, async_op: bool = True,
               timeout: int = -1) -> tuple[_Rows, _Boxed]:
    options = _options(c10d.AllgatherOptions, async_op=async_op, timeout=timeout)
    return outputs, _call(group, "allgather", outputs, inputs, options)


def _allgather_base(output: torch.Tensor, input: torch.Tensor, group: _Boxed, async_op: bool = True,
                    timeout: int = -1) -> tuple[torch.Tensor, _Boxed]:
    options = _options(c10d.AllgatherOptions, async_op=async_op, timeout=timeout)
    return output, _call(group, "_allgather_base", output, input, options)


def _allgather_coalesced(outputs: _Rows, inputs: _Tensors, group: _Boxed, async_op: bool = True) -> _Boxed:
    return _call(group, "allgather_coalesced", outputs, inputs, _options(c10d.AllgatherOptions, async_op=async_op))


def _allgather_into_tensor_coalesced(outputs: _Tensors, inputs: _Tensors, group: _Boxed,
                                     async_op: bool = True) -> _Boxed:
    options = _options(c10d.AllgatherOptions, async_op=async_op)
    return _call(group, "allgather_into_tensor_coalesced", outputs, inputs, options)


def _reduce_scatter(outputs: _Tensors, inputs: _Rows, group: _Boxed, reduce_op: _Boxed, async_op: bool = True,
                    timeout: int = -1) -> tuple[_Tensors, _Boxed]:
    options = _options(c10d.ReduceScatterOptions, async_op=async_op, timeout=timeout, reduce_op=reduce_op)
    return outputs, _call(group, "reduce_scatter", outputs, inputs, options)


def _reduce_scatter_base(output: torch.Tensor, input: torch.Tensor, group: _Boxed, reduce_op: _Boxed,
                         async_op: bool = True, timeout: int = -1) -> tuple[torch.Tensor, _Boxed]:
    options = _options(c10d.ReduceScatterOptions, async_op=async_op, timeout=timeout, reduce_op=reduce_op)
    return output, _call(group, "_reduce_scatter_base", output, input, options)


def _reduce_scatter_tensor_coalesced(outputs: _Tensors, inputs: _Tensors, group: _Boxed, reduce_op: _Boxed,
                                     async_op: bool = True, timeout: int = -1) -> _Boxed:
    options = _options(c10d.ReduceScatterOptions, async_op=async_op, timeout=timeout, reduce_op=reduce_op)
    return _call(group, "reduce_scatter_tensor_coalesced", outputs, inputs, options)


def _gather(outputs: _Rows, inputs: _Tensors, group: _Boxed, root_rank: int, async_op: bool = True,
            timeout: int = -1) -> _Boxed:
    options = _options(c10d.GatherOptions, async_op=async_op, timeout=timeout, rootRank=root_rank)
    return _call(group, "gather", outputs, inputs, options)


def _scatter(outputs: _Tensors, inputs: _Rows, group: _Boxed, root_rank: int, async_op: bool = True,
             timeout: int = -1) -> tuple[_Tensors, _Boxed]:
    options = _options(c10d.ScatterOptions, async_op=async_op, timeout=timeout, rootRank=root_rank)
    return outputs, _call(group, "scatter", outputs, inputs, options)


def _alltoall(outputs: _Tensors, inputs: _Tensors, group: _Boxed, async_op: bool = True,
              timeout: int = -1) -> tuple[_Tensors, _Boxed]:
    options = _options(c10d.AllToAllOptions, async_op=async_op, timeout=timeout)
    return outputs, _call(group, "alltoall", outputs, inputs, options)


def _alltoall_base(output: torch.Tensor, input: torch.Tensor, group: _Boxed, output_splits: list[int],
                   input_splits: list[int], async_op: bool = True, timeout: int = -1) -> _Boxed:
    options = _options(c10d.AllToAllOptions, async_op=async_op, timeout=timeout)
    return _call(group, "alltoall_base", output, input, output_splits, input_splits, options)


def _barrier(tensor: torch.Tensor, group: _Boxed, device_ids: list[int], async_op: bool = True,
             timeout: int = -1) -> _Boxed:
    options = _options(c10d.BarrierOptions, async_op=async_op, timeout=timeout, device_ids=list(device_ids))
    return _call(group, "barrier", options)


KERNELS: dict[str, Callable[..., Any]] = {
    "send": _send,
    "recv_": _recv,
    "recv_any_source_": _recv_any_source,
    "reduce_": _reduce,
    "broadcast_": _broadcast,
    "allreduce_": _allreduce,
    "allreduce_coalesced_": _allreduce_coalesced,
    "allgather_": _allgather,
    "_allgather_base_": _allgather_base,
    "allgather_coalesced_": _allgather_coalesced,
    "allgather_into_tensor_coalesced_": _allgather_into_tensor_coalesced,
    "reduce_scatter_": _reduce_scatter,
    "_reduce_scatter_base_": _reduce_scatter_base,
    "reduce_scatter_tensor_coalesced_": _reduce_scatter_tensor_coalesced,
    "gather_": _gather,
    "scatter_": _scatter,
    "alltoall_": _alltoall,
    "alltoall_base_": _alltoall_base,
    "barrier": _barrier,
}


def register() -> None:
    """Puts ``KERNELS`` in place of PyTorch's PrivateUse1 kernels for the c10d ops (once per process)."""
    global _library
    if _library is not None:
        return
    library = torch.library.Library("c10d", "IMPL")
    with warnings.catch_warnings():
        # Replacing a kernel is the point here; PyTorch warns about it once per process.
        warnings.filterwarnings("ignore", message="Warning only once for all operators")
        for name, kernel in KERNELS.items():
            library.impl(name, kernel, "PrivateUse1")
    _library = library
