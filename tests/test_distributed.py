"""torch.distributed on dml: the ``dmlccl`` backend's collectives, DDP, the functional collectives, DTensor
and FSDP2, across two real processes.

Two groups of two processes start once each for the module (tests/distributed_worker.py: collectives and
DDP; tests/distributed_sharded_worker.py: functional collectives, DTensor, FSDP2); each test checks one
part of what they recorded. A process that fails or outlives the deadline takes the other one down with it, so a
broken collective fails the suite instead of hanging it.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
from distributed_sharded_worker import block_and_batch, uneven_model_and_batch
from distributed_worker import model_and_batch, train

WORLD = 2
DEADLINE_S = 150
WORKER = Path(__file__).with_name("distributed_worker.py")
SHARDED_WORKER = Path(__file__).with_name("distributed_sharded_worker.py")
ROOT = Path(__file__).parents[1]

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="this torch was built without torch.distributed")


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        process.wait(timeout=30)


def _run_group(directory: Path, worker: Path) -> list[dict[str, Any]]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # for benchmarks.zoo
    environment = dict(
        os.environ, TORCH_DML_FALLBACK_WARN="0", PYTHONWARNINGS="ignore::FutureWarning", PYTHONPATH=path
    )
    logs = [directory / f"rank{rank}.log" for rank in range(WORLD)]
    processes = []
    try:
        for rank in range(WORLD):
            with logs[rank].open("wb") as log:
                processes.append(
                    subprocess.Popen(
                        [sys.executable, str(worker), str(rank), str(WORLD), str(directory)],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=environment,
                    )
                )
        deadline = time.monotonic() + DEADLINE_S
        while any(p.poll() is None for p in processes):
            if any(p.returncode not in (None, 0) for p in processes) or time.monotonic() > deadline:
                break  # a rank died or the group hangs: the survivors would wait on it until Gloo's timeout
            time.sleep(0.1)
    finally:
        _stop(processes)
    if any(p.returncode != 0 for p in processes):
        report = "\n".join(f"--- rank {r} (exit {p.returncode}) ---\n{logs[r].read_text(errors='replace')[-4000:]}"
                           for r, p in enumerate(processes))
        pytest.fail(f"the two-process group failed or passed the {DEADLINE_S} s deadline:\n{report}")
    return [torch.load(directory / f"rank{rank}.pt", weights_only=False) for rank in range(WORLD)]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return _run_group(tmp_path_factory.mktemp("distributed"), WORKER)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return _run_group(tmp_path_factory.mktemp("distributed_sharded"), SHARDED_WORKER)


def _inputs(rank: int) -> torch.Tensor:
    """What each rank's collectives start from (tests/distributed_worker.py ``collectives``)."""
    return torch.arange(6, dtype=torch.float32) + 10 * rank


SUM = _inputs(0) + _inputs(1)


def test_backend_is_registered_for_the_dml_device():
    assert dist.Backend.default_device_backend_map["dml"] == "dmlccl"
    assert set(dist.Backend.backend_capability["dmlccl"]) == {"dml", "cpu"}


def _one_process_with_the_whole_batch(build: Any = model_and_batch) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    model, inputs, targets = build()
    reference = copy.deepcopy(model).to("dml")
    train(reference, inputs.to("dml"), targets.to("dml"))
    return [p.detach().cpu() for p in reference.parameters()], [p.detach() for p in model.parameters()]


def _assert_trained_like_one_process(
    ranks: list[dict[str, Any]], key: str, build: Any = model_and_batch, tolerance: float = 1e-6
) -> None:
    expected, untrained = _one_process_with_the_whole_batch(build)
    for result in ranks:
        assert len(result[key]) == len(expected)
        for actual, want, before in zip(result[key], expected, untrained, strict=True):
            assert not torch.equal(actual, before)
            torch.testing.assert_close(actual, want, rtol=10 * tolerance, atol=tolerance)


