"""Convolutions reach the backend as convolution_overrideable, which has no boxed CPU fallback of its
own: what the kernels do not take (float64) must still run (through the counted CPU route) and train,
never raise 'not implemented'. Transposed convolutions have their own file (test_conv_transpose.py)."""

import contextlib

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import wide_tiles_from


@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "conv_transpose"])
def test_conv2d_forward_and_backward_match_cpu(transposed):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 9, 9, requires_grad=True)
    # groups=2: conv weight (out 6, in/groups 2, 3, 3); transposed weight (in 4, out/groups 6, 3, 3).
    w = torch.randn((4, 6, 3, 3) if transposed else (6, 2, 3, 3), requires_grad=True)
    b = torch.randn(12 if transposed else 6, requires_grad=True)

    def run(x, w, b):
        if transposed:
            return F.conv_transpose2d(x, w, b, stride=2, padding=1, groups=2)
        return F.conv2d(x, w, b, stride=1, padding=1, groups=2)

    expected = run(x, w, b)
    expected.square().sum().backward()
    dx, dw, db = (t.detach().to("dml").requires_grad_() for t in (x, w, b))
    torch_dml.reset_fallback_counts()
    actual = run(dx, dw, db)
    actual.square().sum().backward()
    assert actual.device.type == "dml"
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-4)
    for got, want in ((dx, x), (dw, w), (db, b)):
        torch.testing.assert_close(got.grad.cpu(), want.grad, rtol=1e-4, atol=1e-4)
    counts = torch_dml.fallback_counts()
    assert counts.get("aten::convolution_overrideable", 0) == 0  # both are native
    assert counts.get("aten::convolution_backward_overrideable", 0) == 0


def test_float64_convolutions_take_the_counted_cpu_route():
    torch.manual_seed(0)
    x = torch.randn(1, 2, 4, 5, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 3, 2, 2, 2, dtype=torch.float64, requires_grad=True)
    expected = F.conv_transpose3d(x, w, padding=1)
    expected.sum().backward()
    dx, dw = (t.detach().to("dml").requires_grad_() for t in (x, w))
    torch_dml.reset_fallback_counts()
    actual = F.conv_transpose3d(dx, dw, padding=1)
    actual.sum().backward()
    torch.testing.assert_close(actual.cpu(), expected)
    torch.testing.assert_close(dw.grad.cpu(), w.grad)
    counts = torch_dml.fallback_counts()
    assert counts.get("aten::convolution_overrideable", 0) == 1
    assert counts.get("aten::convolution_backward_overrideable", 0) == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1), (2, 1, 1, 3),
                                                            ((1, 2), (0, 1), (2, 1), 1)], ids=str)
def test_conv2d_forward_is_native(dtype, stride, padding, dilation, groups):
    torch.manual_seed(1)
    x = torch.randn(2, 6, 11, 10).to(dtype)
    w = torch.randn(9, 6 // groups, 3, 3).to(dtype)
    b = torch.randn(9).to(dtype)
    expected = F.conv2d(x.float(), w.float(), b.float(), stride, padding, dilation, groups)
    with torch_dml.strict():
        actual = F.conv2d(x.to("dml"), w.to("dml"), b.to("dml"), stride, padding, dilation, groups)
    assert actual.dtype == dtype
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 5e-2}
    torch.testing.assert_close(actual.cpu().float(), expected, **tol)


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 1, 1, 1), (2, 1, 1, 3), (3, 2, 2, 1),
                                                            ((1, 2), (0, 1), (2, 1), 3)], ids=str)
