"""A depthwise conv2d's weight gradient (groups == input channels) runs its own kernel
(conv2d_depthwise_weight.wgsl), not the grouped GEMM: against a float64 reference in every dtype and
layout, across the split of a long batch into slices, and the same bits on every run."""

import pytest
import torch
import torch_dml

# (batch, channels, multiplier, height, width, kernel, stride, padding, dilation)
CASES = {
    "1x1": (2, 6, 1, 7, 9, 1, 1, 0, 1),
    "3x3": (2, 8, 1, 10, 11, 3, 1, 1, 1),
    "3x3_s2": (2, 8, 1, 13, 12, 3, 2, 1, 1),
    "3x3_multiplier_2": (2, 4, 2, 9, 9, 3, 1, 1, 1),
    "3x3_dilation_2": (2, 5, 1, 12, 11, 3, 1, 2, 2),
    "5x5_s2_multiplier_2": (2, 6, 2, 12, 12, 5, 2, 2, 1),
    "7x7_convnext": (2, 4, 1, 14, 14, 7, 1, 3, 1),  # 49 taps: two tiles of the kernel
    "7x7_no_padding": (1, 3, 2, 13, 10, 7, 1, 0, 1),
    "odd": (3, 5, 1, 13, 11, (3, 2), (2, 3), (1, 0), (1, 2)),
    "batch_1": (1, 4, 1, 6, 6, 3, 1, 1, 1),
    "sliced": (2, 4, 1, 40, 40, 3, 1, 1, 1),  # 3200 pixels of few channels: split for a large GPU
}
# 36864 terms per channel, past the 32768 one workgroup may walk (conv_kernel.cpp's kMaxDepth), in
# channels enough that only that limit splits them.
LONG = (9, 130, 2, 64, 64, 3, 1, 1, 1)

ROUNDING = {torch.float32: 0.0, torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}
ACCUMULATION = 1e-5


def pair(v):
    return v if isinstance(v, tuple) else (v, v)


def case(shape, dtype, seed=0):
    n, c, m, h, w, k, stride, padding, dilation = shape
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, h, w, generator=gen).to(dtype)
    weight = torch.randn(c * m, 1, *pair(k), generator=gen).to(dtype)
    args = [list(pair(v)) for v in (stride, padding, dilation)]
    out = torch.nn.functional.conv2d(x.float(), weight.float(), None, *args, c)
    grad = torch.randn(out.shape, generator=gen).to(dtype)
    return x, weight, grad, args, c


def weight_grad(x, weight, grad, args, groups):
    stride, padding, dilation = args
    return torch.ops.aten.convolution_backward(grad, x, weight, None, stride, padding, dilation, False, [0, 0],
                                               groups, [False, True, False])[1]


def assert_close_to_reference(got, x, weight, grad, args, groups, dtype):
    wide = [t.double() for t in (x, weight, grad)]
    reference = weight_grad(*wide, args, groups)
    magnitude = weight_grad(*[t.abs() for t in wide], args, groups)
    assert got.dtype == dtype and got.shape == weight.shape
    error = (got.cpu().double() - reference).abs()
    bound = ROUNDING[dtype] * reference.abs() + ACCUMULATION * magnitude + 1e-6
    assert (error <= bound).all(), (error - bound).max().item()


def on_dml(x, grad, layout):
    """x and grad on dml, NCHW, channels_last, or as views with every other column."""
    if layout == "channels_last":
        return x.to("dml").to(memory_format=torch.channels_last), grad.to("dml").to(memory_format=torch.channels_last)
    if layout == "strided":
        views = []
        for t in (x, grad):
            wide = torch.zeros(*t.shape[:3], t.shape[3] * 2, dtype=t.dtype).to("dml")
            view = wide[..., ::2]
            view.copy_(t.to("dml"))
            assert not view.is_contiguous()
            views.append(view)
        return tuple(views)
    return x.to("dml"), grad.to("dml")


@pytest.mark.parametrize("layout", ["nchw", "channels_last", "strided"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", CASES.values(), ids=CASES.keys())
def test_depthwise_weight_grad_matches_a_float64_reference(shape, dtype, layout):
    x, weight, grad, args, groups = case(shape, dtype)
    dx, dgrad = on_dml(x, grad, layout)
    with torch_dml.strict():
        got = weight_grad(dx, weight.to("dml"), dgrad, args, groups)
    assert_close_to_reference(got, x, weight, grad, args, groups, dtype)


@pytest.mark.parametrize("dtype,layout", [(torch.float32, "nchw"), (torch.float16, "channels_last")], ids=str)
def test_depthwise_weight_grad_beyond_one_workgroups_reduction(dtype, layout):
    """36864 pixels per channel run as slices (none deeper than 32768) summed in order."""
    x, weight, grad, args, groups = case(LONG, dtype, seed=1)
    dx, dgrad = on_dml(x, grad, layout)
    with torch_dml.strict():
        got = weight_grad(dx, weight.to("dml"), dgrad, args, groups)
    assert_close_to_reference(got, x, weight, grad, args, groups, dtype)


@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("shape", [LONG, CASES["7x7_convnext"]], ids=["sliced", "two_tap_tiles"])
def test_depthwise_weight_grad_is_deterministic(shape, layout):
    x, weight, grad, args, groups = case(shape, torch.float32, seed=2)
    (x, grad), weight = on_dml(x, grad, layout), weight.to("dml")
    runs = [weight_grad(x, weight, grad, args, groups).cpu() for _ in range(3)]
    assert torch.equal(runs[0], runs[1]) and torch.equal(runs[0], runs[2])


def test_depthwise_weight_grad_runs_its_own_kernel():
    """One dispatch of the depthwise kernel when unsplit, not the grouped GEMM, through autograd too."""
    x, weight, grad, args, groups = case(CASES["3x3"], torch.float32, seed=3)
    dx, dweight, dgrad = x.to("dml"), weight.to("dml").requires_grad_(), grad.to("dml")
    out = torch.nn.functional.conv2d(dx, dweight, None, *args, groups)
    torch_dml.synchronize()
    start = torch_dml._C._stream_counters(0)[0]
    with torch_dml.strict():
        (got,) = torch.autograd.grad(out, dweight, dgrad)
    assert torch_dml._C._stream_counters(0)[0] - start == 1
    assert any(name.startswith("conv2d_depthwise_weight/") for name in torch_dml._C._compiled_kernels(0))
    assert_close_to_reference(got, x, weight, grad, args, groups, torch.float32)


def test_depthwise_weight_grad_of_an_empty_batch_is_zero():
    x, weight, grad, args, groups = case(CASES["3x3"], torch.float32, seed=4)
    with torch_dml.strict():
        got = weight_grad(x[:0].to("dml"), weight.to("dml"), grad[:0].to("dml"), args, groups)
    assert torch.equal(got.cpu(), torch.zeros_like(weight))
