"""Transposed convolutions (ConvTranspose1d/2d) run on the conv kernels: the forward pass is the input
gradient of the convolution they transpose, and their gradients are that convolution's forward and
weight-gradient passes. Every case runs in strict mode, so none of it may take the CPU route."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import kernels_of

# (in, out, kernel, stride, padding, output_padding, dilation, groups, height, width)
CASES = {
    "k3_s1": (4, 6, 3, 1, 1, 0, 1, 1, 8, 7),
    "k4_s2_p1": (8, 8, 4, 2, 1, 0, 1, 1, 7, 7),  # DCGAN's upsampling layer
    "k2_s2": (6, 3, 2, 2, 0, 0, 1, 1, 6, 5),  # U-Net's
    "output_padding": (4, 6, 3, 2, 1, 1, 1, 2, 9, 8),
    "groups_3_dilation_2": (6, 12, 3, 3, 2, 2, 2, 3, 5, 6),
    "depthwise": (6, 6, 3, 2, 1, 1, 1, 6, 8, 8),
    "non_square": (5, 4, (3, 1), (2, 1), (1, 0), (1, 0), (1, 2), 1, 7, 9),
    "stride_above_kernel": (4, 4, 2, 3, 0, 2, 1, 1, 4, 4),  # output rows no window reaches
    "dilation_3": (2, 3, 3, 1, 0, 0, 3, 1, 5, 5),
    # Output padding at or beyond the stride (allowed below the dilation): the convolution transposed
    # has more output rows than x, which the kernels must not read.
    "output_padding_from_dilation": (4, 6, 3, 1, 1, 1, 2, 2, 6, 7),
    "depthwise_output_padding_from_dilation": (6, 6, 3, 2, 0, 2, 3, 6, 5, 5),
}


def reference(case, channels_last=False, seed=0):
    """float64 CPU results and the float32 dml ones for one case: output, then x, weight, bias grads."""
    cin, cout, k, s, p, op, d, g, h, w = case
    kernel = k if isinstance(k, tuple) else (k, k)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, cin, h, w, generator=gen, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(cin, cout // g, *kernel, generator=gen, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(cout, generator=gen, dtype=torch.float64, requires_grad=True)
    out = F.conv_transpose2d(x, weight, bias, s, p, op, g, d)
    grad = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    out.backward(grad)
    expected = [out.detach(), x.grad, weight.grad, bias.grad]
    leaves = [t.detach().float().to("dml").requires_grad_() for t in (x, weight, bias)]
    x_in = leaves[0].to(memory_format=torch.channels_last) if channels_last else leaves[0]
    with torch_dml.strict():
        got = F.conv_transpose2d(x_in, leaves[1], leaves[2], s, p, op, g, d)
        got.backward(grad.float().to("dml"))
    return [got.detach(), *(t.grad for t in leaves)], expected


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("name", list(CASES))
def test_conv_transpose2d_matches_a_float64_reference(name, channels_last):
    got, expected = reference(CASES[name], channels_last)
    for label, g, e in zip(["output", "x grad", "weight grad", "bias grad"], got, expected):
        assert g.device.type == "dml" and g.dtype == torch.float32
        assert g.shape == e.shape, label
        error = (g.cpu().double() - e).abs().max().item()
        assert error <= 2e-6 * max(e.abs().max().item(), 1.0), (label, error)


def test_conv_transpose1d_is_native():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 4, 17, generator=gen, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(4, 3, 5, generator=gen, dtype=torch.float64, requires_grad=True)
    out = F.conv_transpose1d(x, weight, None, stride=3, padding=2, output_padding=1)
    out.backward(torch.ones_like(out))
    dx, dw = (t.detach().float().to("dml").requires_grad_() for t in (x, weight))
    with torch_dml.strict():
        got = F.conv_transpose1d(dx, dw, None, stride=3, padding=2, output_padding=1)
        got.backward(torch.ones_like(got))
    for g, e in ((got, out), (dx.grad, x.grad), (dw.grad, weight.grad)):
        torch.testing.assert_close(g.cpu().double(), e.detach(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_16_bit_conv_transpose2d_rounds_once(dtype):
    """Accumulated in float32 (the bias too) and rounded once: no further from a float64 reference
    than the CPU's own 16-bit result."""
    gen = torch.Generator().manual_seed(2)
    x, w, b = (torch.randn(*shape, generator=gen).to(dtype) for shape in ((2, 8, 7, 7), (8, 4, 4, 4), (4,)))
    exact = F.conv_transpose2d(x.double(), w.double(), b.double(), 2, 1)
    cpu = F.conv_transpose2d(x, w, b, 2, 1)
    with torch_dml.strict():
        got = F.conv_transpose2d(x.to("dml"), w.to("dml"), b.to("dml"), 2, 1)
    assert got.dtype == dtype
    error, cpu_error = ((t.cpu().double() - exact).abs().max().item() for t in (got, cpu))
    assert error <= cpu_error * 1.25 + 1e-6, (error, cpu_error)


