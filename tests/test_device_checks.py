"""Index checks recorded on the device (runtime/device_checks.h): an op that reads through an index
does not wait for the device to check it; a bad index raises IndexError, naming the op and the value,
at the next wait (`.item()`, `.cpu()`, `synchronize()`); ops that write into an existing tensor wait
and raise at the op, leaving it untouched; TORCH_DML_SYNC_CHECKS=1 makes every check raise at its op."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import run_python

pytestmark = pytest.mark.usefixtures("strict")


def submits() -> int:
    return torch_dml._C._stream_counters(0)[1]


def test_a_training_steps_index_checks_do_not_wait_for_the_device():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(50, 16), torch.nn.Flatten(), torch.nn.Linear(64, 10)).to("dml")
    tokens = torch.randint(0, 50, (8, 4)).to("dml")
    target = torch.randint(0, 10, (8,)).to("dml")
    torch_dml.synchronize()
    before, waits = submits(), torch_dml._C._wait_count(0)
    loss = F.cross_entropy(model(tokens), target)
    loss.backward()
    assert submits() == before  # before: each check read its bounds back, a submit and a wait apiece
    assert torch_dml._C._wait_count(0) == waits
    loss.item()
    assert torch_dml._C._wait_count(0) == waits + 1
    reference = F.cross_entropy(model.cpu()(tokens.cpu()), target.cpu())
    assert torch.allclose(loss.cpu(), reference, rtol=1e-5, atol=1e-6)


def test_a_bad_target_raises_at_the_next_wait_and_the_device_goes_on():
    x = torch.randn(4, 5, device="dml")
    loss = F.cross_entropy(x, torch.tensor([0, 7, 1, 2], device="dml"))  # no error yet
    with pytest.raises(IndexError, match=r"nll_loss on adapter .*Target 7 is out of bounds\..*next|first wait"):
        loss.item()
    good = torch.tensor([0, 4, 1, 2])
    assert torch.allclose(F.cross_entropy(x, good.to("dml")).cpu(), F.cross_entropy(x.cpu(), good), atol=1e-6)
    torch_dml.synchronize()  # the record was cleared: nothing left to raise


@pytest.mark.parametrize("wait", ["item", "cpu", "synchronize"])
def test_every_wait_raises_a_pending_failure(wait):
    table = torch.randn(6, 3, device="dml")
    rows = F.embedding(torch.tensor([1, 6], device="dml"), table)
    with pytest.raises(IndexError, match="index_select .*index 6 is out of range in self"):
        {"item": lambda: rows.sum().item(), "cpu": rows.cpu, "synchronize": torch_dml.synchronize}[wait]()


def test_the_first_failure_in_stream_order_is_raised_once():
    x = torch.arange(10, device="dml")
    torch.take(x, torch.tensor([-11], device="dml"))
    torch.take(x, torch.tensor([12], device="dml"))
    with pytest.raises(IndexError, match="index -11 is out of bounds for size 10"):
        torch_dml.synchronize()
    torch_dml.synchronize()


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("bad", [-1, 5, 2**40, -(2**40)])
def test_values_far_outside_the_range_are_reported_exactly(dtype, bad):
    if dtype == torch.int32 and abs(bad) > 2**31:
        pytest.skip("not an int32")
    x = torch.randn(5, 2, device="dml")
    index = torch.tensor([0, bad, 4], dtype=dtype, device="dml")
    with pytest.raises(IndexError, match=f"index {bad} is out of range in self"):
        torch.index_select(x, 0, index).cpu()


def test_ignore_index_is_allowed_outside_the_range():
    x = torch.randn(3, 4)
    target = torch.tensor([1, -100, 3])
    assert torch.allclose(F.cross_entropy(x.to("dml"), target.to("dml")).cpu(), F.cross_entropy(x, target), atol=1e-6)
    with pytest.raises(IndexError, match="Target -99 is out of bounds"):
        F.cross_entropy(x.to("dml"), torch.tensor([1, -99, 3], device="dml")).item()


def test_writes_into_a_tensor_raise_at_the_op_and_write_nothing():
    x = torch.zeros(4, 3, device="dml")
    with pytest.raises((IndexError, RuntimeError), match="index 4 is out of bounds"):
        x.scatter_(0, torch.tensor([[4, 0, 0]], device="dml"), 1.0)
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 0 with size 4"):
        x.index_add_(0, torch.tensor([9], device="dml"), torch.ones(1, 3, device="dml"))
    assert torch.equal(x.cpu(), torch.zeros(4, 3))


def test_checks_without_a_wait_stay_few():
    x = torch.randn(8, 2, device="dml")
    index = torch.tensor([1, 2], device="dml")
    for _ in range(1100):
        torch.index_select(x, 0, index)
    assert 0 < torch_dml._C._pending_device_checks(0) <= 1024
    torch_dml.synchronize()
    assert torch_dml._C._pending_device_checks(0) == 0


def test_synchronous_checks_raise_at_the_op():
    result = run_python(
        "import torch, torch_dml\n"
        "x = torch.randn(5, device='dml')\n"
        "try:\n"
        "    torch.take(x, torch.tensor([7], device='dml'))\n"
        "except IndexError as e:\n"
        "    print('raised at the op:', e)\n",
        TORCH_DML_SYNC_CHECKS="1",
    )
    assert result.returncode == 0, result.stderr
    assert "raised at the op: torch_dml: take() on adapter" in result.stdout
    assert "index 7 is out of bounds for size 5" in result.stdout and "first wait" not in result.stdout


def test_a_write_through_checked_positions_waits_once():
    """index_put_ with accumulate (advanced indexing's backward) and scatter_add check their indices at
    the op, then add through index_add_ over positions built from them, which is not checked again."""
    x = torch.randn(5, 3, device="dml", requires_grad=True)
    index = torch.tensor([4, 0, 4], device="dml")
    y = x[index].sum()
    torch_dml.synchronize()
    waits = torch_dml._C._wait_count(0)
    y.backward()
    assert torch_dml._C._wait_count(0) == waits + 1
    assert torch.equal(x.grad.cpu(), torch.tensor([[1.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3, [2.0] * 3]))
    waits = torch_dml._C._wait_count(0)
    added = torch.zeros(5, device="dml").scatter_add(0, index, torch.ones(3, device="dml"))
    assert torch_dml._C._wait_count(0) == waits + 1
    assert torch.equal(added.cpu(), torch.tensor([1.0, 0.0, 0.0, 0.0, 2.0]))
    with pytest.raises((IndexError, RuntimeError), match="index 5 is out of bounds"):
        torch.zeros(5, device="dml").scatter_add(0, torch.tensor([5], device="dml"), torch.ones(1, device="dml"))
