"""take, gather and advanced indexing run natively (strict mode) for every dtype, as on the CPU: the
element-gather kernel moves bits, so sub-word dtypes (bool, int8, float16, ...) and 8-byte ones go
through the same path."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")


def _both(fn, *tensors):
    expected = fn(*tensors)
    actual = fn(*[t.to("dml") if isinstance(t, torch.Tensor) else t for t in tensors])
    assert actual.device.type == "dml"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert torch.equal(actual.cpu(), expected), (actual.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_take(dtype):
    x = make_tensor((5, 7), dtype)
    index = torch.tensor([[0, 34, -1], [-35, 12, 3]])
    _both(torch.take, x, index)
    _both(torch.take, x.t(), index)  # a non-contiguous source


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dtype, dim):
    x = make_tensor((4, 6, 5), dtype)
    gen = torch.Generator().manual_seed(1)
    shape = [3, 4, 5]
    shape[dim] = 9
    index = torch.randint(0, x.shape[dim], shape, generator=gen)
    _both(lambda t, i: torch.gather(t, dim, i), x, index)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_advanced_indexing(dtype):
    x = make_tensor((4, 5, 6, 3), dtype)
    i = torch.tensor([0, 3, -1, 2])
    j = torch.tensor([[1], [3]])
    _both(lambda t: t[i], x)
    _both(lambda t: t[:, i.to("dml" if t.device.type == "dml" else "cpu")], x)
    dev = lambda t: "dml" if t.device.type == "dml" else "cpu"
    _both(lambda t: t[:, j.to(dev(t)), i.to(dev(t))], x)          # adjacent: selection stays in place
    _both(lambda t: t[j.to(dev(t)), :, i.to(dev(t))], x)          # not adjacent: selection goes first
    _both(lambda t: t[..., torch.tensor(2, device=dev(t))], x)    # a 0-dim index
    _both(lambda t: t[i.int().to(dev(t))], x)                     # int32 indices


def test_empty_and_odd_sizes():
    x = make_tensor((3, 5), torch.int8)
    _both(lambda t: t[torch.tensor([], dtype=torch.long, device=t.device)], x)
    # 1-byte results whose last word is partly filled, several lengths
    for n in range(1, 9):
        _both(lambda t, n=n: t.flatten()[torch.arange(n, device=t.device) * 2 % 15], x)


def test_out_of_range_is_an_index_error():
    # Checked on the device: raised at the next wait (tests/test_device_checks.py).
    x = torch.arange(10, device="dml")
    with pytest.raises(IndexError, match="index 10 is out of bounds for size 10"):
        torch.take(x, torch.tensor([10], device="dml")).cpu()
    with pytest.raises(IndexError, match="index 5 is out of bounds for size 5"):
        torch.gather(x.view(2, 5), 1, torch.tensor([[5]], device="dml")).cpu()
    with pytest.raises(IndexError, match="index -6 is out of bounds for size 5"):
        x.view(2, 5)[:, torch.tensor([-6], device="dml")].cpu()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_flip(dtype):
    x = make_tensor((3, 4, 5), dtype)
    for dims in ((0,), (2,), (0, 2), (-1, 1, 0)):
        _both(lambda t, dims=dims: torch.flip(t, dims), x)
    _both(lambda t: torch.flip(t.transpose(0, 2), (1,)), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add(dtype, dim):
    gen = torch.Generator().manual_seed(4)
    x = make_tensor((4, 5, 3), dtype) if not dtype.is_floating_point else torch.randn(4, 5, 3, generator=gen).to(dtype)
    src = make_tensor((6, 6, 6), dtype, seed=1) if not dtype.is_floating_point else \
        torch.randn(6, 6, 6, generator=gen).to(dtype)
    shape = [2, 4, 3]
    shape[dim] = 5
    index = torch.randint(0, x.shape[dim], shape, generator=gen)
    expected = torch.scatter_add(x, dim, index, src)
    actual = torch.scatter_add(x.to("dml"), dim, index.to("dml"), src.to("dml"))
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-2, atol=1e-2)
    inplace = x.to("dml")
    inplace.scatter_add_(dim, index.to("dml"), src.to("dml"))
    torch.testing.assert_close(inplace.cpu(), expected, rtol=1e-2, atol=1e-2)


def test_gather_and_indexing_train_natively():
    """The backward of gather is a scatter_add and that of x[idx] an accumulating index_put_: both
    native, repeated indices summed."""
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(5, 4, generator=gen)
    index = torch.tensor([[0, 0, 3, 3], [4, 4, 4, 1]])
    rows = torch.tensor([1, 1, 3, 0, 1])
    mask = torch.tensor([True, False, True, True, False])
    grads = []
    for device in ("cpu", "dml"):
        leaf = x.detach().to(device).requires_grad_()
        y = torch.gather(leaf, 0, index.to(device)).sum() * 2 + (leaf[rows.to(device)] ** 2).sum() + \
            leaf[mask.to(device)].sum()
        y.backward()
        grads.append(leaf.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
