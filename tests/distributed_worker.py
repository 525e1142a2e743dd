"""One process of the two that tests/test_distributed.py starts: ``python distributed_worker.py RANK WORLD DIR``.

Everything a group needs to show runs in one launch (starting torch twice per test would take most of the
suite's time on a two-core runner): the collectives, DDP training, then the other ways of naming the
backend. ``distributed_sharded_worker.py`` does the same for DTensor and FSDP2. Results go to
``DIR/rank<RANK>.pt`` for the test process to check.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch_dml
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

TIMEOUT = timedelta(seconds=60)
DDP_STEPS = 3


def model_and_batch() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The same model and batch in every process (and in the test's single-process reference)."""
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    inputs = torch.randn(8, 6, generator=generator)
    targets = torch.randn(8, 2, generator=generator)
    return model, inputs, targets


def train(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(DDP_STEPS):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()


def train_ddp(rank: int, world: int, hook: bool) -> list[torch.Tensor]:
    model, inputs, targets = model_and_batch()
    model = model.to("dml")
    ddp = DistributedDataParallel(model)
    if hook:  # a Python comm hook chains on Work.get_future(); the default C++ one does too
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    share = len(inputs) // world
    rows = slice(rank * share, (rank + 1) * share)
    train(ddp, inputs[rows].to("dml"), targets[rows].to("dml"))
    return [p.detach().cpu() for p in model.parameters()]


def on_dml(values: torch.Tensor) -> torch.Tensor:
    return values.to("dml")


def collectives(rank: int, world: int) -> dict[str, Any]:
    """Each collective on dml tensors whose values depend on the rank; the test knows what they must be."""
    out: dict[str, Any] = {}
    base = torch.arange(6, dtype=torch.float32) + 10 * rank

    x = on_dml(base)
    dist.all_reduce(x)
    out["all_reduce_sum"] = x.cpu()

    x = on_dml(base)
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    out["all_reduce_avg"] = x.cpu()

    x = on_dml(base.to(torch.int64) * (1 - 2 * rank))
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    out["all_reduce_max_int64"] = x.cpu()

    x = on_dml(base.to(torch.float16))
    dist.all_reduce(x)
    out["all_reduce_float16"] = x.cpu()

    try:
        dist.all_reduce(on_dml(base.to(torch.int32)), op=dist.ReduceOp.AVG)
    except ValueError as error:
        out["all_reduce_avg_int_error"] = str(error)

    matrix = on_dml(base.reshape(2, 3))
    dist.all_reduce(matrix.t())  # a non-contiguous view: the result must land in its base's storage
    out["all_reduce_transposed"] = matrix.cpu()

    work = dist.all_reduce(x := on_dml(base), async_op=True)
    value = work.get_future().wait()
    out["async_future_devices"] = [t.device.type for t in value]
    out["async_future_value"] = value[0].cpu()
    work.wait()
    out["async_tensor"] = x.cpu()

    a, b = on_dml(base), on_dml(base[:2] * 2)
    dist.all_reduce_coalesced([a, b])
    out["all_reduce_coalesced"] = [a.cpu(), b.cpu()]

    x = on_dml(base)
    dist.broadcast(x, src=1)
    out["broadcast_from_1"] = x.cpu()

    x = on_dml(base)
    dist.reduce(x, dst=0)
    out["reduce_to_0"] = x.cpu()

    gathered = [torch.empty(6, device="dml") for _ in range(world)]
    dist.all_gather(gathered, on_dml(base))
    out["all_gather"] = [t.cpu() for t in gathered]

    flat = torch.empty(6 * world, device="dml")
    dist.all_gather_into_tensor(flat, on_dml(base))
    out["all_gather_into_tensor"] = flat.cpu()

    pieces = torch.empty(3, device="dml")
    dist.reduce_scatter(pieces, list(on_dml(base).chunk(world)))
    out["reduce_scatter"] = pieces.cpu()

    pieces = torch.empty(3, device="dml")
    dist.reduce_scatter_tensor(pieces, on_dml(base))
    out["reduce_scatter_tensor"] = pieces.cpu()

    pieces = torch.empty(3, device="dml")
    dist.reduce_scatter_tensor(pieces, on_dml(base), op=dist.ReduceOp.AVG)
    out["reduce_scatter_tensor_avg"] = pieces.cpu()

    targets = [torch.empty(6, device="dml") for _ in range(world)] if rank == 0 else None
    dist.gather(on_dml(base), targets, dst=0)
    out["gather_to_0"] = [t.cpu() for t in targets] if targets else None

    piece = torch.empty(3, device="dml")
    dist.scatter(piece, list(on_dml(base).chunk(world)) if rank == 0 else None, src=0)
    out["scatter_from_0"] = piece.cpu()

    exchanged = torch.empty(6, device="dml")
    dist.all_to_all_single(exchanged, on_dml(base))
    out["all_to_all_single"] = exchanged.cpu()

    if rank == 0:
        dist.send(on_dml(base * 3), dst=1)
    else:
        received = torch.empty(6, device="dml")
        dist.recv(received, src=0)
        out["recv_from_0"] = received.cpu()

    if rank == 0:
        dist.send(on_dml(base * 4), dst=1)
    else:
        received = torch.empty(6, device="dml")
        out["recv_any_source_sender"] = dist.recv(received)  # no src: Gloo's receive from any source
        out["recv_any_source"] = received.cpu()

    received_parts = [torch.empty(3, device="dml") for _ in range(world)]
    dist.all_to_all(received_parts, list(on_dml(base).chunk(world)))
    out["all_to_all"] = [t.cpu() for t in received_parts]

    host = base.clone()
    dist.all_reduce(host)  # CPU tensors go to Gloo untouched
    out["all_reduce_cpu"] = host

    objects: list[Any] = [None] * world
    dist.all_gather_object(objects, {"rank": rank})
    out["all_gather_object"] = objects

    if rank == 0:  # StagedProcessGroup is no plain ProcessGroup: PyTorch issues these one by one
        requests = dist.batch_isend_irecv([dist.P2POp(dist.isend, on_dml(base * 5), 1)])
    else:
        received = torch.empty(6, device="dml")
        requests = dist.batch_isend_irecv([dist.P2POp(dist.irecv, received, 0)])
    for request in requests:
        request.wait()
    if rank == 1:
        out["batch_isend_irecv_from_0"] = received.cpu()

    dist.barrier()
    return out


def other_backend_names(rank: int, world: int, directory: Path) -> dict[str, Any]:
    """``cpu:gloo,dml:dmlccl`` and no backend at all reach the same collectives."""
    out: dict[str, Any] = {}
    for label, backend in (("mixed", "cpu:gloo,dml:dmlccl"), ("default", None)):
        dist.init_process_group(
            backend, init_method=f"file://{directory / label}", rank=rank, world_size=world, timeout=TIMEOUT
        )
        x = on_dml(torch.full((4,), float(rank + 1)))
        dist.all_reduce(x)
        host = torch.full((4,), float(rank + 1))
        dist.all_reduce(host)
        out[label] = {"backend": dist.group.WORLD._get_backend_name(), "dml": x.cpu(), "cpu": host}
        dist.destroy_process_group()
    return out


def main(rank: int, world: int, directory: Path) -> None:
    assert torch_dml.is_available()
    dist.init_process_group(
        "dmlccl", init_method=f"file://{directory / 'dmlccl'}", rank=rank, world_size=world, timeout=TIMEOUT
    )
    results: dict[str, Any] = {"backend": dist.get_backend()}
    results.update(collectives(rank, world))
    results["ddp"] = train_ddp(rank, world, hook=False)
    results["ddp_python_hook"] = train_ddp(rank, world, hook=True)
    dist.destroy_process_group()
    results.update(other_backend_names(rank, world, directory))
    torch.save(results, directory / f"rank{rank}.pt")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
