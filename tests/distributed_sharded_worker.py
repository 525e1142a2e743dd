"""One process of the two that tests/test_distributed.py starts for sharded training:
``python distributed_sharded_worker.py RANK WORLD DIR``.

The functional collectives (what DTensor and ``torch.compile`` call, from C++), DTensor on a dml
DeviceMesh, and FSDP2 (``fully_shard``) training, in one launch like distributed_worker.py's. Results go to
``DIR/rank<RANK>.pt``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch_dml
from distributed_worker import TIMEOUT, model_and_batch, on_dml, train
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

from benchmarks.zoo import TransformerBlock  # the repository root is on the path: tests/test_distributed.py

BLOCK_DIM = 32


def block_and_batch() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The model zoo's GPT block (causal attention, LayerNorm, GELU MLP) and a batch of 4 sequences."""
    generator = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    block = TransformerBlock(BLOCK_DIM, 4, causal=True)
    inputs = torch.randn(4, 8, BLOCK_DIM, generator=generator)
    targets = torch.randn(4, 8, BLOCK_DIM, generator=generator)
    return block, inputs, targets


def uneven_model_and_batch() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """model_and_batch's batch through 15 hidden units: FSDP2 shards those rows 8 + 7 and pads the second."""
    _, inputs, targets = model_and_batch()
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(6, 15), torch.nn.Tanh(), torch.nn.Linear(15, 2))
    return model, inputs, targets


def functional_collectives(rank: int, world: int) -> dict[str, Any]:
    """The ``_c10d_functional`` ops straight, each result read after ``wait_tensor`` (which must have
    waited for the copy back to the device), and ``_coalescing_manager``'s coalesced collectives."""
    out: dict[str, Any] = {}
    ops = torch.ops._c10d_functional
    name = dist.group.WORLD.group_name
    base = on_dml(torch.arange(6, dtype=torch.float32) + 10 * rank)

    out["all_gather_into_tensor"] = ops.wait_tensor(ops.all_gather_into_tensor(base, world, name)).cpu()
    out["reduce_scatter_tensor"] = ops.wait_tensor(ops.reduce_scatter_tensor(base, "sum", world, name)).cpu()
    out["reduce_scatter_tensor_avg"] = ops.wait_tensor(ops.reduce_scatter_tensor(base, "avg", world, name)).cpu()
    out["all_reduce"] = ops.wait_tensor(ops.all_reduce(base, "sum", name)).cpu()
    out["broadcast"] = ops.wait_tensor(ops.broadcast(base, 1, name)).cpu()
    mixed = [base, (base * 2).to(torch.int32), base[:2]]  # two dtypes: two packed collectives
    out["all_gather_into_tensor_coalesced"] = [
        ops.wait_tensor(t).cpu() for t in ops.all_gather_into_tensor_coalesced(mixed, world, name)
    ]
    out["reduce_scatter_tensor_coalesced"] = [
        ops.wait_tensor(t).cpu() for t in ops.reduce_scatter_tensor_coalesced([base, base * 2], "sum", world, name)
    ]
    out["funcol_all_gather_tensor"] = funcol.all_gather_tensor(base.reshape(2, 3), 1, dist.group.WORLD).cpu()

    gathered, gathered_pair = torch.empty(12, device="dml"), torch.empty(4, device="dml")
    with dist._coalescing_manager(async_ops=True) as manager:
        dist.all_gather_into_tensor(gathered, base)
        dist.all_gather_into_tensor(gathered_pair, base[:2])
    manager.wait()
    out["coalescing_manager_all_gather"] = [gathered.cpu(), gathered_pair.cpu()]

    pieces, pair = torch.empty(3, device="dml"), torch.empty(1, device="dml")
    with dist._coalescing_manager():
        dist.reduce_scatter_tensor(pieces, base)
        dist.reduce_scatter_tensor(pair, base[:2])
    out["coalescing_manager_reduce_scatter"] = [pieces.cpu(), pair.cpu()]

    try:  # every rank makes the same mistake, so none is left waiting
        with dist._coalescing_manager():
            dist.all_gather_into_tensor(torch.empty(5, device="dml"), base)
    except ValueError as error:
        out["coalesced_wrong_size_error"] = str(error)
    return out