@pytest.mark.parametrize("key", ["ddp", "ddp_python_hook"])
def test_ddp_two_processes_train_to_the_parameters_of_one_with_the_whole_batch(ranks, key):
    _assert_trained_like_one_process(ranks, key)


@pytest.mark.parametrize("key", ["fsdp2_mlp_reshard", "fsdp2_mlp_no_reshard", "fsdp2_mlp_hsdp"])
def test_fsdp2_two_processes_train_to_the_parameters_of_one_with_the_whole_batch(sharded, key):
    """``reshard_after_forward`` True and False, and HSDP on a (1, 2) mesh; the parameters gathered by
    ``full_tensor()``."""
    _assert_trained_like_one_process(sharded, key)
    if key == "fsdp2_mlp_hsdp":
        assert all(result["sub_group_backend"] == "dmlccl" for result in sharded)


def test_fsdp2_trains_the_model_zoo_gpt_block_like_one_process(sharded):
    _assert_trained_like_one_process(sharded, "fsdp2_gpt_block", block_and_batch)


def test_fsdp2_pads_a_dimension_the_world_size_does_not_divide(sharded):
    _assert_trained_like_one_process(sharded, "fsdp2_uneven", uneven_model_and_batch)


def test_fsdp2_bfloat16_parameters_train_near_one_float32_process(sharded):
    """Forward and backward in bfloat16 (8 significant bits), optimizer steps on float32 shards."""
    _assert_trained_like_one_process(sharded, "fsdp2_bfloat16", tolerance=2e-3)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("all_reduce_sum", SUM),
        ("all_reduce_avg", SUM / 2),
        ("all_reduce_max_int64", _inputs(0).to(torch.int64)),
        ("all_reduce_float16", SUM.to(torch.float16)),
        ("all_reduce_transposed", SUM.reshape(2, 3)),
        ("async_future_value", SUM),
        ("async_tensor", SUM),
        ("broadcast_from_1", _inputs(1)),
        ("all_gather_into_tensor", torch.cat([_inputs(0), _inputs(1)])),
        ("all_reduce_cpu", SUM),
    ],
)
def test_collective_gives_the_same_result_on_every_rank(ranks, key, expected):
    for result in ranks:
        torch.testing.assert_close(result[key], expected, rtol=0, atol=0)


def test_list_collectives(ranks):
    for result in ranks:
        torch.testing.assert_close(result["all_reduce_coalesced"], [SUM, SUM[:2] * 2])
        torch.testing.assert_close(result["all_gather"], [_inputs(0), _inputs(1)])
        assert result["all_gather_object"] == [{"rank": 0}, {"rank": 1}]


def test_rooted_collectives(ranks):
    rank0, rank1 = ranks
    torch.testing.assert_close(rank0["reduce_to_0"], SUM)
    torch.testing.assert_close(rank0["gather_to_0"], [_inputs(0), _inputs(1)])
    assert rank1["gather_to_0"] is None
    torch.testing.assert_close(rank0["scatter_from_0"], _inputs(0)[:3])
    torch.testing.assert_close(rank1["scatter_from_0"], _inputs(0)[3:])
    torch.testing.assert_close(rank1["recv_from_0"], _inputs(0) * 3)


def test_scattering_collectives_give_each_rank_its_part(ranks):
    for rank, result in enumerate(ranks):
        part = slice(3 * rank, 3 * rank + 3)
        torch.testing.assert_close(result["reduce_scatter"], SUM[part])
        torch.testing.assert_close(result["reduce_scatter_tensor"], SUM[part])
        torch.testing.assert_close(result["reduce_scatter_tensor_avg"], SUM[part] / 2)
        torch.testing.assert_close(result["all_to_all_single"], torch.cat([_inputs(0)[part], _inputs(1)[part]]))


def test_async_work_future_holds_the_device_tensors(ranks):
    for result in ranks:
        assert result["async_future_devices"] == ["dml"]


