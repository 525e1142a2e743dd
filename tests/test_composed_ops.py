"""Ops whose ATen kernels are per device, composed on dml from native ops (aten/composed_ops.cpp), and
the shrink activations' rows: in strict mode, against the CPU."""

import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("strict")


def both(fn, *tensors, grad=True):
    """fn on CPU leaves and on dml leaves: results and gradients."""
    out = []
    for device in ("cpu", "dml"):
        leaves = [t.detach().to(device).requires_grad_(grad and t.is_floating_point()) for t in tensors]
        result = fn(*leaves)
        if grad:
            result.sum().backward()
        out.append([result.detach().cpu(), *(leaf.grad.cpu() for leaf in leaves if leaf.grad is not None)])
    return out


def test_pairwise_distance_triplet_loss_and_dist():
    gen = torch.Generator().manual_seed(0)
    a, p, n = (torch.randn(16, 32, generator=gen) for _ in range(3))
    for fn in (lambda x, y, z: F.pairwise_distance(x, y), lambda x, y, z: F.pairwise_distance(x, y, p=1.0),
               lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=0.5), lambda x, y, z: torch.dist(x, y, 3)):
        cpu, dml = both(fn, a, p, n)
        for got, want in zip(dml, cpu):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_trace_and_vdot(dtype):
    x = (torch.randn(7, 5) * 10).to(dtype)
    v, w = (torch.randn(9) * 10).to(dtype), (torch.randn(9) * 10).to(dtype)
    torch.testing.assert_close(torch.trace(x.to("dml")).cpu(), torch.trace(x))
    torch.testing.assert_close(torch.vdot(v.to("dml"), w.to("dml")).cpu(), torch.vdot(v, w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("channels_last", [False, True])
def test_channel_shuffle_keeps_the_layout(channels_last):
    x = torch.randn(2, 12, 5, 3)
    d = x.to("dml")
    if channels_last:
        x, d = x.contiguous(memory_format=torch.channels_last), d.contiguous(memory_format=torch.channels_last)
    got, want = F.channel_shuffle(d, 3), F.channel_shuffle(x, 3)
    assert torch.equal(got.cpu(), want)
    assert got.is_contiguous(memory_format=torch.channels_last) == channels_last


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_cross_product(dim):
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(3, 3, 3, generator=gen)
    other_shape = [3, 3, 3]
    other_shape[(dim % 3 + 1) % 3] = 1  # broadcast along another dimension
    b = torch.randn(other_shape, generator=gen)
    cpu, dml = both(lambda x, y: torch.linalg.cross(x, y, dim=dim), a, b)
    for got, want in zip(dml, cpu):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", [F.hardshrink, F.softshrink, lambda t: F.softshrink(t, 1.5), lambda t: F.hardshrink(t, 0.0)],
                         ids=["hardshrink", "softshrink", "softshrink_1.5", "hardshrink_0"])
def test_shrinks_at_their_edges(fn):
    x = torch.tensor([-2.0, -1.5, -0.5, -0.3, -0.0, 0.0, 0.3, 0.5, 1.5, 2.0, float("nan"), float("inf"), -float("inf")])
    cpu, dml = both(fn, x)
    for got, want in zip(dml, cpu):
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(got.nan_to_num(), want.nan_to_num())
        assert torch.equal(got.signbit(), want.signbit())


def test_masked_scatter_merges_features_like_a_vision_language_model():
    """LLaVA's merge: image features scattered into the token embeddings where the image token sits,
    with gradients to both; a broadcast mask and a transposed self read in row-major order."""
    gen = torch.Generator().manual_seed(2)
    embeds, features = torch.randn(2, 10, 8, generator=gen), torch.randn(7, 8, generator=gen)
    image_tokens = torch.zeros(2, 10, dtype=torch.bool)
    image_tokens[0, 2:6], image_tokens[1, 5:8] = True, True
    mask = image_tokens.unsqueeze(-1)  # broadcast over the hidden size

    def merge(e, f):
        return e.masked_scatter(mask.to(e.device), f)

    cpu, dml = both(merge, embeds, features)
    for got, want in zip(dml, cpu):
        assert torch.equal(got, want)
    t = torch.zeros(4, 3).t()
    d = torch.zeros(4, 3).to("dml").t()
    everywhere = torch.ones(3, 4, dtype=torch.bool)
    t.masked_scatter_(everywhere, torch.arange(12.0))
    d.masked_scatter_(everywhere.to("dml"), torch.arange(12.0).to("dml"))
    assert torch.equal(d.cpu(), t)


def test_masked_scatter_with_too_short_a_source_raises_and_leaves_self():
    self = torch.zeros(3, 4).to("dml")
    mask = torch.tensor([[True, False, True, True]]).expand(3, 4)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        self.masked_scatter_(mask.to("dml"), torch.arange(5.0).to("dml"))
    assert torch.equal(self.cpu(), torch.zeros(3, 4))
    self.masked_scatter_(mask.to("dml"), torch.arange(9.0).to("dml"))
    assert self.cpu()[2].tolist() == [6.0, 0.0, 7.0, 8.0]