def test_conv2d_backward_is_native(stride, padding, dilation, groups):
    torch.manual_seed(2)
    x = torch.randn(2, 6, 12, 11, requires_grad=True)
    w = torch.randn(9, 6 // groups, 3, 2, requires_grad=True)
    b = torch.randn(9, requires_grad=True)
    out = F.conv2d(x, w, b, stride, padding, dilation, groups)
    grad = torch.randn(out.shape)
    out.backward(grad)
    dx, dw, db = (t.detach().to("dml").requires_grad_() for t in (x, w, b))
    with torch_dml.strict():
        F.conv2d(dx, dw, db, stride, padding, dilation, groups).backward(grad.to("dml"))
    for got, want in ((dx, x), (dw, w), (db, b)):
        torch.testing.assert_close(got.grad.cpu(), want.grad, rtol=1e-4, atol=1e-4)


def test_strict_mode_refuses_the_cpu_route():
    x = torch.randn(1, 1, 5, 5, dtype=torch.float64).to("dml")
    w = torch.randn(1, 1, 3, 3, dtype=torch.float64).to("dml")
    with torch_dml.strict(), pytest.raises(torch_dml.FallbackError, match="convolution_overrideable"):
        F.conv2d(x, w)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("groups", [1, 2])
def test_16_bit_conv2d_rounds_once_like_the_cpu(dtype, groups):
    """A 16-bit conv2d accumulates in float32 and rounds its results once: the output and gradients
    are no further from a float64 reference than the CPU's (rounding each composed step was ~2x)."""
    torch.manual_seed(0)
    x = torch.randn(2, 4, 8, 8).to(dtype)
    w = torch.randn(6, 4 // groups, 3, 3).to(dtype)
    b = torch.randn(6).to(dtype)
    grad = (torch.randn(2, 6, 8, 8) * 0.5).to(dtype)

    def run(device, cast):
        xx, ww, bb = (cast(t.to(device)).detach().requires_grad_() for t in (x, w, b))
        y = F.conv2d(xx, ww, bb, padding=1, groups=groups)
        y.backward(cast(grad.to(device)))
        return [t.detach().cpu().double() for t in (y, xx.grad, ww.grad, bb.grad)]

    reference = run("cpu", lambda t: t.double())
    cpu = run("cpu", lambda t: t)
    with torch_dml.strict():
        dml = run("dml", lambda t: t)
    for name, got, expected, exact in zip(["output", "input grad", "weight grad", "bias grad"], dml, cpu, reference):
        error, cpu_error = (got - exact).abs().max().item(), (expected - exact).abs().max().item()
        assert error <= cpu_error * 1.25 + 1e-6, (name, error, cpu_error)


# (batch, in, out, height, width, kernel, stride, padding, dilation, groups): the shapes the conv kernels
# specialise on or must bound-check.
SHAPES = {
    "1x1": (2, 8, 16, 7, 7, 1, 1, 0, 1, 1),
    "3x3": (2, 5, 12, 9, 9, 3, 1, 1, 1, 1),
    "resnet_stem": (1, 3, 16, 32, 30, 7, 2, 3, 1, 1),
    "dilation_2": (2, 4, 6, 11, 12, 3, 1, 2, 2, 1),
    "groups_2": (2, 6, 10, 8, 9, 3, 1, 1, 1, 2),
    # grad_input walks stride phases; with dilation 2 at stride 2 the odd phase has no taps at all.
    "stride_2_dilation_2": (2, 4, 6, 12, 13, 3, 2, 2, 2, 1),
    "stride_3_kernel_2": (1, 3, 5, 14, 10, 2, 3, 1, 1, 1),
    "depthwise_3x3": (2, 8, 8, 10, 11, 3, 1, 1, 1, 8),
    "depthwise_3x3_s2": (2, 8, 8, 13, 12, 3, 2, 1, 1, 8),
    "depthwise_5x5": (1, 6, 6, 11, 9, 5, 1, 2, 1, 6),
    "depthwise_5x5_s2": (2, 6, 6, 12, 12, 5, 2, 2, 1, 6),
    "depthwise_multiplier_2": (2, 4, 8, 9, 9, 3, 1, 1, 1, 4),
    "odd": (3, 5, 7, 13, 11, (3, 2), (2, 3), (1, 0), (1, 2), 1),
    "batch_1": (1, 4, 4, 6, 6, 3, 1, 1, 1, 1),
    "split_k": (2, 4, 8, 32, 32, 3, 1, 1, 1, 1),  # grad_weight's 2048-deep K runs in slices
    "wide_tiles": (1, 70, 66, 9, 9, 3, 1, 1, 1, 1),  # more than one 64-wide tile of channels
    # Per-group GEMMs of at least 128x128 in every pass, run with the 128x128 tile (8x8 per thread) allowed
    # however few its workgroups (wide_tiles_from); the strided one's grad_input phases are 128 and fewer
    # rows, so both tiles run in one backward.
    "tile_128": (2, 144, 136, 10, 10, 3, 1, 1, 1, 1),
    "tile_128_strided": (2, 130, 132, 15, 15, 3, 2, 1, 1, 1),
    "tile_128_groups": (1, 264, 272, 12, 12, 3, 1, 1, 1, 2),
}

# One ulp of the stored result (rounding once to the dtype costs half of one), and the float32
# accumulation's error, bounded by the sum of the terms' magnitudes (the same convolution of |operands|).
ROUNDING = {torch.float32: 0.0, torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}
ACCUMULATION = 1e-5


def conv_case(shape, dtype, channels_last, seed=0):
    n, c, o, h, w, k, stride, padding, dilation, groups = shape
    k = k if isinstance(k, tuple) else (k, k)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, h, w, generator=gen).to(dtype)
    weight = torch.randn(o, c // groups, *k, generator=gen).to(dtype)
    bias = torch.randn(o, generator=gen).to(dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    args = (stride, padding, dilation, groups)
    grad = torch.randn(F.conv2d(x.float(), weight.float(), None, *args).shape, generator=gen).to(dtype)
    return x, weight, bias, grad, args


def run_conv(x, weight, bias, grad, args, device):
    leaves = [t.to(device).detach().requires_grad_() for t in (x, weight, bias)]
    out = F.conv2d(*leaves, *args)
    out.backward(grad.to(device))
    return [out.detach()] + [t.grad for t in leaves]


def assert_close_to_reference(got, x, weight, bias, grad, args, dtype):
    wide = [t.double() for t in (x, weight, bias, grad)]
    reference = run_conv(*wide, args, "cpu")
    magnitude = run_conv(*[t.abs() for t in wide], args, "cpu")
    for name, g, r, m in zip(["output", "grad_input", "grad_weight", "grad_bias"], got, reference, magnitude):
        assert g.dtype == dtype, name
        error = (g.cpu().double() - r).abs()
        bound = ROUNDING[dtype] * r.abs() + ACCUMULATION * m + 1e-6
        assert (error <= bound).all(), (name, (error - bound).max().item())


@pytest.mark.parametrize("dtype,channels_last", [(torch.float32, False), (torch.float32, True),
                                                 (torch.float16, False), (torch.bfloat16, True)],
                         ids=["f32", "f32_channels_last", "f16", "bf16_channels_last"])
@pytest.mark.parametrize("name", SHAPES)
def test_conv2d_kernels_match_a_float64_reference(name, dtype, channels_last):
    x, weight, bias, grad, args = conv_case(SHAPES[name], dtype, channels_last)
    with torch_dml.strict(), wide_tiles_from(1) if name.startswith("tile_128") else contextlib.nullcontext():
        got = run_conv(x, weight, bias, grad, args, "dml")
    assert_close_to_reference(got, x, weight, bias, grad, args, dtype)
    # The output is contiguous whatever the inputs' layout: what torch's fake tensors promise
    # torch.compile for a backend outside ATen (Overrideable), whose compiled graphs check those
    # strides. (Leaves' .grad follow their leaf's layout: autograd's own rule.)
    assert got[0].is_contiguous()
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    assert got[1].is_contiguous(memory_format=fmt)


def test_conv2d_large_gemms_take_the_128_tile_in_every_pass():
    x, weight, bias, grad, args = conv_case(SHAPES["tile_128"], torch.float32, False, seed=5)
    with torch_dml.strict(), wide_tiles_from(1):
        run_conv(x, weight, bias, grad, args, "dml")
    wide = [name for name in torch_dml._C._compiled_kernels(0) if name.startswith("conv2d") and "/t128" in name]
    for op in ("conv2d/", "conv2d_grad_input/", "conv2d_grad_weight/"):
        assert any(name.startswith(op) for name in wide), (op, wide)


def test_conv2d_reads_non_contiguous_operands_in_place():
    x, weight, bias, grad, args = conv_case(SHAPES["odd"], torch.float32, False, seed=3)
    # A view with its width reversed to strides of 2 and a transposed weight.
    wide = torch.randn(x.shape[0], x.shape[1], x.shape[2], x.shape[3] * 2)
    view = wide[..., ::2]
    view.copy_(x)
    weight_t = weight.transpose(2, 3).contiguous().transpose(2, 3)
    with torch_dml.strict():
        dml_view = wide.to("dml")[..., ::2].detach().requires_grad_()
        dml_weight = weight_t.to("dml").detach().requires_grad_()
        assert not dml_view.is_contiguous() and not dml_weight.is_contiguous()
        out = F.conv2d(dml_view, dml_weight, bias.to("dml"), *args)
        out.backward(grad.to("dml"))
    assert_close_to_reference([out, dml_view.grad, dml_weight.grad, torch.zeros(0)][:3] + [grad.sum((0, 2, 3))],
                              x, weight, bias, grad, args, torch.float32)


def test_conv2d_on_an_empty_batch():
    x = torch.randn(0, 4, 8, 8)
    weight = torch.randn(6, 4, 3, 3)
    bias = torch.randn(6)
    with torch_dml.strict():
        leaves = [t.to("dml").requires_grad_() for t in (x, weight, bias)]
        out = F.conv2d(*leaves, padding=1)
        out.sum().backward()
    assert out.shape == (0, 6, 8, 8)
    assert leaves[0].grad.shape == x.shape
    assert torch.equal(leaves[1].grad.cpu(), torch.zeros_like(weight))
    assert torch.equal(leaves[2].grad.cpu(), torch.zeros_like(bias))


def test_conv2d_forward_is_one_dispatch_without_im2col():
    """No patch buffer: a float32 conv with its bias is the one kernel dispatch, and allocates nothing
    beyond its output."""
    x = torch.randn(2, 16, 12, 12).to("dml")
    weight = torch.randn(32, 16, 3, 3).to("dml")
    bias = torch.randn(32).to("dml")
    F.conv2d(x, weight, bias, padding=1)  # compiles the kernel
    torch_dml.synchronize()
    start = torch_dml._C._stream_counters(0)[0]
    torch_dml.reset_peak_memory_stats()
    with torch_dml.strict():
        out = F.conv2d(x, weight, bias, padding=1)
    assert torch_dml._C._stream_counters(0)[0] - start == 1
    assert torch_dml.max_memory_allocated() == torch_dml.memory_allocated()  # nothing transient
    assert out.shape == (2, 32, 12, 12)


def test_conv2d_weight_gradient_is_deterministic():
    x, weight, bias, grad, args = conv_case(SHAPES["split_k"], torch.float32, False, seed=5)
    runs = [run_conv(x, weight, bias, grad, args, "dml")[2].cpu() for _ in range(2)]
    assert torch.equal(runs[0], runs[1])


def test_conv2d_deep_reductions_stay_right():
    """A workgroup walking ~60000 of K summed wrong on lavapipe: forward K of 60000 (1x1, 60000 input
    channels) and grad_weight over 2000x2000 pixels are split or routed so that none does."""
    gen = torch.Generator().manual_seed(7)
    x, w = torch.randn(1, 60000, 1, 1, generator=gen), torch.randn(1, 60000, 1, 1, generator=gen)
    with torch_dml.strict():
        got = F.conv2d(x.to("dml"), w.to("dml")).cpu().double()
    expected = (x.double() * w.double()).sum()
    assert (got - expected).abs().item() <= 1e-5 * (x.double() * w.double()).abs().sum().item()
    image, grad = torch.randn(1, 1, 2000, 2000, generator=gen), torch.randn(1, 1, 2000, 2000, generator=gen)
    with torch_dml.strict():
        weight = torch.ones(1, 1, 1, 1).to("dml").requires_grad_()
        F.conv2d(image.to("dml"), weight).backward(grad.to("dml"))
    expected = (image.double() * grad.double()).sum()
    assert (weight.grad.cpu().double() - expected).abs().item() <= 1e-5 * (image * grad).abs().sum().item()


def test_conv2d_rows_beyond_one_dispatch():
    """2049 x 2049 output pixels are more 64-row tiles than one dispatch holds (65535): several run."""
    gen = torch.Generator().manual_seed(8)
    x, grad = torch.randn(1, 1, 2049, 2049, generator=gen), torch.randn(1, 2, 2049, 2049, generator=gen)
    w = torch.randn(2, 1, 1, 1, generator=gen)
    with torch_dml.strict():
        dx = x.to("dml").requires_grad_()
        out = F.conv2d(dx, w.to("dml"))
        out.backward(grad.to("dml"))
    torch.testing.assert_close(out.cpu(), F.conv2d(x, w))
    torch.testing.assert_close(dx.grad.cpu(), (grad * w.view(1, 2, 1, 1)).sum(1, keepdim=True))
