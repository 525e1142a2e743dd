"""Convolutions reach the backend as convolution_overrideable, which has no boxed CPU fallback of its
own: they must still run (through the counted CPU route) and train, never raise 'not implemented'."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml


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
    assert counts.get("aten::convolution_overrideable", 0) == (1 if transposed else 0)  # conv2d is native
    assert counts.get("aten::convolution_backward_overrideable", 0) == (1 if transposed else 0)


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
    x = torch.randn(1, 1, 5, 5).to("dml")
    w = torch.randn(1, 1, 3, 3).to("dml")
    with torch_dml.strict(), pytest.raises(torch_dml.FallbackError, match="convolution_overrideable"):
        F.conv_transpose2d(x, w)


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
