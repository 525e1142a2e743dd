"""torch.multiprocessing and dml tensors: WebGPU buffers cannot be shared between processes, so sending
one fails at once with a message that says to move the tensor to the CPU, while CPU tensors still go
through torch's shared-memory path."""

import io
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest
import torch
import torch.multiprocessing as mp
import torch_dml  # noqa: F401


def _dump(obj: object) -> bytes:
    buffer = io.BytesIO()
    ForkingPickler(buffer).dump(obj)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.ones(3, 2, device="dml"),
        lambda: torch.nn.Parameter(torch.ones(2, device="dml")),
        lambda: torch.arange(10, device="dml")[2:5],
    ],
    ids=["tensor", "parameter", "view"],
)
def test_forking_pickler_refuses_a_dml_tensor_clearly(make):
    with pytest.raises(RuntimeError, match=r"cannot be shared between processes.*\.cpu\(\)") as raised:
        _dump(make())
    assert "dml tensor" in str(raised.value) and "dml:0" in str(raised.value)


def test_forking_pickler_refuses_dml_storages():
    x = torch.ones(4, device="dml")
    for storage in (x.untyped_storage(), x._typed_storage()):
        with pytest.raises(RuntimeError, match="dml storage .*cannot be shared between processes"):
            _dump(storage)


def test_cpu_tensors_still_use_torchs_shared_memory_reducer():
    x = torch.arange(6.0)
    restored = pickle.loads(_dump(x))
    assert torch.equal(restored, x) and restored.is_shared()


def test_spawned_process_argument_is_refused_before_the_child_starts():
    # spawn pickles the Process object in the parent before it starts the child, so this takes no
    # child start-up time and raises in the caller.
    context = mp.get_context("spawn")
    process = context.Process(target=print, args=(torch.ones(2, device="dml"),))
    with pytest.raises(RuntimeError, match=r"cannot be shared between processes.*\.cpu\(\)"):
        process.start()
    assert process.pid is None or process.exitcode is not None


def test_simple_queue_put_is_refused():
    queue = mp.get_context("spawn").SimpleQueue()
    with pytest.raises(RuntimeError, match="cannot be shared between processes"):
        queue.put(torch.zeros(1, device="dml"))
    queue.put(torch.zeros(1))  # CPU tensors still pass
    assert torch.equal(queue.get(), torch.zeros(1))
    queue.close()


def test_queue_put_reports_the_refusal_from_its_feeder_thread(capsys):
    # mp.Queue pickles in a background thread, so put() returns and the error is printed there (as for
    # any object that cannot be pickled); the printed error must still be the clear one.
    queue = mp.get_context("spawn").Queue()
    queue.put(torch.ones(2, device="dml"))
    queue.put(torch.arange(3.0))
    assert torch.equal(queue.get(timeout=10), torch.arange(3.0))  # the dml tensor never arrived
    queue.close()
    queue.join_thread()
    printed = capsys.readouterr().err
    assert "a dml tensor (shape [2], torch.float32, on dml:0) cannot be shared between processes" in printed
    assert "tensor.cpu()" in printed
