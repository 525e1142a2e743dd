"""``torch.distributed`` on dml tensors: the ``dmlccl`` backend, collectives staged through host memory.

    torch.distributed.init_process_group("dmlccl")            # dml and CPU tensors
    torch.distributed.init_process_group()                    # the same: dml is the accelerator
    torch.distributed.init_process_group("cpu:gloo,dml:dmlccl")

Gloo refuses PrivateUse1 tensors, and WebGPU has no way to share device memory between processes, so each
collective copies its dml operands to the CPU (once, whole: a DDP bucket stays one tensor), runs Gloo's
collective on an internal Gloo group over the same store, rank and size, and copies the results back when
Gloo finishes. CPU operands go to Gloo untouched. The returned ``Work`` is asynchronous like Gloo's:
``wait()`` and ``get_future()`` (which DDP's comm hooks chain on) complete after the copy back, and
``wait()`` raises the error of a collective that failed.

PyTorch lets only a C++ ``c10d::Backend`` be registered per device; a Python one has to be a whole
``ProcessGroup`` (``Backend.register_backend``'s creator may return one) whose methods return Python
``Work`` objects. So this group answers for every device of the tensors it is given.
A direct device-to-device path can later take a collective's place here without a change in user code.

How each caller reaches it:

- Python (``dist.all_reduce``, ``dist.all_gather_into_tensor``, ``_coalescing_manager``, DDP's and
  FSDP2's Python code): the group's methods, called directly.
- C++ callers of the methods PyTorch's ``ProcessGroup`` trampoline forwards to Python (the allreduce,
  broadcast, allgather, reduce-scatter, all-to-all-single and send/recv families, and the coalesced
  ``all_gather_single_coalesced`` / ``reduce_scatter_single_coalesced``): these methods too. The
  functional collectives (``torch.ops._c10d_functional.*``: DTensor's ``full_tensor()`` and
  ``redistribute``, FSDP2's DTensor parameters, ``torch.compile``d collectives) issue even a single
  all-gather or reduce-scatter as the coalesced form, so those two are implemented here (one Gloo call per
  dtype on the packed tensors); ``wait_tensor`` waits on the returned Work, which completes after the copy
  back.
- ``torch.ops.c10d.*`` and C++ callers of the methods the trampoline does not forward (gather, scatter,
  reduce, the list all-to-all and all-gather-coalesced): the dispatcher's PrivateUse1 kernels, which
  PyTorch writes as "the group's C++ backend for this device" and so fail for a Python group;
  ``_distributed_kernels`` replaces them with kernels that call this group's methods.

Limits: ``backend="gloo"`` alone cannot reach dml tensors (PyTorch maps it to ``cpu`` and ``cuda`` only
and gives Gloo itself every device it names); ``ReduceOp.AVG`` is a sum then a division (Gloo has no
average), ``PREMUL_SUM`` is Gloo's to refuse (the boxed ``ReduceOp`` the c10d ops take does not carry its
factor, so the kernels refuse it too); the Work a ``torch.ops.c10d`` op returns raises a failed
collective's error from ``get_future().wait()`` only (``_distributed_kernels`` says why); sparse all-reduce
is not staged;
every collective costs a device-to-host and a host-to-device copy. docs/distributed.md says the same for
users.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (
    AllgatherOptions,
    AllreduceCoalescedOptions,
    AllreduceOptions,
    AllToAllOptions,
    BarrierOptions,
    BroadcastOptions,
    GatherOptions,
    ReduceOptions,
    ReduceScatterOptions,
    ScatterOptions,
    Store,
    Work,
)

from torch_dml import _distributed_kernels

BACKEND_NAME = "dmlccl"
DEVICE_TYPE = "dml"

_Pairs = list[tuple[torch.Tensor, torch.Tensor]]


def _to_host(tensor: torch.Tensor, pairs: _Pairs, *, read: bool, written: bool) -> torch.Tensor:
    """The host tensor Gloo works on for ``tensor``: itself on the CPU, else a contiguous copy (``read``)
    or empty buffer. ``written`` ones are recorded in ``pairs`` to be copied back."""
    if tensor.device.type == "cpu":
        return tensor
    if read:
        host = tensor.detach().to("cpu", memory_format=torch.contiguous_format)
    else:
        host = torch.empty(tensor.shape, dtype=tensor.dtype)
    if written:
        pairs.append((tensor, host))
    return host


def _average_as_sum(op: dist.ReduceOp, tensors: Sequence[torch.Tensor], what: str) -> bool:
    """Gloo has no AVG; a SUM divided by the group size afterwards gives it for floating dtypes."""
    if op != dist.ReduceOp.AVG:
        return False
    for tensor in tensors:
        if not (tensor.is_floating_point() or tensor.is_complex()):
            raise ValueError(
                f"torch_dml {BACKEND_NAME}: {what} with ReduceOp.AVG needs floating-point tensors, got "
                f"{tensor.dtype}; reduce with ReduceOp.SUM and divide."
            )
    return True


def _future_of(work: Work) -> torch.futures.Future[list[torch.Tensor]]:
    """The work's future; Gloo's reduce-scatter works have none, so a thread waits for those."""
    try:
        return work.get_future()
    except RuntimeError:
        pass
    future: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future()

    def wait() -> None:
        try:
            work.wait()
        except Exception as error:  # noqa: BLE001 -- handed to whoever waits on the future
            future.set_exception(error)
        else:
            future.set_result([])

    threading.Thread(target=wait, name="torch_dml-dmlccl-wait", daemon=True).start()
    return future


class StagedWork(Work):
    """The Work of a staged collective: done when its future (Gloo's collective, then the copies back) is.
    ``_create_work_from_future``'s Work would do, but its ``wait()`` returns normally when the future
    failed, and a failed all-gather would leave its output unwritten without a word; this one raises the
    error, for Python callers and C++ ones (``wait_tensor``) alike. ``timeout`` is Gloo's to enforce: the
    inner collective fails at the group's timeout, and this future with it."""

    def __init__(self, future: torch.futures.Future[list[torch.Tensor]]) -> None:
        super().__init__()
        self._future = future
        self.sender: Work | None = None  # Gloo's receive from any source, which knows its sender

    def wait(self, timeout: timedelta | None = None) -> bool:
        self._future.wait()
        return True

    def get_future(self) -> torch.futures.Future[list[torch.Tensor]]:
        return self._future

    def is_completed(self) -> bool:
        return self._future.done()

    def _source_rank(self) -> int:
        if self.sender is None:
            raise RuntimeError(f"torch_dml {BACKEND_NAME}: only a receive from any source has a source rank")
        self.wait()
        return self.sender._source_rank()


class StagedProcessGroup(dist.ProcessGroup):
    """A process group whose collectives take dml tensors by way of host copies and an inner Gloo group."""

    def __init__(self, store: Store, rank: int, size: int, timeout: timedelta) -> None:
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        # Object collectives and barrier() pick their device from the backends registered here.
        self._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, self._gloo)

    def getBackendName(self) -> str:  # the name PyTorch's C++ trampoline looks up
        return BACKEND_NAME

    def _finish(
        self, work: Work, pairs: _Pairs, result: list[torch.Tensor], divide: list[torch.Tensor] | None = None
    ) -> Work:
        """Gloo's work, followed (on Gloo's thread, when it completes) by the division AVG needs and the
        copies back to the device. DDP waits on the future, never on the Work, so the copies cannot wait
        for ``wait()``."""
        if not pairs and not divide:
            return work
        return StagedWork(self._staged_future(work, pairs, result, divide))

    def _staged_future(
        self, work: Work, pairs: _Pairs, result: list[torch.Tensor], divide: list[torch.Tensor] | None
    ) -> torch.futures.Future[list[torch.Tensor]]:
        size = self.size()

        def copy_back(future: torch.futures.Future[list[torch.Tensor]]) -> list[torch.Tensor]:
            future.value()  # raises Gloo's error, if any
            for tensor in divide or ():
                tensor.div_(size)
            for device_tensor, host in pairs:
                device_tensor.copy_(host)
            return result

        return _future_of(work).then(copy_back)

    def _all_reduced(self, name: str, tensors: list[torch.Tensor], opts: Any, fresh_opts: Any) -> Work:
        """allreduce and allreduce_coalesced: every tensor staged both ways, AVG run as a sum."""
        pairs: _Pairs = []
        hosts = [_to_host(t, pairs, read=True, written=True) for t in tensors]
        average = _average_as_sum(opts.reduceOp, tensors, name)
        if average:
            opts = _with_sum(opts, fresh_opts)
        return self._finish(getattr(self._gloo, name)(hosts, opts), pairs, tensors, hosts if average else None)

    def allreduce(self, tensors: list[torch.Tensor], opts: AllreduceOptions) -> Work:
        return self._all_reduced("allreduce", tensors, opts, AllreduceOptions())

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: AllreduceCoalescedOptions) -> Work:
        return self._all_reduced("allreduce_coalesced", tensors, opts, AllreduceCoalescedOptions())

    def reduce(self, tensors: list[torch.Tensor], opts: ReduceOptions) -> Work:
        pairs: _Pairs = []
        root = self.rank() == opts.rootRank
        hosts = [_to_host(t, pairs, read=True, written=root) for t in tensors]
        average = _average_as_sum(opts.reduceOp, tensors, "reduce")
        if average:
            opts = _with_sum(opts, ReduceOptions())
        return self._finish(self._gloo.reduce(hosts, opts), pairs, tensors, hosts if average and root else None)

    def broadcast(self, tensors: list[torch.Tensor], opts: BroadcastOptions) -> Work:
        pairs: _Pairs = []
        root = self.rank() == opts.rootRank
        hosts = [_to_host(t, pairs, read=root, written=not root) for t in tensors]
        return self._finish(self._gloo.broadcast(hosts, opts), pairs, tensors)

    def _staged_allgather(
        self, gloo_call: Callable[..., Work], outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor],
        opts: AllgatherOptions,
    ) -> Work:
        """A list all-gather (plain or coalesced) on host copies: the inputs read, every output written."""
        pairs: _Pairs = []
        host_inputs = [_to_host(t, pairs, read=True, written=False) for t in inputs]
        host_outputs = [[_to_host(t, pairs, read=False, written=True) for t in row] for row in outputs]
        flat = [t for row in outputs for t in row]
        return self._finish(gloo_call(host_outputs, host_inputs, opts), pairs, flat)

    def allgather(
        self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: AllgatherOptions
    ) -> Work:
        return self._staged_allgather(self._gloo.allgather, outputs, inputs, opts)

    def all_gather_single(self, output: torch.Tensor, input: torch.Tensor, opts: AllgatherOptions) -> Work:
        pairs: _Pairs = []
        host_input = _to_host(input, pairs, read=True, written=False)
        host_output = _to_host(output, pairs, read=False, written=True)
        return self._finish(self._gloo._allgather_base(host_output, host_input, opts), pairs, [output])

    _allgather_base = all_gather_single

    def reduce_scatter(
        self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]], opts: ReduceScatterOptions
    ) -> Work:
        pairs: _Pairs = []
        host_inputs = [[_to_host(t, pairs, read=True, written=False) for t in row] for row in inputs]
        host_outputs = [_to_host(t, pairs, read=False, written=True) for t in outputs]
        average = _average_as_sum(opts.reduceOp, outputs, "reduce_scatter")
        if average:
            opts = _with_sum(opts, ReduceScatterOptions())
        work = self._gloo.reduce_scatter(host_outputs, host_inputs, opts)
        return self._finish(work, pairs, outputs, host_outputs if average else None)

    def reduce_scatter_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: ReduceScatterOptions
    ) -> Work:
        pairs: _Pairs = []
        host_input = _to_host(input, pairs, read=True, written=False)
        host_output = _to_host(output, pairs, read=False, written=True)
        average = _average_as_sum(opts.reduceOp, [output], "reduce_scatter_tensor")
        if average:
            opts = _with_sum(opts, ReduceScatterOptions())
        work = self._gloo._reduce_scatter_base(host_output, host_input, opts)
        return self._finish(work, pairs, [output], [host_output] if average else None)

    _reduce_scatter_base = reduce_scatter_single

    def allgather_coalesced(
        self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: AllgatherOptions
    ) -> Work:
        return self._staged_allgather(self._gloo.allgather_coalesced, outputs, inputs, opts)

    def all_gather_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: AllgatherOptions
    ) -> Work:
        """What the functional ``all_gather_into_tensor`` (DTensor's Shard -> Replicate) and
        ``_coalescing_manager`` reach: per dtype, one Gloo all-gather of the inputs packed end to end, each
        output then taking its columns of the ``(world, packed)`` result."""
        _check_coalesced("all_gather_into_tensor", outputs, inputs, self.size(), gathers=True)
        futures = []
        for indices in _by_dtype(inputs):
            host_input = _packed_on_host([inputs[i].reshape(-1) for i in indices], dim=0)
            host_output = torch.empty((self.size(), host_input.numel()), dtype=host_input.dtype)
            pairs = _column_pairs([outputs[i] for i in indices], host_output)
            work = self._gloo._allgather_base(host_output.view(-1), host_input, opts)
            futures.append(self._staged_future(work, pairs, [], None))
        return _joined(futures, outputs)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def reduce_scatter_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: ReduceScatterOptions
    ) -> Work:
        """The functional ``reduce_scatter_tensor`` and ``_coalescing_manager``'s: per dtype, the inputs'
        rank-major chunks laid side by side as ``(world, packed)`` and reduce-scattered by Gloo once."""
        _check_coalesced("reduce_scatter_tensor", outputs, inputs, self.size(), gathers=False)
        average = _average_as_sum(opts.reduceOp, outputs, "reduce_scatter_tensor")
        if average:
            opts = _with_sum(opts, ReduceScatterOptions())
        futures = []
        for indices in _by_dtype(inputs):
            host_input = _packed_on_host([inputs[i].reshape(self.size(), -1) for i in indices], dim=1)
            host_output = torch.empty(host_input.shape[1], dtype=host_input.dtype)
            pairs = _column_pairs([outputs[i] for i in indices], host_output.view(1, -1))
            work = self._gloo._reduce_scatter_base(host_output, host_input.view(-1), opts)
            futures.append(self._staged_future(work, pairs, [], [host_output] if average else None))
        return _joined(futures, outputs)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    def gather(self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: GatherOptions) -> Work:
        pairs: _Pairs = []
        host_inputs = [_to_host(t, pairs, read=True, written=False) for t in inputs]
        host_outputs = [[_to_host(t, pairs, read=False, written=True) for t in row] for row in outputs]
        flat = [t for row in outputs for t in row]
        return self._finish(self._gloo.gather(host_outputs, host_inputs, opts), pairs, flat)

    def scatter(self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]], opts: ScatterOptions) -> Work:
        pairs: _Pairs = []
        host_inputs = [[_to_host(t, pairs, read=True, written=False) for t in row] for row in inputs]
        host_outputs = [_to_host(t, pairs, read=False, written=True) for t in outputs]
        return self._finish(self._gloo.scatter(host_outputs, host_inputs, opts), pairs, outputs)

    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int],
        input_split_sizes: list[int],
        opts: AllToAllOptions,
    ) -> Work:
        pairs: _Pairs = []
        host_input = _to_host(input, pairs, read=True, written=False)
        host_output = _to_host(output, pairs, read=False, written=True)
        work = self._gloo.alltoall_base(host_output, host_input, output_split_sizes, input_split_sizes, opts)
        return self._finish(work, pairs, [output])

    alltoall_base = all_to_all_single

    def alltoall(self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: AllToAllOptions) -> Work:
        """Gloo has no list all-to-all; the lists packed end to end make one ``all_to_all_single`` with
        each tensor's element count as its split."""
        tensors = [*outputs, *inputs]
        if len({t.dtype for t in tensors}) > 1:
            raise ValueError(
                f"torch_dml {BACKEND_NAME}: all_to_all needs one dtype for every tensor, got "
                f"{sorted({str(t.dtype) for t in tensors})}; convert them, or call all_to_all_single per dtype"
            )
        if not all(t.is_contiguous() for t in outputs):
            raise ValueError(f"torch_dml {BACKEND_NAME}: all_to_all needs contiguous output tensors")
        host_input = _packed_on_host([t.reshape(-1) for t in inputs], dim=0)
        host_output = torch.empty(sum(t.numel() for t in outputs), dtype=host_input.dtype)
        pairs = _column_pairs(outputs, host_output.view(1, -1))
        work = self._gloo.alltoall_base(
            host_output, host_input, [t.numel() for t in outputs], [t.numel() for t in inputs], opts
        )
        return self._finish(work, pairs, outputs)

    def barrier(self, opts: BarrierOptions) -> Work:
        return self._gloo.barrier(opts)

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int) -> Work:
        pairs: _Pairs = []
        hosts = [_to_host(t, pairs, read=True, written=False) for t in tensors]
        return self._gloo.send(hosts, dst, tag)

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int) -> Work:
        pairs: _Pairs = []
        hosts = [_to_host(t, pairs, read=False, written=True) for t in tensors]
        return self._finish(self._gloo.recv(hosts, src, tag), pairs, tensors)

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int) -> Work:
        pairs: _Pairs = []
        hosts = [_to_host(t, pairs, read=False, written=True) for t in tensors]
        received = self._gloo.recv_anysource(hosts, tag)
        work = self._finish(received, pairs, tensors)
        if isinstance(work, StagedWork):
            work.sender = received  # dist.recv asks the Work which rank sent
        return work