def compiled_collectives(rank: int) -> torch.Tensor:
    """Functional collectives inside a ``torch.compile``d function: the graph calls the same ops."""

    def step(x: torch.Tensor) -> torch.Tensor:
        summed = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
        return funcol.all_gather_tensor(summed + 1, 0, dist.group.WORLD) * 3

    return torch.compile(step)(on_dml(torch.arange(4, dtype=torch.float32) + 10 * rank)).cpu()


def c10d_ops(rank: int, world: int) -> dict[str, Any]:
    """``torch.ops.c10d.*`` called straight (as C++ callers of the methods PyTorch's trampoline does not
    forward do): the dispatcher's PrivateUse1 kernels must find the staged group."""
    out: dict[str, Any] = {}
    ops, group = torch.ops.c10d, dist.group.WORLD.boxed()
    base = on_dml(torch.arange(6, dtype=torch.float32) + 10 * rank)
    total = torch.classes.c10d.ReduceOp()  # SUM; a boxed ReduceOp cannot be given another op from Python

    gathered = torch.empty(6 * world, device="dml")
    ops._allgather_base_(gathered, base, group, True, -1)[1].wait()
    out["c10d_allgather_base"] = gathered.cpu()
    pieces = torch.empty(3, device="dml")
    ops._reduce_scatter_base_(pieces, base, group, total, True, -1)[1].wait()
    out["c10d_reduce_scatter_base"] = pieces.cpu()
    gathered_pair = torch.empty(4, device="dml")
    ops.allgather_into_tensor_coalesced_([gathered, gathered_pair], [base * 2, base[:2]], group, True).wait()
    out["c10d_allgather_into_tensor_coalesced"] = [gathered.cpu(), gathered_pair.cpu()]
    pair = torch.empty(1, device="dml")
    ops.reduce_scatter_tensor_coalesced_([pieces, pair], [base, base[:2]], group, total, True, -1).wait()
    out["c10d_reduce_scatter_tensor_coalesced"] = [pieces.cpu(), pair.cpu()]
    summed = base.clone()
    ops.allreduce_([summed], group, total, None, True, -1)[1].wait()
    out["c10d_allreduce"] = summed.cpu()
    targets = [[torch.empty(6, device="dml") for _ in range(world)]] if rank == 0 else []
    ops.gather_(targets, [base], group, 0, True, -1).wait()  # not forwarded by the trampoline
    out["c10d_gather"] = [t.cpu() for t in targets[0]] if targets else None
    try:
        ops.alltoall_([torch.empty(3, device="dml")] * world, [base[:3], base[3:].int()], group, True, -1)
    except ValueError as error:
        out["c10d_alltoall_mixed_dtypes_error"] = str(error)
    if rank == 0:
        ops.send([base * 6], group, 1, 0).wait()
    else:
        received = torch.empty(6, device="dml")
        ops.recv_any_source_([received], group, 0).wait()
        out["c10d_recv_any_source"] = received.cpu()
    ops.barrier(torch.empty(0, device="dml"), group, [], True, -1).wait()
    return out