def test_average_of_integers_is_refused_with_a_way_out(ranks):
    for result in ranks:
        message = result["all_reduce_avg_int_error"]
        assert "ReduceOp.AVG" in message and "torch.int32" in message and "ReduceOp.SUM" in message


def test_all_to_all_with_lists(ranks):
    for rank, result in enumerate(ranks):
        part = slice(3 * rank, 3 * rank + 3)
        torch.testing.assert_close(result["all_to_all"], [_inputs(0)[part], _inputs(1)[part]])


@pytest.mark.parametrize("label", ["mixed", "default"])
def test_other_ways_of_naming_the_backend(ranks, label):
    """``cpu:gloo,dml:dmlccl``, and ``init_process_group()`` with no backend on a dml machine."""
    for result in ranks:
        assert result[label]["backend"] == "dmlccl"
        torch.testing.assert_close(result[label]["dml"], torch.full((4,), 3.0))
        torch.testing.assert_close(result[label]["cpu"], torch.full((4,), 3.0))
    assert ranks[0]["backend"] == "dmlccl"


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("all_gather_into_tensor", torch.cat([_inputs(0), _inputs(1)])),
        ("all_reduce", SUM),
        ("broadcast", _inputs(1)),
        ("funcol_all_gather_tensor", torch.cat([_inputs(0).reshape(2, 3), _inputs(1).reshape(2, 3)], dim=1)),
    ],
)
def test_functional_collective_gives_the_same_result_on_every_rank(sharded, key, expected):
    """The ``_c10d_functional`` ops, which reach the group from C++; read after ``wait_tensor``."""
    for result in sharded:
        torch.testing.assert_close(result[key], expected, rtol=0, atol=0)


def test_functional_collectives_in_a_compiled_function(sharded):
    x = [torch.arange(4, dtype=torch.float32) + 10 * rank for rank in range(WORLD)]
    expected = (torch.cat([2 * (x[0] + x[1])] * WORLD) + 1) * 3
    for result in sharded:
        torch.testing.assert_close(result["compiled"], expected)


def test_functional_collectives_coalesced_and_scattering(sharded):
    gathered = torch.cat([_inputs(0), _inputs(1)])
    for rank, result in enumerate(sharded):
        part = slice(3 * rank, 3 * rank + 3)
        torch.testing.assert_close(result["reduce_scatter_tensor"], SUM[part])
        torch.testing.assert_close(result["reduce_scatter_tensor_avg"], SUM[part] / 2)
        torch.testing.assert_close(
            result["all_gather_into_tensor_coalesced"],
            [gathered, (gathered * 2).to(torch.int32), torch.cat([_inputs(0)[:2], _inputs(1)[:2]])],
        )
        torch.testing.assert_close(result["reduce_scatter_tensor_coalesced"], [SUM[part], SUM[part] * 2])


def test_coalescing_manager_gathers_and_scatters_in_one_collective(sharded):
    for rank, result in enumerate(sharded):
        torch.testing.assert_close(
            result["coalescing_manager_all_gather"],
            [torch.cat([_inputs(0), _inputs(1)]), torch.cat([_inputs(0)[:2], _inputs(1)[:2]])],
        )
        torch.testing.assert_close(
            result["coalescing_manager_reduce_scatter"], [SUM[3 * rank : 3 * rank + 3], SUM[rank : rank + 1]]
        )
        message = result["coalesced_wrong_size_error"]
        assert "all_gather_into_tensor" in message and "(5,)" in message and "(6,)" in message


def test_dtensor_on_a_dml_device_mesh(sharded):
    """distribute_tensor scatters rank 0's data (each rank starts from its own); full_tensor() and each
    redistribution give every rank its part of it."""
    whole = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    for rank, result in enumerate(sharded):
        assert result["mesh_device_type"] == "dml" and result["shard0_device"] == "dml"
        torch.testing.assert_close(result["shard0_local"], whole.chunk(WORLD)[rank], rtol=0, atol=0)
        for key in ("shard0_full_tensor", "shard0_to_replicate"):
            torch.testing.assert_close(result[key], whole, rtol=0, atol=0)
        for key in ("shard0_to_shard1", "replicate_to_shard1"):
            torch.testing.assert_close(result[key], whole.chunk(WORLD, dim=1)[rank], rtol=0, atol=0)
        torch.testing.assert_close(result["partial_to_replicate"], torch.full((2, 3), 3.0))
        torch.testing.assert_close(result["uneven_full_tensor"], torch.arange(15.0).reshape(5, 3), rtol=0, atol=0)
        torch.testing.assert_close(result["matmul_full_tensor"], whole @ whole.t())