def _with_sum(opts, fresh):  # type: ignore[no-untyped-def] -- the c10d options types share these fields
    """A copy of ``opts`` reducing with SUM (the options objects cannot be copied)."""
    for field in ("rootRank", "rootTensor", "timeout", "asyncOp"):
        if hasattr(opts, field) and hasattr(fresh, field):
            setattr(fresh, field, getattr(opts, field))
    fresh.reduceOp = dist.ReduceOp.SUM
    return fresh


def _check_coalesced(
    what: str, outputs: list[torch.Tensor], inputs: list[torch.Tensor], size: int, *, gathers: bool
) -> None:
    if len(outputs) != len(inputs):
        raise ValueError(f"torch_dml {BACKEND_NAME}: {what} (coalesced) got {len(outputs)} outputs for "
                         f"{len(inputs)} inputs")
    for output, input in zip(outputs, inputs, strict=True):
        small, large = (input, output) if gathers else (output, input)
        if large.numel() != small.numel() * size or output.dtype != input.dtype:
            raise ValueError(
                f"torch_dml {BACKEND_NAME}: {what} (coalesced) needs each output to hold "
                f"{'world size times' if gathers else '1 / world size of'} its input's elements, in its "
                f"dtype; got output {tuple(output.shape)} {output.dtype} for input {tuple(input.shape)} "
                f"{input.dtype} with world size {size}"
            )
        if not output.is_contiguous():
            raise ValueError(f"torch_dml {BACKEND_NAME}: {what} (coalesced) needs contiguous outputs; "
                             "pass a contiguous tensor and copy it into the view afterwards")


