"""conv3d and conv_transpose3d (video and volumetric models, 3-D U-Nets) on the conv kernels: the depth
taps folded into a 2-D convolution's channels, forward and backward, in strict mode against a float64
reference."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import kernels_of

# (in, out, kernel, stride, padding, dilation, groups, depth, height, width)
CASES = {
    "3x3x3": (4, 6, 3, 1, 1, 1, 1, 5, 6, 7),
    "strided": (3, 5, 3, 2, 1, 1, 1, 9, 8, 7),
    "c3d_stem_1x3x3": (3, 8, (1, 3, 3), (1, 2, 2), (0, 1, 1), 1, 1, 4, 9, 9),
    "temporal_3x1x1": (6, 4, (3, 1, 1), 1, (1, 0, 0), 1, 1, 6, 5, 5),
    "dilated_depth": (2, 3, 3, 1, (2, 1, 1), (2, 1, 1), 1, 7, 5, 5),
    "groups": (6, 9, 3, (2, 1, 1), 1, 1, 3, 6, 5, 6),
    "depthwise": (4, 4, 3, 1, 1, 1, 4, 5, 5, 5),
    "no_padding_deep": (2, 2, (4, 2, 2), (3, 1, 2), 0, 1, 1, 11, 6, 7),
}


@pytest.mark.parametrize("name", list(CASES))
def test_conv3d_matches_a_float64_reference(name):
    cin, cout, k, s, p, d, g, depth, h, w = CASES[name]
    kernel = k if isinstance(k, tuple) else (k, k, k)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, cin, depth, h, w, generator=gen, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(cout, cin // g, *kernel, generator=gen, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(cout, generator=gen, dtype=torch.float64, requires_grad=True)
    out = F.conv3d(x, weight, bias, s, p, d, g)
    grad = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    out.backward(grad)
    leaves = [t.detach().float().to("dml").requires_grad_() for t in (x, weight, bias)]
    with torch_dml.strict():
        got = F.conv3d(*leaves, s, p, d, g)
        got.backward(grad.float().to("dml"))
    for label, g_, e in zip(["output", "x grad", "weight grad", "bias grad"], [got, *(t.grad for t in leaves)],
                            [out, x.grad, weight.grad, bias.grad]):
        assert g_.shape == e.shape, label
        error = (g_.detach().cpu().double() - e).abs().max().item()
        assert error <= 2e-6 * max(e.abs().max().item(), 1.0), (label, error)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_16_bit_conv3d_is_no_worse_than_the_cpu(dtype):
    gen = torch.Generator().manual_seed(1)
    x, w = torch.randn(2, 4, 5, 6, 6, generator=gen).to(dtype), torch.randn(6, 4, 3, 3, 3, generator=gen).to(dtype)
    exact = F.conv3d(x.double(), w.double(), padding=1)
    with torch_dml.strict():
        got = F.conv3d(x.to("dml"), w.to("dml"), padding=1)
    assert got.dtype == dtype
    cpu = F.conv3d(x.float(), w.float(), padding=1).to(dtype)  # the CPU's 16-bit conv3d rounds once too
    error, cpu_error = ((t.cpu().double() - exact).abs().max().item() for t in (got, cpu))
    assert error <= cpu_error * 1.25 + 1e-6, (error, cpu_error)


def test_conv3d_forward_is_one_convolution_kernel():
    x = torch.randn(1, 3, 4, 8, 8).to("dml")
    w = torch.randn(8, 3, 3, 3, 3).to("dml")
    names = kernels_of(lambda: F.conv3d(x, w, padding=1))
    assert [n.split("/")[0] for n in names].count("conv2d") == 1, names
    assert not any(n.startswith("gemm") for n in names), names


def test_a_3d_cnn_block_trains_like_the_cpu():
    torch.manual_seed(2)

    def build():
        return torch.nn.Sequential(torch.nn.Conv3d(3, 8, 3, padding=1), torch.nn.BatchNorm3d(8), torch.nn.ReLU(),
                                   torch.nn.Conv3d(8, 8, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
                                   torch.nn.AdaptiveAvgPool3d(1), torch.nn.Flatten(), torch.nn.Linear(8, 2)).double()

    cpu_model, dml_model = build(), build()
    dml_model.load_state_dict(cpu_model.state_dict())
    dml_model.float().to("dml")
    clips = torch.randn(2, 3, 4, 8, 8, dtype=torch.float64)
    labels = torch.tensor([0, 1])
    for model, device, dtype in ((cpu_model, "cpu", torch.float64), (dml_model, "dml", torch.float32)):
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for _ in range(2):
            opt.zero_grad()
            F.cross_entropy(model(clips.to(device, dtype)), labels.to(device)).backward()
            opt.step()
    for (name, want), got in zip(cpu_model.state_dict().items(), dml_model.state_dict().values()):
        torch.testing.assert_close(got.cpu().double(), want.double(), rtol=1e-4, atol=1e-5, msg=name)


# (in, out, kernel, stride, padding, output_padding, dilation, groups)
TRANSPOSED = {
    "unet_up_2x2x2": (4, 6, 2, 2, 0, 0, 1, 1),
    "k3_s2_p1_op1": (4, 6, 3, 2, 1, 1, 1, 2),
    "depthwise": (3, 3, 3, 1, 1, 0, 1, 3),
    "mixed": (2, 4, (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 0, 1), (1, 2, 1), 1),
}


@pytest.mark.parametrize("name", list(TRANSPOSED))
def test_conv_transpose3d_matches_a_float64_reference(name):
    cin, cout, k, s, p, op, d, g = TRANSPOSED[name]
    kernel = k if isinstance(k, tuple) else (k, k, k)
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(2, cin, 4, 5, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(cin, cout // g, *kernel, generator=gen, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(cout, generator=gen, dtype=torch.float64, requires_grad=True)
    out = F.conv_transpose3d(x, weight, bias, s, p, op, g, d)
    grad = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    out.backward(grad)
    leaves = [t.detach().float().to("dml").requires_grad_() for t in (x, weight, bias)]
    with torch_dml.strict():
        got = F.conv_transpose3d(*leaves, s, p, op, g, d)
        got.backward(grad.float().to("dml"))
    for label, g_, e in zip(["output", "x grad", "weight grad", "bias grad"], [got, *(t.grad for t in leaves)],
                            [out, x.grad, weight.grad, bias.grad]):
        assert g_.shape == e.shape, label
        error = (g_.detach().cpu().double() - e).abs().max().item()
        assert error <= 2e-6 * max(e.abs().max().item(), 1.0), (label, error)


def test_conv_transpose3d_output_padding_past_the_stride_is_the_cpus():
    """Allowed below the dilation; the folded convolution does not take it."""
    x, w = torch.randn(1, 2, 3, 3, 3), torch.randn(2, 2, 3, 3, 3)
    torch_dml.reset_fallback_counts()
    got = F.conv_transpose3d(x.to("dml"), w.to("dml"), output_padding=1, dilation=2)
    torch.testing.assert_close(got.cpu(), F.conv_transpose3d(x, w, output_padding=1, dilation=2), rtol=1e-5, atol=1e-5)
    assert torch_dml.fallback_counts().get("aten::convolution_overrideable", 0) == 1


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_16_bit_conv_transpose3d_rounds_once(dtype):
    """The folded 2-D input pass runs in float32 and the depth taps and bias add to it before the one
    rounding (rounding the 2-D result first put bfloat16 outputs an ulp off the CPU's)."""
    gen = torch.Generator().manual_seed(5)
    x = (torch.randn(1, 3, 4, 4, 4, generator=gen) * 4).to(dtype)
    w, b = (torch.randn(3, 3, 3, 3, 3, generator=gen) * 4).to(dtype), torch.randn(3, generator=gen).to(dtype)
    args = {"stride": 2, "padding": 2, "output_padding": 1}
    exact = F.conv_transpose3d(x.double(), w.double(), b.double(), **args)
    cpu = F.conv_transpose3d(x, w, b, **args)
    with torch_dml.strict():
        got = F.conv_transpose3d(x.to("dml"), w.to("dml"), b.to("dml"), **args)
    error, cpu_error = ((t.cpu().double() - exact).abs().max().item() for t in (got, cpu))
    assert error <= cpu_error * 1.25 + 1e-6, (error, cpu_error)
