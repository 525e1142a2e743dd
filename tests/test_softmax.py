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
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 4).to(dtype)
    actual = fn(x.to("dml"), dim)
    expected = fn(wide(x), dim).to(dtype)
    assert actual.device.type == "dml" and actual.dtype == dtype
    torch.testing.assert_close(actual.cpu(), expected, **TOLERANCE[dtype])


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