def test_c10d_ops_called_directly_reach_the_staged_group(sharded):
    """``torch.ops.c10d.*`` (what C++ callers of the methods PyTorch does not forward to Python reach):
    PyTorch's own PrivateUse1 kernels fail there with "No backend type associated with device type dml"."""
    gathered = torch.cat([_inputs(0), _inputs(1)])
    for rank, result in enumerate(sharded):
        part = slice(3 * rank, 3 * rank + 3)
        torch.testing.assert_close(result["c10d_allgather_base"], gathered)
        torch.testing.assert_close(result["c10d_reduce_scatter_base"], SUM[part])
        torch.testing.assert_close(
            result["c10d_allgather_into_tensor_coalesced"],
            [gathered * 2, torch.cat([_inputs(0)[:2], _inputs(1)[:2]])],
        )
        torch.testing.assert_close(
            result["c10d_reduce_scatter_tensor_coalesced"], [SUM[part], SUM[rank : rank + 1]]
        )
        torch.testing.assert_close(result["c10d_allreduce"], SUM)
    torch.testing.assert_close(sharded[0]["c10d_gather"], [_inputs(0), _inputs(1)])
    assert sharded[1]["c10d_gather"] is None
    torch.testing.assert_close(sharded[1]["c10d_recv_any_source"], _inputs(0) * 6)
    for result in sharded:  # dist.all_to_all checks dtypes itself; the op does not
        message = result["c10d_alltoall_mixed_dtypes_error"]
        assert "all_to_all" in message and "torch.int32" in message and "all_to_all_single" in message


def test_replacing_the_c10d_kernels_warns_nothing_at_import():
    completed = subprocess.run(
        [sys.executable, "-W", "always", "-c", "import torch_dml.distributed"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "Overriding" not in completed.stderr


def test_c10d_ops_of_another_group_go_to_its_dml_backend():
    """A plain ProcessGroup whose dml backend is Gloo: the replaced kernels hand the op to that backend, as
    PyTorch's did, and Gloo's own refusal of a dml tensor comes back."""
    script = """
import torch, torch.distributed as dist, torch_dml
store = dist.HashStore()
group = dist.ProcessGroup(store, 0, 1)
gloo = dist.ProcessGroupGloo(store, 0, 1)
group._register_backend(torch.device("dml"), dist.ProcessGroup.BackendType.GLOO, gloo)
x = torch.ones(2, device="dml")
try:
    torch.ops.c10d._allgather_base_(torch.empty(2, device="dml"), x, group.boxed(), True, -1)
except Exception as error:
    print(type(error).__name__, error)
"""
    completed = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "No backend type" not in completed.stdout and "Gloo" in completed.stdout, completed.stdout


def test_a_failed_staged_collective_raises_from_wait():
    """A Gloo failure must not leave ``wait()`` (and ``wait_tensor``) returning over an unwritten output."""
    from torch_dml.distributed import StagedWork, _joined

    failing: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future()
    work = _joined([failing.then(lambda done: done.value())], [])
    failing.set_exception(RuntimeError("gloo timed out"))
    with pytest.raises(RuntimeError, match="gloo timed out"):
        work.wait()
    with pytest.raises(RuntimeError, match="gloo timed out"):
        work.get_future().value()

    done: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future()
    work = StagedWork(done)
    assert not work.is_completed()
    done.set_result([torch.ones(1)])
    assert work.wait() and work.is_completed()