def dtensors(rank: int, world: int) -> dict[str, Any]:
    """DTensor on ``init_device_mesh("dml", ...)``. Each rank starts from different data: distribute_tensor
    must take rank 0's."""
    out: dict[str, Any] = {}
    mesh = init_device_mesh("dml", (world,))
    out["mesh_device_type"] = mesh.device_type
    whole = on_dml(torch.arange(24, dtype=torch.float32).reshape(4, 6) + 100 * rank)

    rows = distribute_tensor(whole, mesh, [Shard(0)])
    out["shard0_local"] = rows.to_local().cpu()
    out["shard0_device"] = rows.to_local().device.type
    out["shard0_full_tensor"] = rows.full_tensor().cpu()
    out["shard0_to_replicate"] = rows.redistribute(mesh, [Replicate()]).to_local().cpu()
    out["shard0_to_shard1"] = rows.redistribute(mesh, [Shard(1)]).to_local().cpu()
    replicated = distribute_tensor(whole, mesh, [Replicate()])
    out["replicate_to_shard1"] = replicated.redistribute(mesh, [Shard(1)]).to_local().cpu()
    partial = DTensor.from_local(on_dml(torch.full((2, 3), float(rank + 1))), mesh, [Partial()])
    out["partial_to_replicate"] = partial.redistribute(mesh, [Replicate()]).to_local().cpu()
    uneven = distribute_tensor(on_dml(torch.arange(15.0).reshape(5, 3) + 100 * rank), mesh, [Shard(0)])
    out["uneven_full_tensor"] = uneven.full_tensor().cpu()
    out["matmul_full_tensor"] = (rows @ distribute_tensor(whole.t(), mesh, [Replicate()])).full_tensor().cpu()
    return out


def train_fsdp2(
    mesh: DeviceMesh,
    build: Any,
    wrapped: tuple[str, ...],
    rank: int,
    world: int,
    reshard_after_forward: bool,
    precision: MixedPrecisionPolicy | None = None,
) -> list[torch.Tensor]:
    """``build()``'s model sharded with ``fully_shard`` (each submodule named in ``wrapped``, then the
    root), trained on this rank's share of the batch; the parameters come back whole by ``full_tensor()``."""
    model, inputs, targets = build()
    model = model.to("dml")
    options = {"mesh": mesh, "reshard_after_forward": reshard_after_forward,
               "mp_policy": precision or MixedPrecisionPolicy()}
    for name in wrapped:
        fully_shard(model.get_submodule(name), **options)
    fully_shard(model, **options)
    share = len(inputs) // world
    rows = slice(rank * share, (rank + 1) * share)
    train(model, inputs[rows].to("dml"), targets[rows].to("dml"))
    return [parameter.full_tensor().cpu() for parameter in model.parameters()]


def fsdp2(rank: int, world: int) -> dict[str, Any]:
    mesh = init_device_mesh("dml", (world,))
    # HSDP's 2-D mesh: its dimensions are sub-groups, each a further dmlccl group.
    hybrid = init_device_mesh("dml", (1, world), mesh_dim_names=("replicate", "shard"))
    return {
        "fsdp2_mlp_reshard": train_fsdp2(mesh, model_and_batch, ("0", "2"), rank, world, True),
        "fsdp2_mlp_no_reshard": train_fsdp2(mesh, model_and_batch, ("0", "2"), rank, world, False),
        "fsdp2_mlp_hsdp": train_fsdp2(hybrid, model_and_batch, ("0", "2"), rank, world, True),
        "fsdp2_gpt_block": train_fsdp2(mesh, block_and_batch, ("attention", "mlp"), rank, world, True),
        "fsdp2_uneven": train_fsdp2(mesh, uneven_model_and_batch, ("0", "2"), rank, world, True),
        # bfloat16 parameters all-gathered and bfloat16 gradients reduce-scattered
        "fsdp2_bfloat16": train_fsdp2(mesh, model_and_batch, ("0", "2"), rank, world, True,
                                      MixedPrecisionPolicy(param_dtype=torch.bfloat16)),
        "sub_group_backend": hybrid["shard"].get_group()._get_backend_name(),
    }


def main(rank: int, world: int, directory: Path) -> None:
    assert torch_dml.is_available()
    dist.init_process_group(
        "dmlccl", init_method=f"file://{directory / 'dmlccl'}", rank=rank, world_size=world, timeout=TIMEOUT
    )
    results: dict[str, Any] = {}
    results.update(functional_collectives(rank, world))
    results.update(c10d_ops(rank, world))
    results["compiled"] = compiled_collectives(rank)
    results.update(dtensors(rank, world))
    results.update(fsdp2(rank, world))
    dist.destroy_process_group()
    torch.save(results, directory / f"rank{rank}.pt")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
