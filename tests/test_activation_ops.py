"""Activations outside the generated registrations' shapes, native in strict mode: log_sigmoid (an
output and a buffer), glu (two halves of one input), prelu (two gradients), and rsub."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import kernels_of

pytestmark = pytest.mark.usefixtures("strict")


def edge_values(*shape, seed=0, scale=6.0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=gen) * scale
    flat = x.view(-1)
    flat[:7] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 90.0, -90.0])
    return x


def forward_and_backward(fn, inputs, dtype, grad_seed=1):
    """fn's result and every input's gradient on the CPU and on dml, in dtype."""
    results = []
    for device in ("cpu", "dml"):
        leaves = [t.detach().to(dtype).to(device).clone().requires_grad_() for t in inputs]
        out = fn(*leaves)
        grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(grad_seed)).to(dtype)
        out.backward(grad.to(device))
        results.append([out.detach().cpu(), *(leaf.grad.cpu() for leaf in leaves)])
    return results


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_logsigmoid_matches_the_cpu_at_its_edges(dtype):
    cpu, dml = forward_and_backward(F.logsigmoid, [edge_values(40, 33)], dtype)
    for got, want in zip(dml, cpu):
        assert torch.equal(got.isnan(), want.isnan())
        # exp and log1p are the adapter's: a few ulps, never a branch or an infinity apart; exp(-90)
        # is a float32 subnormal, which a driver may flush (lavapipe does).
        torch.testing.assert_close(got, want, rtol=4e-6 if dtype == torch.float32 else 1e-13, atol=1e-38,
                                   equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_logsigmoid_in_16_bits(dtype):
    cpu, dml = forward_and_backward(F.logsigmoid, [torch.randn(64, 70) * 4], dtype)
    for got, want in zip(dml, cpu):
        assert got.dtype == dtype
        torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-2)


def test_logsigmoid_launches_one_kernel_each_way():
    x = torch.randn(1000).to("dml").requires_grad_()
    assert [n.split("/")[1] for n in kernels_of(lambda: F.logsigmoid(x))] == ["log_sigmoid"]
    y = F.logsigmoid(x)
    names = kernels_of(lambda: y.backward(torch.ones_like(y)))
    assert "log_sigmoid_backward" in [n.split("/")[1] for n in names if n.startswith("ew/")], names


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_glu_matches_the_cpu(dim, dtype):
    cpu, dml = forward_and_backward(lambda t: F.glu(t, dim), [edge_values(6, 8, 10, seed=2)], dtype)
    # The second half's gradient has (1 - sigmoid(b)), which cancels where sigmoid(b) nears 1: an ulp
    # of the adapter's exp against the CPU's shows there as 1e-5 of the value.
    for got, want in zip(dml, cpu):
        torch.testing.assert_close(got, want, rtol=4e-6 if dtype == torch.float32 else 1e-13,
                                   atol=5e-6 if dtype == torch.float32 else 1e-14, equal_nan=True)


def test_glu_of_a_view_and_into_out():
    base = torch.randn(9, 12)
    view = base.t()[:, 1:]  # non-contiguous, 12 x 8
    out = torch.empty(6, 8).to("dml")
    torch._C._nn.glu(base.to("dml").t()[:, 1:], 0, out=out)
    torch.testing.assert_close(out.cpu(), F.glu(view, 0))


def test_glu_rejects_an_odd_dimension_as_the_cpu_does():
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 5"):
        F.glu(torch.randn(2, 5).to("dml"), 1)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(torch.randn(2, 5), 1)


@pytest.mark.parametrize("channels", [1, 6])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_prelu_forward_and_both_gradients(channels, dtype):
    x = edge_values(4, 6, 5, 5, seed=3)
    x.view(-1)[4] = 1.0  # NaN's gradient into the weight's sum would make every channel NaN
    weight = torch.rand(channels) * 0.5
    cpu, dml = forward_and_backward(F.prelu, [x, weight], dtype)
    for got, want in zip(dml, cpu):
        torch.testing.assert_close(got, want, rtol=2e-6 if dtype == torch.float32 else 1e-13, atol=1e-6)


def test_prelu_module_trains_without_the_cpu():
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.PReLU(8), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 6 * 6, 2)).to("dml")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3, 8, 8).to("dml"), torch.tensor([0, 1, 1, 0]).to("dml")
    torch_dml.reset_fallback_counts()
    for _ in range(2):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    assert torch_dml.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_rsub_of_two_tensors(dtype):
    a, b = (torch.randn(5, 7) * 10).to(dtype), (torch.randn(7) * 10).to(dtype)
    for alpha in (1, 3):
        torch.testing.assert_close(torch.rsub(a.to("dml"), b.to("dml"), alpha=alpha).cpu(), torch.rsub(a, b, alpha=alpha))
