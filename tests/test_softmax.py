"""softmax / log_softmax forward and backward, native (strict mode), against the CPU."""

import pytest
import torch
import torch_dml

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if torch_dml.has_float64_support(0) else [])
TOLERANCE = {torch.float32: {"rtol": 1e-5, "atol": 1e-6}, torch.float16: {"rtol": 1e-2, "atol": 1e-3},
             torch.bfloat16: {"rtol": 2e-2, "atol": 1e-2}, torch.float64: {"rtol": 1e-13, "atol": 1e-14}}


def wide(t: torch.Tensor) -> torch.Tensor:
    """The reference's computation dtype: float32, float64 for float64."""
    return t if t.dtype == torch.float64 else t.float()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((4, 9), 1), ((4, 9), 0), ((2, 3, 700), -1), ((3, 5, 2), 1), ((), 0)],
                         ids=str)
@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax], ids=["softmax", "log_softmax"])
def test_forward(dtype, shape, dim, fn):
    check_forward(fn, (torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 4).to(dtype), dim)


def check_forward(fn, x, dim):
    actual = fn(x.to("dml"), dim)
    expected = fn(wide(x), dim).to(x.dtype)
    assert actual.device.type == "dml" and actual.dtype == x.dtype
    torch.testing.assert_close(actual.cpu(), expected, **TOLERANCE[x.dtype])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("forward,backward", [
    (torch.softmax, torch.ops.aten._softmax_backward_data),
    (torch.log_softmax, torch.ops.aten._log_softmax_backward_data),
], ids=["softmax", "log_softmax"])
def test_backward_kernels(dtype, forward, backward):
    x = torch.randn(6, 33, generator=torch.Generator().manual_seed(1)).to(dtype)
    grad = torch.randn(6, 33, generator=torch.Generator().manual_seed(2)).to(dtype)
    y = forward(wide(x), 1).to(dtype)
    actual = backward(grad.to("dml"), y.to("dml"), 1, dtype)
    expected = backward(wide(grad), wide(y), 1, wide(y).dtype).to(dtype)
    torch.testing.assert_close(actual.cpu(), expected, **TOLERANCE[dtype])


def test_autograd_uses_the_native_backward():
    x = torch.randn(4, 10, requires_grad=True)
    d = x.detach().to("dml").requires_grad_()
    torch.log_softmax(d, 1).sum().backward()
    torch.log_softmax(x, 1).sum().backward()
    torch.testing.assert_close(d.grad.cpu(), x.grad, rtol=1e-5, atol=1e-6)


def test_extreme_values():
    x = torch.tensor([[1000.0, 0.0, -1000.0], [float("-inf"), 0.0, 1.0], [float("nan"), 1.0, 2.0]])
    torch.testing.assert_close(torch.softmax(x.to("dml"), 1).cpu(), torch.softmax(x, 1), equal_nan=True)
    torch.testing.assert_close(torch.log_softmax(x.to("dml"), 1).cpu(), torch.log_softmax(x, 1), equal_nan=True)


def column_input(shape, dtype, seed=3, contiguous=True):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 4).to(dtype)
    return x if contiguous else x.transpose(0, -1).contiguous().transpose(0, -1)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", [((4, 9, 5), 1), ((3, 16, 8, 8), 1), ((6, 2, 3), 0), ((2, 1000, 3), 1),
                                       ((5, 7, 1), 1), ((2, 3, 4, 5), -2)], ids=str)
@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "strided"])
@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax], ids=["softmax", "log_softmax"])
def test_forward_over_an_earlier_dim(dtype, shape, dim, contiguous, fn):
    check_forward(fn, column_input(shape, dtype, contiguous=contiguous), dim)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("forward,backward", [
    (torch.softmax, torch.ops.aten._softmax_backward_data),
    (torch.log_softmax, torch.ops.aten._log_softmax_backward_data),
], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "strided"])
def test_backward_over_an_earlier_dim(dtype, forward, backward, contiguous):
    x = column_input((3, 40, 6, 5), dtype, seed=4, contiguous=contiguous)
    grad = column_input((3, 40, 6, 5), dtype, seed=5, contiguous=contiguous)
    y = forward(wide(x), 1).to(dtype)
    actual = backward(grad.to("dml"), y.to("dml"), 1, dtype)
    expected = backward(wide(grad), wide(y), 1, wide(y).dtype).to(dtype)
    torch.testing.assert_close(actual.cpu(), expected, **TOLERANCE[dtype])


@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax], ids=["softmax", "log_softmax"])
def test_extreme_values_over_an_earlier_dim(fn):
    # Columns along dim 0: infinities first, after and among finite values, a NaN, all -inf, one +inf.
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[1000.0, -inf, -inf, nan, -inf, 1.0, 3.0],
                      [0.0, 0.0, 2.0, 1.0, -inf, inf, -inf],
                      [-1000.0, 1.0, -inf, 2.0, -inf, 2.0, 5.0]])
    torch.testing.assert_close(fn(x.to("dml"), 0).cpu(), fn(x, 0), equal_nan=True)


def test_empty_over_an_earlier_dim():
    for shape in [(0, 3, 4), (2, 0, 4), (2, 3, 0)]:
        x = torch.randn(shape)
        assert torch.softmax(x.to("dml"), 1).shape == torch.softmax(x, 1).shape


def test_an_earlier_dim_is_read_in_place():
    # A contiguous float32 NCHW tensor over dim 1: one dispatch, no copy moving the dim last.
    x = torch.randn(2, 64, 8, 8).to("dml")
    torch.softmax(x, 1)
    torch_dml.synchronize()
    before = torch_dml._C._stream_counters(0)[0]
    y = torch.softmax(x, 1)
    torch_dml.synchronize()
    assert torch_dml._C._stream_counters(0)[0] - before == 1
    torch.testing.assert_close(y.cpu(), torch.softmax(x.cpu(), 1))