def test_conv_transpose2d_forward_is_one_kernel_at_stride_1():
    """No im2col and no CPU round trip: stride 1 is one phase of the grad_input kernel, and the bias
    one add (stride 2 runs one dispatch per stride phase, 4 in all)."""
    x = torch.randn(2, 8, 6, 6).to("dml")
    w = torch.randn(8, 4, 3, 3).to("dml")
    b = torch.randn(4).to("dml")
    names = kernels_of(lambda: F.conv_transpose2d(x, w))
    assert len(names) == 1 and names[0].startswith("conv2d_grad_input/"), names
    names = kernels_of(lambda: F.conv_transpose2d(x, w, b, stride=2))
    assert [n.split("/")[0] for n in names].count("conv2d_grad_input") == 4, names
    assert [n.split("/")[0] for n in names].count("ew") == 1, names


def test_conv_transpose2d_deep_reduction_takes_the_composed_route():
    """60000 input channels into one output pixel is deeper than one workgroup may walk: the forward
    pass composes im2col from native ops instead, still on the device."""
    gen = torch.Generator().manual_seed(3)
    x, w = torch.randn(1, 60000, 1, 1, generator=gen), torch.randn(60000, 1, 1, 1, generator=gen)
    with torch_dml.strict():
        got = F.conv_transpose2d(x.to("dml"), w.to("dml")).cpu().double()
    products = x.double().flatten() * w.double().flatten()
    assert (got.flatten() - products.sum()).abs().item() <= 1e-5 * products.abs().sum().item()
    # The composed route with output padding beyond the stride (x's gradient zero-extended).
    x, w = torch.randn(1, 20000, 2, 3, generator=gen), torch.randn(20000, 1, 2, 2, generator=gen)
    with torch_dml.strict():
        got = F.conv_transpose2d(x.to("dml"), w.to("dml"), output_padding=1, dilation=2).cpu().double()
    expected = F.conv_transpose2d(x.double(), w.double(), output_padding=1, dilation=2)
    assert got.shape == expected.shape == (1, 1, 5, 6)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=2e-3)  # float32 sums of 80000 products


def test_conv_transpose2d_on_an_empty_batch():
    with torch_dml.strict():
        leaves = [t.to("dml").requires_grad_() for t in (torch.randn(0, 4, 5, 5), torch.randn(4, 6, 3, 3),
                                                          torch.randn(6))]
        out = F.conv_transpose2d(*leaves, stride=2)
        out.sum().backward()
    assert out.shape == (0, 6, 11, 11)
    assert leaves[0].grad.shape == (0, 4, 5, 5)
    assert torch.equal(leaves[1].grad.cpu(), torch.zeros(4, 6, 3, 3))
    assert torch.equal(leaves[2].grad.cpu(), torch.zeros(6))


def test_conv_transpose2d_rejects_output_padding_as_the_cpu_does():
    x, w = torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(x.to("dml"), w.to("dml"), stride=2, output_padding=2)


def test_conv_transpose_module_trains_like_the_cpu():
    """A small generator (ConvTranspose2d, batch norm, ReLU, Tanh) after three SGD steps."""
    torch.manual_seed(4)

    def build():
        return torch.nn.Sequential(
            torch.nn.ConvTranspose2d(16, 8, 4, 1, 0, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.ConvTranspose2d(8, 4, 4, 2, 1, bias=False), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
            torch.nn.ConvTranspose2d(4, 3, 4, 2, 1), torch.nn.Tanh()).double()

    cpu_model = build()
    dml_model = build()
    dml_model.load_state_dict(cpu_model.state_dict())
    dml_model.float().to("dml")
    noise = torch.randn(4, 16, 1, 1, dtype=torch.float64)
    target = torch.rand(4, 3, 16, 16, dtype=torch.float64) * 2 - 1
    for model, device, dtype in ((cpu_model, "cpu", torch.float64), (dml_model, "dml", torch.float32)):
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        with torch_dml.strict():
            for _ in range(3):
                opt.zero_grad()
                loss = F.mse_loss(model(noise.to(device, dtype)), target.to(device, dtype))
                loss.backward()
                opt.step()
    for (name, want), got in zip(cpu_model.state_dict().items(), dml_model.state_dict().values()):
        torch.testing.assert_close(got.cpu().double(), want.double(), rtol=1e-4, atol=1e-5, msg=name)
