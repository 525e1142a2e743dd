"""2-D upsampling (nearest, nearest-exact, bilinear) and its 1-D forms (nearest, nearest-exact,
linear), forward and backward, native (strict mode) against the CPU."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOLERANCE = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-5},
    # The CPU keeps half-precision weights and partial sums; the kernel computes in float32.
    torch.float64: {"rtol": 1e-12, "atol": 1e-12},
    torch.float16: {"rtol": 1e-2, "atol": 1e-2},
    torch.bfloat16: {"rtol": 4e-2, "atol": 4e-2},
}
MODES = [
    ("nearest", None),
    ("nearest-exact", None),
    ("bilinear", False),
    ("bilinear", True),
]
MODE_IDS = ["nearest", "nearest_exact", "bilinear", "bilinear_align_corners"]
# (input H, W) and what F.interpolate is given: a scale factor or an explicit size.
RESIZES = [
    ((5, 7), {"scale_factor": 2}),
    ((5, 7), {"scale_factor": 3}),
    ((8, 6), {"scale_factor": 0.5}),
    ((5, 7), {"scale_factor": 1.7}),
    ((9, 10), {"scale_factor": (0.6, 1.3)}),
    ((5, 7), {"size": (11, 4)}),
    ((5, 7), {"size": (5, 7)}),
    ((6, 4), {"size": (1, 1)}),
    ((1, 1), {"size": (3, 5)}),
]
RESIZE_IDS = ["x2", "x3", "x0.5", "x1.7", "x0.6_1.3", "size_11x4", "same_size", "to_1x1", "from_1x1"]


def interpolate(x, mode, align_corners, resize, recompute=None):
    kwargs = dict(resize)
    if "scale_factor" in kwargs and recompute is not None:
        kwargs["recompute_scale_factor"] = recompute
    return F.interpolate(x, mode=mode, align_corners=align_corners, **kwargs)


def check(mode, align_corners, resize, dtype, shape, recompute=None, seed=0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=generator).to(dtype)
    exact = dtype in (torch.float32, torch.float64)
    expected_in = x.clone().requires_grad_() if exact else x.float().requires_grad_()
    expected = interpolate(expected_in, mode, align_corners, resize, recompute)
    grad = torch.randn(expected.shape, generator=generator).to(dtype)
    expected.backward(grad.to(expected.dtype))
    actual_in = x.to("dml").requires_grad_()
    with torch_dml.strict():
        actual = interpolate(actual_in, mode, align_corners, resize, recompute)
        actual.backward(grad.to("dml"))
    assert actual.dtype == dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu().to(expected.dtype), expected.detach(), **TOLERANCE[dtype])
    torch.testing.assert_close(actual_in.grad.cpu().to(expected.dtype), expected_in.grad, **TOLERANCE[dtype])


@pytest.mark.parametrize("resize", RESIZES, ids=RESIZE_IDS)
@pytest.mark.parametrize(("mode", "align_corners"), MODES, ids=MODE_IDS)
def test_float32_matches_cpu(mode, align_corners, resize):
    check(mode, align_corners, resize[1], torch.float32, (2, 3) + resize[0])


@pytest.mark.parametrize("dtype", FLOATS[1:], ids=str)
@pytest.mark.parametrize("resize", RESIZES[:4], ids=RESIZE_IDS[:4])
@pytest.mark.parametrize(("mode", "align_corners"), MODES, ids=MODE_IDS)
def test_half_precision_matches_float32_cpu(mode, align_corners, resize, dtype):
    # Against the CPU in float32 on the same (rounded) input: the kernel computes in float32.
    check(mode, align_corners, resize[1], dtype, (2, 3) + resize[0])


@pytest.mark.parametrize(("mode", "align_corners"), MODES[:3], ids=MODE_IDS[:3])  # align_corners ignores scales
@pytest.mark.parametrize("scale", [1.7, 0.45, 2.5, 3.0])
def test_user_scale_is_used_as_given(mode, align_corners, scale):
    """recompute_scale_factor=False: the kernel indexes with 1/scale, not with in/out."""
    check(mode, align_corners, {"scale_factor": scale}, torch.float32, (1, 2, 7, 9), recompute=False)


@pytest.mark.parametrize(("mode", "align_corners"), MODES, ids=MODE_IDS)
def test_exact_indices_on_long_axes(mode, align_corners):
    """A ramp input makes every chosen tap visible: the float32 index math must match the CPU's
    bit for bit across many output positions and awkward ratios."""
    for size_in, size_out in [(37, 101), (101, 37), (640, 1000), (1000, 333), (3, 1024)]:
        x = torch.arange(size_in, dtype=torch.float32).view(1, 1, 1, size_in).expand(1, 1, 2, size_in).contiguous()
        expected = F.interpolate(x, size=(3, size_out), mode=mode, align_corners=align_corners)
        with torch_dml.strict():
            actual = F.interpolate(x.to("dml"), size=(3, size_out), mode=mode, align_corners=align_corners)
        torch.testing.assert_close(actual.cpu(), expected, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize(("mode", "align_corners"), MODES, ids=MODE_IDS)
def test_non_contiguous_input_and_output(mode, align_corners):
    torch.manual_seed(1)
    x = torch.randn(3, 4, 6, 5).transpose(2, 3)  # non-contiguous (3, 4, 5, 6)
    expected = F.interpolate(x, scale_factor=2, mode=mode, align_corners=align_corners)
    with torch_dml.strict():
        actual = F.interpolate(x.to("dml"), scale_factor=2, mode=mode, align_corners=align_corners)
        channels_last = F.interpolate(x.to("dml").contiguous(memory_format=torch.channels_last), scale_factor=2,
                                      mode=mode, align_corners=align_corners)
        out = torch.empty(3, 4, 10, 14, device="dml")[..., :12]
        if mode == "bilinear":
            torch.ops.aten.upsample_bilinear2d.out(x.to("dml"), [10, 12], align_corners, out=out)
    torch.testing.assert_close(actual.cpu(), expected)
    torch.testing.assert_close(channels_last.cpu(), expected)
    if mode == "bilinear":
        torch.testing.assert_close(out.cpu(), expected)


def test_odd_element_count_half_output_keeps_neighbours():
    """A float16 output whose last word is half outside the tensor must not touch the other half."""
    base = torch.full((2 * 3 * 3 + 1,), 7.0, dtype=torch.float16, device="dml")
    out = base[:18].view(1, 2, 3, 3)
    x = torch.randn(1, 2, 2, 2).half()
    with torch_dml.strict():
        torch.ops.aten.upsample_bilinear2d.out(x.to("dml"), [3, 3], False, out=out)
    assert base[18].item() == 7.0
    torch.testing.assert_close(out.cpu().float(), F.interpolate(x.float(), size=(3, 3), mode="bilinear"),
                               rtol=1e-2, atol=1e-2)


def test_backward_is_deterministic():
    torch.manual_seed(2)
    x = torch.randn(2, 3, 7, 5, device="dml", requires_grad=True)
    grads = []
    for _ in range(2):
        x.grad = None
        F.interpolate(x, scale_factor=1.7, mode="bilinear").square().sum().backward()
        grads.append(x.grad.cpu())
    assert torch.equal(grads[0], grads[1])


def test_direct_overloads_with_explicit_scales():
    torch.manual_seed(3)
    x = torch.randn(2, 2, 4, 5)
    aten = torch.ops.aten
    with torch_dml.strict():
        for op, args in [
            (aten.upsample_nearest2d, ([9, 7], 2.2, 1.5)),
            (aten._upsample_nearest_exact2d, ([9, 7], 2.2, 1.5)),
            (aten.upsample_bilinear2d, ([9, 7], False, 2.2, 1.5)),
            (aten.upsample_bilinear2d, ([9, 7], True, 2.2, 1.5)),
        ]:
            torch.testing.assert_close(op(x.to("dml"), *args).cpu(), op(x, *args))
        g = torch.randn(2, 2, 9, 7)
        for op, args in [
            (aten.upsample_nearest2d_backward, ([9, 7], [2, 2, 4, 5], 2.2, 1.5)),
            (aten._upsample_nearest_exact2d_backward, ([9, 7], [2, 2, 4, 5], 2.2, 1.5)),
            (aten.upsample_bilinear2d_backward, ([9, 7], [2, 2, 4, 5], False, 2.2, 1.5)),
            (aten.upsample_bilinear2d_backward, ([9, 7], [2, 2, 4, 5], True, None, None)),
        ]:
            torch.testing.assert_close(op(g.to("dml"), *args).cpu(), op(g, *args))


def test_vec_out_overloads():
    torch.manual_seed(5)
    x = torch.randn(1, 2, 3, 4)
    aten = torch.ops.aten
    with torch_dml.strict():
        for op, args in [
            (aten.upsample_nearest2d.vec_out, (None, [1.5, 2.0])),
            (aten.upsample_nearest2d.vec_out, ([5, 7], None)),
            (aten.upsample_bilinear2d.vec_out, (None, True, [1.5, 2.0])),
            (aten.upsample_bilinear2d.vec_out, ([5, 7], False, None)),
        ]:
            out = torch.empty(0, device="dml")
            op(x.to("dml"), *args, out=out)
            torch.testing.assert_close(out.cpu(), op(x, *args, out=torch.empty(0)))


def test_shape_errors_match_cpu():
    with pytest.raises(RuntimeError, match="expected"):
        torch.ops.aten.upsample_nearest2d(torch.randn(2, 3, 4, device="dml"), [4, 4])
    with pytest.raises(RuntimeError, match="greater than 0"):
        torch.ops.aten.upsample_bilinear2d(torch.randn(1, 1, 4, 4, device="dml"), [0, 4], False)


@pytest.mark.skipif(not torch_dml.has_float64_support(0), reason="the adapter has no shader-f64")
@pytest.mark.parametrize(("mode", "align_corners"), MODES, ids=MODE_IDS)
def test_float64_computes_in_float64(mode, align_corners):
    check(mode, align_corners, {"scale_factor": 1.7}, torch.float64, (2, 2, 5, 7))


def test_empty_batch():
    with torch_dml.strict():
        empty = F.interpolate(torch.randn(0, 2, 3, 3, device="dml"), scale_factor=2, mode="nearest")
    assert empty.shape == (0, 2, 6, 6)


def test_unet_up_path_trains_like_cpu():
    """Decoder step of a UNet: upsample the coarse map, concatenate the skip connection, convolve; all
    native, forward and backward."""
    torch.manual_seed(4)
    coarse, skip = torch.randn(2, 8, 6, 6), torch.randn(2, 4, 12, 12)
    conv = torch.nn.Conv2d(12, 4, 3, padding=1)
    dml_conv = torch.nn.Conv2d(12, 4, 3, padding=1).to("dml")
    dml_conv.load_state_dict(conv.state_dict())

    def step(conv, coarse, skip, mode):
        up = F.interpolate(coarse, scale_factor=2, mode=mode, align_corners=False if mode == "bilinear" else None)
        out = conv(torch.cat([up, skip], dim=1))
        out.square().mean().backward()
        return out

    for mode in ["nearest", "bilinear"]:
        conv.zero_grad()
        dml_conv.zero_grad()
        c, s = coarse.clone().requires_grad_(), skip.clone().requires_grad_()
        dc, ds = coarse.to("dml").requires_grad_(), skip.to("dml").requires_grad_()
        expected = step(conv, c, s, mode)
        with torch_dml.strict():
            actual = step(dml_conv, dc, ds, mode)
        torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(dc.grad.cpu(), c.grad, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(ds.grad.cpu(), s.grad, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(dml_conv.weight.grad.cpu(), conv.weight.grad, rtol=1e-4, atol=1e-4)


MODES_1D = [("nearest", None), ("nearest-exact", None), ("linear", False), ("linear", True)]
RESIZES_1D = [(7, {"scale_factor": 2}), (9, {"scale_factor": 0.5}), (7, {"scale_factor": 1.7}), (5, {"size": 12}),
              (6, {"size": 1}), (1, {"size": 4}), (8, {"size": 8})]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize("resize", RESIZES_1D, ids=["x2", "x0.5", "x1.7", "size_12", "to_1", "from_1", "same"])
@pytest.mark.parametrize(("mode", "align_corners"), MODES_1D, ids=["nearest", "nearest_exact", "linear", "linear_ac"])
def test_1d_upsampling_runs_the_2d_kernel(mode, align_corners, resize, dtype):
    """(N, C, W) is the 2-D kernel over images one row high: the CPU's 1-D results and gradients."""
    check(mode, align_corners, resize[1], dtype, (2, 3, resize[0]))


def test_1d_upsampling_is_one_kernel_each_way():
    from helpers import kernels_of

    x = torch.randn(4, 8, 50).to("dml").requires_grad_()
    with torch_dml.strict():
        names = kernels_of(lambda: F.interpolate(x, scale_factor=2, mode="linear"))
        assert len(names) == 1 and names[0].startswith("upsample"), names
        y = F.interpolate(x, scale_factor=2, mode="nearest")
        names = kernels_of(lambda: y.backward(torch.ones_like(y)))
    assert [n for n in names if n.startswith("upsample")], names
