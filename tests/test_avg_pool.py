"""avg_pool2d and adaptive_avg_pool2d, forward and backward, run natively (strict mode) and agree with
the CPU for every divisor rule: padding counted or not, ceil_mode windows, divisor_override."""

import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("strict")

TOLERANCE = {torch.float32: {"rtol": 1e-5, "atol": 1e-5}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
             torch.bfloat16: {"rtol": 4e-2, "atol": 4e-2}}


def _check(fn, x, dtype):
    d = x.to(device="dml", dtype=dtype).requires_grad_()
    c = x.clone().requires_grad_()
    out, expected = fn(d), fn(c)
    torch.testing.assert_close(out.float().cpu(), expected, **TOLERANCE[dtype])
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(5))
    out.backward(grad.to(device="dml", dtype=dtype))
    expected.backward(grad)
    torch.testing.assert_close(d.grad.float().cpu(), c.grad, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=str)
@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 2, 1), (3, 1, 1), ((3, 2), (2, 1), (1, 0))])
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d(dtype, kernel, stride, padding, ceil_mode, count_include_pad):
    x = torch.randn(2, 3, 9, 10, generator=torch.Generator().manual_seed(0))
    _check(lambda t: F.avg_pool2d(t, kernel, stride, padding, ceil_mode, count_include_pad), x, dtype)


def test_divisor_override_and_unbatched():
    x = torch.randn(3, 8, 8, generator=torch.Generator().manual_seed(1))
    _check(lambda t: F.avg_pool2d(t, 3, 2, 1, divisor_override=5), x, torch.float32)


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=str)
@pytest.mark.parametrize("size", [(1, 1), (7, 7), (3, 5), (10, 4)])
def test_adaptive_avg_pool2d(dtype, size):
    x = torch.randn(2, 4, 10, 9, generator=torch.Generator().manual_seed(2))
    _check(lambda t: F.adaptive_avg_pool2d(t, size), x, dtype)
