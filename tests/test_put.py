"""Assignment at positions runs natively (strict mode) for every dtype, as on the CPU: x[mask] = v,
x[indices] = values, scatter (src and value), index_copy and index_fill all reduce to one put kernel
that moves bits. Where positions repeat, the last write wins (the order a serial loop gives, which the
CPU gives for small inputs; PyTorch leaves it undefined), decided by an atomic maximum so every adapter
and every run gives the same result."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")


def _on(device, *tensors):
    return [t.to(device) if isinstance(t, torch.Tensor) else t for t in tensors]


def _both(fn, *tensors):
    """Runs `fn` on CPU copies and on dml copies of `tensors`; the results must be equal bit for bit."""
    expected = fn(*_on("cpu", *[t.clone() if isinstance(t, torch.Tensor) else t for t in tensors]))
    actual = fn(*_on("dml", *tensors))
    assert actual.device.type == "dml"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert torch.equal(actual.cpu(), expected), (actual.cpu(), expected)


def _set(x, index, value):
    x[index] = value
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mask_assignment(dtype):
    x = make_tensor((6, 7), dtype)
    mask = make_tensor((6, 7), torch.bool, seed=1)
    value = make_tensor((), dtype, seed=2)
    _both(lambda t, m, v: _set(t, m, v), x, mask, value)  # value a 0-d tensor on the device
    _both(lambda t, m: _set(t, m, value), x, mask)  # value a 0-d tensor on the host, as x[m] = 0 gives
    _both(lambda t, m: _set(t, m, make_tensor((int(mask.sum()),), dtype, seed=3).to(t.device)), x, mask)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_assignment_last_write_wins(dtype):
    x = make_tensor((5, 4), dtype)
    rows = torch.tensor([3, 0, 3, -1, 3])  # 3 is written three times: the last values stay
    values = make_tensor((5, 4), dtype, seed=1)
    _both(lambda t, i, v: _set(t, i, v), x, rows, values)
    cols = torch.tensor([1, 2, 1, 0, 1])
    _both(lambda t, i, j, v: _set(t, (i, j), v), x, rows, cols, values[:, 0])
    _both(lambda t, j, v: _set(t, (slice(None), j), v), x, cols, make_tensor((5, 5), dtype, seed=4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8, torch.float16, torch.int64], ids=str)
def test_assignment_into_views(dtype):
    x = make_tensor((6, 8), dtype)
    # A transposed view (not contiguous) and a view starting mid-word (sub-word dtypes).
    _both(lambda t, i, v: (_set(t.t(), i, v), t)[1], x, torch.tensor([2, 5]), make_tensor((2, 6), dtype, seed=1))
    _both(lambda t, i, v: (_set(t.view(-1)[1:], i, v), t)[1], x, torch.tensor([0, 9, 46]), make_tensor((3,), dtype))
    # values that are a view of the tensor written: refused on both devices, nothing written
    for device in ("cpu", "dml"):
        t = x.to(device)
        with pytest.raises(RuntimeError, match="single memory location"):
            _set(t, torch.tensor([4, 1], device=device), t[:2])
        assert torch.equal(t.cpu(), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter(dtype, dim):
    x = make_tensor((4, 6), dtype)
    gen = torch.Generator().manual_seed(3)
    index = torch.randint(0, x.shape[dim], (3, 4), generator=gen)  # repeats along dim
    src = make_tensor((5, 5), dtype, seed=1)  # larger than index: only index's extent is read
    _both(lambda t, i, s: torch.scatter(t, dim, i, s), x, index, src)
    _both(lambda t, i, s: t.scatter_(dim, i, s), x, index, src)
    _both(lambda t, i: t.scatter_(dim, i, 1), x, index)
    _both(lambda t, i: torch.scatter(t, dim, i, 0), x.t().contiguous().t(), index)


def test_scalar_and_int32_index_scatter():
    _both(lambda t, i, s: torch.scatter(t, 0, i, s), torch.tensor(1.5), torch.tensor(0), torch.tensor(-2.0))
    _both(lambda t, i: t.scatter_(0, i, 4.0), torch.tensor(1.5), torch.tensor(0))
    x = make_tensor((4, 5), torch.float32)
    index = torch.tensor([[3, 0, 1], [2, 2, 0]], dtype=torch.int32)
    _both(lambda t, i, s: torch.scatter(t, 0, i, s), x, index, make_tensor((2, 3), torch.float32, seed=1))


def test_one_hot():
    _both(lambda i: torch.nn.functional.one_hot(i, 5), torch.tensor([[4, 0], [2, 2]]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_copy_and_fill(dtype):
    x = make_tensor((4, 5, 3), dtype)
    index = torch.tensor([4, 0, 4])
    source = make_tensor((4, 3, 3), dtype, seed=1)
    _both(lambda t, i, s: torch.index_copy(t, 1, i, s), x, index, source)
    _both(lambda t, i, s: t.index_copy_(1, i, s), x, index, source)
    _both(lambda t, i: t.index_fill_(2, i, 7), x, torch.tensor([-1, 0]))
    _both(lambda t, i, v: t.index_fill_(0, i, v), x, torch.tensor([1]), make_tensor((), dtype, seed=2))
    _both(lambda t, i: t.index_fill_(0, i, 1), make_tensor((), dtype), torch.tensor([0]))


def test_out_of_range_positions_raise_index_errors():
    x = torch.zeros(4, 3, device="dml")
    with pytest.raises(IndexError):
        x[torch.tensor([4], device="dml")] = 1.0
    with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
        x.scatter_(0, torch.tensor([[5, 0, 0]], device="dml"), 1.0)
    with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
        x.index_copy_(0, torch.tensor([-1], device="dml"), torch.ones(1, 3, device="dml"))
    assert torch.equal(x.cpu(), torch.zeros(4, 3))  # nothing was written


def test_many_repeats_are_deterministic():
    """100k writes to 10 positions: the winner is always the last write, however threads are scheduled.
    (PyTorch leaves repeated positions undefined; the CPU splits inputs this large across threads, so
    the expectation is the serial rule itself, not the CPU's result.)"""
    gen = torch.Generator().manual_seed(5)
    positions = torch.randint(0, 10, (100_000,), generator=gen)
    values = torch.arange(100_000, dtype=torch.float32)
    expected = torch.stack([values[(positions == p).nonzero().max()] for p in range(10)])
    for _ in range(3):
        actual = torch.zeros(10, device="dml").index_put_((positions.to("dml"),), values.to("dml"))
        assert torch.equal(actual.cpu(), expected)


def test_index_put_backward_and_training_use_no_fallback():
    weight = torch.randn(6, 4, device="dml", requires_grad=True)
    rows = torch.tensor([1, 4, 1], device="dml")
    y = weight.clone()
    y[rows] = torch.zeros(3, 4, device="dml")
    y.sum().backward()
    expected = torch.ones(6, 4)
    expected[[1, 4]] = 0
    assert torch.equal(weight.grad.cpu(), expected)
