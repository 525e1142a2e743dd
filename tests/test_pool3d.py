"""3-D pooling (max_pool3d, avg_pool3d, adaptive_avg_pool3d, forward and backward) as two passes of the
2-D pooling kernels, in strict mode: the CPU's indices exactly (ties, NaN, -inf windows, dilation,
ceil_mode) and its averages within float32 rounding."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml


def volume(seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 7, 9, 8, generator=gen, dtype=torch.float64)
    x[0, 0, 1, 2, 2] = float("nan")
    x[1, 1, :2, :3, :3] = -float("inf")  # windows of -inf report their first element
    x[1, 2, 3:5, 4:6, :] = 1.0  # ties across depths and rows
    return x


MAX = {
    "k3_s2_p1": lambda t: F.max_pool3d(t, 3, 2, 1, return_indices=True),
    "dilated_ceil": lambda t: F.max_pool3d(t, (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 1), ceil_mode=True,
                                           return_indices=True),
    "c3d_1x2x2": lambda t: F.max_pool3d(t, (1, 2, 2), (1, 2, 2), return_indices=True),
}
AVG = {
    "k3_s2_p1": lambda t: F.avg_pool3d(t, 3, 2, 1),
    "no_pad_count_ceil": lambda t: F.avg_pool3d(t, (2, 3, 3), (2, 2, 1), (1, 1, 0), ceil_mode=True,
                                                count_include_pad=False),
    "divisor_override": lambda t: F.avg_pool3d(t, 2, divisor_override=3),
    "adaptive_2x3x4": lambda t: F.adaptive_avg_pool3d(t, (2, 3, 4)),
    "adaptive_up": lambda t: F.adaptive_avg_pool3d(t, (9, 4, 11)),
    "global": lambda t: F.adaptive_avg_pool3d(t, 1),
}


@pytest.mark.parametrize("name", list(MAX))
def test_max_pool3d_indices_and_gradient_are_the_cpus(name):
    fn, x = MAX[name], volume()
    c, d = x.clone().requires_grad_(), x.float().to("dml").requires_grad_()
    want_values, want_index = fn(c)
    with torch_dml.strict():
        values, index = fn(d)
        values.backward(torch.ones_like(values))
    want_values.backward(torch.ones_like(want_values))
    assert torch.equal(index.cpu(), want_index)
    torch.testing.assert_close(values.detach().cpu().double(), want_values.detach(), equal_nan=True)
    torch.testing.assert_close(d.grad.cpu().double(), c.grad, rtol=0, atol=0)


@pytest.mark.parametrize("name", list(AVG))
def test_average_pools_match_the_cpu(name):
    fn, x = AVG[name], volume().nan_to_num(0.0, 0.0, 0.0)
    c, d = x.clone().requires_grad_(), x.float().to("dml").requires_grad_()
    want = fn(c)
    grad = torch.randn(want.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    with torch_dml.strict():
        got = fn(d)
        got.backward(grad.float().to("dml"))
    want.backward(grad)
    torch.testing.assert_close(got.detach().cpu().double(), want.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(d.grad.cpu().double(), c.grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_16_bit_average_rounds_once(dtype):
    x = volume().nan_to_num(0.0, 0.0, 0.0).to(dtype)
    want = F.avg_pool3d(x.float(), 3, 2, 1).to(dtype)
    with torch_dml.strict():
        got = F.avg_pool3d(x.to("dml"), 3, 2, 1)
    assert got.dtype == dtype
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=float(torch.finfo(dtype).eps) * 8)


def test_max_pool3d_backward_refuses_an_index_outside_the_input():
    x = torch.randn(1, 1, 2, 2, 2).to("dml")
    grad = torch.ones(1, 1, 1, 1, 1).to("dml")
    indices = torch.full((1, 1, 1, 1, 1), 8).to("dml")
    out = torch.ops.aten.max_pool3d_with_indices_backward(grad, x, [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False,
                                                          indices)
    with pytest.raises(IndexError, match="max_pool3d_with_indices_backward"):
        out.cpu()


def test_bad_arguments_raise_the_cpus_errors():
    with pytest.raises(RuntimeError, match="pad should be"):
        F.max_pool3d(torch.randn(1, 1, 4, 4, 4).to("dml"), 2, 1, 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool3d(torch.randn(1, 1, 4, 4, 4).to("dml"), 2, divisor_override=0)


@pytest.mark.parametrize("output_size", [(2, 3, 4), (1, 1, 1), (7, 9, 8), (3, 5, 2)], ids=str)
def test_adaptive_max_pool3d_indices_and_gradient_are_the_cpus(output_size):
    x = volume(2)
    c, d = x.clone().requires_grad_(), x.float().to("dml").requires_grad_()
    want_values, want_index = F.adaptive_max_pool3d(c, output_size, return_indices=True)
    with torch_dml.strict():
        values, index = F.adaptive_max_pool3d(d, output_size, return_indices=True)
        values.backward(torch.ones_like(values))
    want_values.backward(torch.ones_like(want_values))
    assert torch.equal(index.cpu(), want_index)
    torch.testing.assert_close(values.detach().cpu().double(), want_values.detach(), equal_nan=True)
    torch.testing.assert_close(d.grad.cpu().double(), c.grad, rtol=0, atol=0)