def _by_dtype(tensors: Sequence[torch.Tensor]) -> list[list[int]]:
    """Indices of ``tensors`` grouped by dtype, in first-seen order: one packed collective per group."""
    groups: dict[torch.dtype, list[int]] = {}
    for index, tensor in enumerate(tensors):
        groups.setdefault(tensor.dtype, []).append(index)
    return list(groups.values())


def _packed_on_host(parts: list[torch.Tensor], dim: int) -> torch.Tensor:
    """``parts`` joined along ``dim`` on their device when they share one (a single read back), then on the
    CPU, contiguous."""
    if len(parts) == 1:
        joined = parts[0]
    elif len({part.device for part in parts}) == 1:
        joined = torch.cat(parts, dim=dim)
    else:
        joined = torch.cat([part.cpu() for part in parts], dim=dim)
    return joined.detach().to("cpu", memory_format=torch.contiguous_format)


def _column_pairs(outputs: list[torch.Tensor], host: torch.Tensor) -> _Pairs:
    """Each output (contiguous, rank-major) viewed as ``(rows, n)``, paired with its ``n`` columns of the
    ``(rows, packed)`` host result."""
    pairs: _Pairs = []
    offset = 0
    rows = host.shape[0]
    for output in outputs:
        width = output.numel() // rows
        pairs.append((output.view(rows, width), host[:, offset : offset + width]))
        offset += width
    return pairs


def _joined(futures: list[torch.futures.Future[list[torch.Tensor]]], result: list[torch.Tensor]) -> Work:
    """One Work for several staged collectives, done when all of them (copies back included) are; it fails
    with the first one's error."""

    def finished(done: torch.futures.Future[list[torch.futures.Future[list[torch.Tensor]]]]) -> list[torch.Tensor]:
        for future in done.value():
            future.value()  # raises the first collective's error, if any
        return result

    return StagedWork(torch.futures.collect_all(futures).then(finished))


def _create(store: Store, rank: int, size: int, timeout: timedelta) -> StagedProcessGroup:
    return StagedProcessGroup(store, rank, size, timeout)


def register() -> None:
    """Makes ``dmlccl`` a c10d backend name and the default one for the dml device (what
    ``init_process_group()`` and ``init_process_group(device_id=...)`` use on a dml machine)."""
    if BACKEND_NAME.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND_NAME, _create, devices=[DEVICE_TYPE, "cpu"])
    _distributed_kernels.register()
