"""avg_pool2d and adaptive_avg_pool2d, forward and backward, run natively (strict mode) and agree with
the CPU for every divisor rule: padding counted or not, ceil_mode windows, divisor_override. One kernel
each way (global average pooling: the mean reduction), in any layout."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import kernels_of

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


def _float64_reference(fn, x, grad):
    c = x.double().requires_grad_()
    out = fn(c)
    out.backward(grad.double())
    return out.detach(), c.grad


@pytest.mark.parametrize("case", ["2x2", "3x3 s1 p1 no pad count", "ceil", "divisor", "adaptive 3x5", "adaptive 7x7 up"])
@pytest.mark.parametrize("layout", ["nchw", "channels_last", "strided"])
def test_pool_kernels_read_every_layout_in_place(case, layout):
    """The CPU's sums in its order and its division: float32 results within 2 ulps of a float64
    reference (a driver's division may be off by that much), from contiguous, channels_last and
    strided inputs alike, written in the input's layout."""
    fns = {
        "2x2": lambda t: F.avg_pool2d(t, 2),
        "3x3 s1 p1 no pad count": lambda t: F.avg_pool2d(t, 3, 1, 1, count_include_pad=False),
        "ceil": lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True),
        "divisor": lambda t: F.avg_pool2d(t, (3, 2), (2, 1), (1, 0), divisor_override=7),
        "adaptive 3x5": lambda t: F.adaptive_avg_pool2d(t, (3, 5)),
        "adaptive 7x7 up": lambda t: F.adaptive_avg_pool2d(t, (13, 7)),
    }
    fn = fns[case]
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 5, 11, 9, generator=gen)
    dml = x.to("dml")
    if layout == "channels_last":
        dml = dml.contiguous(memory_format=torch.channels_last)
    elif layout == "strided":
        dml = torch.randn(2, 5, 11, 18, generator=gen).to("dml")[..., ::2]
        dml.copy_(x.to("dml"))
        assert not dml.is_contiguous()
    dml = dml.detach().requires_grad_()
    out = fn(dml)
    grad = torch.randn(out.shape, generator=gen)
    out.backward(grad.to("dml"))
    want, want_grad = _float64_reference(fn, x, grad)
    if layout == "channels_last":
        assert out.is_contiguous(memory_format=torch.channels_last)
    for got, exact in ((out, want), (dml.grad, want_grad)):
        error = (got.cpu().double() - exact).abs()
        assert (error <= 2.5e-7 * exact.abs() + 1e-7 * exact.abs().max()).all(), error.max()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_avg_pool2d_is_one_kernel_each_way(dtype):
    """No host-made weights, no matmuls: one dispatch each way (a 16-bit result adds its rounding)."""
    x = torch.randn(4, 8, 16, 16).to(device="dml", dtype=dtype).requires_grad_()
    names = kernels_of(lambda: F.avg_pool2d(x, 2))
    rounding = 0 if dtype == torch.float32 else 1
    assert names[0].split("/")[0] == "avg_pool2d" and len(names) == 1 + rounding, names
    y = F.avg_pool2d(x, 3, 2, 1)
    names = kernels_of(lambda: y.backward(torch.ones_like(y)))
    assert [n.split("/")[0] for n in names].count("avg_pool2d_backward") == 1, names
    assert not any(n.startswith("gemm") for n in names), names


def test_adaptive_pooling_kernels_and_global_pooling_as_a_mean():
    x = torch.randn(4, 8, 12, 12).to("dml").requires_grad_()
    names = kernels_of(lambda: F.adaptive_avg_pool2d(x, (5, 3)))
    assert [n.split("/")[0] for n in names] == ["adaptive_avg_pool2d"], names
    names = kernels_of(lambda: F.adaptive_avg_pool2d(x, 1))
    assert len(names) == 1 and names[0].startswith("reduce/mean"), names
    y = F.adaptive_avg_pool2d(x, 1)
    y.backward(torch.ones_like(y))
    torch.testing.assert_close(x.grad.cpu(), torch.full((4, 8, 12, 12), 1 / 144))


@pytest.mark.parametrize("dtype", [torch.float64], ids=str)
def test_float64_pools(dtype):
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(2, 3, 9, 10, generator=gen, dtype=dtype)
    for fn in (lambda t: F.avg_pool2d(t, 3, 2, 1, True, False), lambda t: F.adaptive_avg_pool2d(t, (4, 6))):
        c, d = x.clone().requires_grad_(), x.to("dml").requires_grad_()
        out, expected = fn(d), fn(c)
        grad = torch.randn(expected.shape, generator=gen, dtype=dtype)
        out.backward(grad.to("dml"))
        expected.backward(grad)
        torch.testing.assert_close(out.cpu(), expected, rtol=1e-15, atol=1e-15)
        torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-15, atol=1e-15)


def test_empty_batch_and_a_window_wholly_in_the_padding():
    empty = torch.randn(0, 3, 6, 6).to("dml").requires_grad_()
    out = F.avg_pool2d(empty, 2)
    assert out.shape == (0, 3, 3, 3)
    out.sum().backward()
    assert empty.grad.shape == empty.shape
    # ceil_mode's last window may start in the right padding: the CPU averages it to 0 or a partial sum.
    x = torch.randn(1, 1, 5, 5)
    torch.testing.assert_close(F.avg_pool2d(x.to("dml"), 2, 2, 1, ceil_mode=True).cpu(),
                               F.avg_pool2d(x, 2, 2, 1, ceil_mode=True))
    assert torch_dml.fallback_counts().get("aten::avg_pool2d", 0) == 0
