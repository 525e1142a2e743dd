"""nll_loss / cross_entropy forward and backward, native (strict mode), against the CPU."""

import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOLERANCE = {torch.float32: {"rtol": 1e-5, "atol": 1e-6}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
             torch.bfloat16: {"rtol": 3e-2, "atol": 3e-2}}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_forward_and_backward(dtype, reduction, weighted):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(300, 7, generator=gen).log_softmax(1).to(dtype)
    target = torch.randint(0, 7, (300,), generator=gen)
    target[::5] = -100
    weight = torch.rand(7, generator=gen).to(dtype) if weighted else None
    _check_against_cpu(F.nll_loss, x, target, weight, reduction, gen)


def _check_against_cpu(loss_fn, x, target, weight, reduction, gen):
    """loss_fn on dml in x's dtype against the CPU in float32, forward and backward."""
    dtype = x.dtype
    d = x.to("dml").requires_grad_()
    loss = loss_fn(d, target.to("dml"), weight=None if weight is None else weight.to("dml"), reduction=reduction)
    c = x.float().requires_grad_()
    expected = loss_fn(c, target, weight=None if weight is None else weight.float(), reduction=reduction)
    torch.testing.assert_close(loss.cpu(), expected.to(dtype), **TOLERANCE[dtype])
    grad = torch.randn(expected.shape, generator=gen)
    loss.backward(grad.to(dtype).to("dml"))
    expected.backward(grad.to(dtype).float())
    torch.testing.assert_close(d.grad.cpu(), c.grad.to(dtype), **TOLERANCE[dtype])


def test_cross_entropy_trains_natively():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(16, 5, generator=gen)
    target = torch.randint(0, 5, (16,), generator=gen)
    d = logits.to("dml").requires_grad_()
    F.cross_entropy(d, target.to("dml")).backward()
    c = logits.clone().requires_grad_()
    F.cross_entropy(c, target).backward()
    torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-5, atol=1e-6)


def test_out_of_range_target_is_an_index_error():
    # Checked on the device: raised at the next wait (tests/test_device_checks.py).
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        F.nll_loss(torch.zeros(2, 3).to("dml"), torch.tensor([0, 3]).to("dml")).item()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_loss_forward_and_backward(dtype, reduction):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(13, 9, generator=gen).to(dtype)
    y = torch.randn(13, 9, generator=gen).to(dtype)
    d = x.to("dml").requires_grad_()
    c = x.clone().requires_grad_()
    loss = F.mse_loss(d, y.to("dml"), reduction=reduction)
    expected = F.mse_loss(c, y, reduction=reduction)
    torch.testing.assert_close(loss.cpu(), expected, **TOLERANCE[dtype])
    loss.sum().backward()
    expected.sum().backward()
    torch.testing.assert_close(d.grad.cpu(), c.grad, **TOLERANCE[dtype])


def test_dropout_backward_is_native():
    x = torch.randn(64, 32).to("dml").requires_grad_()
    y = F.dropout(x, p=0.25, training=True)
    y.sum().backward()
    kept = y.detach().cpu() != 0
    expected = kept.float() / 0.75
    torch.testing.assert_close(x.grad.cpu(), expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss2d_over_images(dtype, reduction, weighted):
    """cross_entropy on (N, C, H, W) scores (segmentation) reaches nll_loss2d, which runs as nll_loss
    over the pixels."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 5, 6, 7, generator=gen).to(dtype)
    target = torch.randint(0, 5, (3, 6, 7), generator=gen)
    target[0, ::2] = -100
    weight = torch.rand(5, generator=gen).to(dtype) if weighted else None
    _check_against_cpu(F.cross_entropy, x, target, weight, reduction, gen)


def _edge_values(gen, n):
    """Normal draws with exact ties, zeros, both infinities and NaN among them."""
    x = torch.randn(n, generator=gen) * 3
    x[:8] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1.0, -1.0, 0.5])
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss, parameter", [("smooth_l1_loss", {"beta": 1.0}), ("smooth_l1_loss", {"beta": 0.0}),
                                             ("smooth_l1_loss", {"beta": 0.25}), ("huber_loss", {"delta": 1.0}),
                                             ("huber_loss", {"delta": 2.5})], ids=str)
def test_smooth_l1_and_huber_losses_follow_the_cpu(loss, parameter, reduction, dtype):
    """The CPU's branches at |x| = beta, x = 0 with beta 0 and NaN: the elementwise loss and gradient
    bit for bit (reduction none); reduced, the loss within the sum's reordering and the gradient within
    an ulp (the CPU's vector loop orders the mean's norm, the gradient and delta its own way)."""
    gen = torch.Generator().manual_seed(1)
    x = _edge_values(gen, 300).to(dtype)
    target = torch.randn(300, generator=gen).to(dtype)
    target[5:8] = torch.tensor([0.0, 0.0, 1.5])  # x - target exactly 1, -1, -beta 1
    if reduction != "none":
        x, target = x[8:], target[8:]  # keep NaN and inf out of the sums
    fn = getattr(F, loss)
    c = x.clone().requires_grad_()
    expected = fn(c, target, reduction=reduction, **parameter)
    grad = torch.randn(expected.shape, generator=gen).to(dtype)
    expected.backward(grad)
    d = x.to("dml").requires_grad_()
    got = fn(d, target.to("dml"), reduction=reduction, **parameter)
    got.backward(grad.to("dml"))
    if reduction == "none":
        assert torch.equal(got.cpu().isnan(), expected.isnan())
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=0, atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got.cpu(), expected)
        torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=2.5e-7 if dtype == torch.float32 else 5e-16, atol=0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_smooth_l1_and_huber_in_16_bits(dtype):
    gen = torch.Generator().manual_seed(2)
    x, target = torch.randn(64, 33, generator=gen).to(dtype), torch.randn(64, 33, generator=gen).to(dtype)
    for fn in (F.smooth_l1_loss, F.huber_loss):
        for reduction in ("none", "mean"):
            got = fn(x.to("dml"), target.to("dml"), reduction=reduction)
            assert got.dtype == dtype
            torch.testing.assert_close(got.cpu().float(), fn(x.float(), target.float(), reduction=reduction).to(dtype).float(),
                                       **TOLERANCE[dtype])


def test_negative_beta_and_delta_raise_the_cpus_errors():
    x = torch.randn(4).to("dml")
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
        F.huber_loss(x, x, delta=0.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_with_logits_is_native(dtype, weighted):
    """The detection and multi-label loss: log_sigmoid forward and backward (and pos_weight's product)
    on the device, against the CPU."""
    gen = torch.Generator().manual_seed(3)
    logits = (torch.randn(128, 20, generator=gen) * 8).to(dtype)
    target = torch.rand(128, 20, generator=gen).round().to(dtype)
    pos_weight = torch.rand(20, generator=gen).to(dtype) * 3 if weighted else None
    c = logits.clone().requires_grad_()
    expected = F.binary_cross_entropy_with_logits(c, target, pos_weight=pos_weight)
    expected.backward()
    d = logits.to("dml").requires_grad_()
    got = F.binary_cross_entropy_with_logits(d, target.to("dml"),
                                             pos_weight=None if pos_weight is None else pos_weight.to("dml"))
    got.backward()
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-14}
    torch.testing.assert_close(got.cpu(), expected, **tol)
    torch.testing.assert_close(d.grad.cpu(), c.grad, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_matches_the_cpu(dtype, reduction, weighted):
    """nn.BCELoss (a GAN discriminator's, a VAE's reconstruction loss): the clamp of the logs at -100 at
    0 and 1, and a gradient bit for bit the CPU's, epsilon (a float32 1e-12 also in float64) included."""
    gen = torch.Generator().manual_seed(4)
    x = torch.rand(64, 10, generator=gen).to(dtype)
    x[0, :4] = torch.tensor([0.0, 1.0, 1e-30, 1 - 1e-7]).to(dtype)
    target = torch.rand(64, 10, generator=gen).round().to(dtype)
    target[1] = 0.25
    weight = torch.rand(10, generator=gen).to(dtype) if weighted else None
    c = x.clone().requires_grad_()
    expected = F.binary_cross_entropy(c, target, weight, reduction=reduction)
    expected.backward(torch.ones_like(expected))
    d = x.to("dml").requires_grad_()
    got = F.binary_cross_entropy(d, target.to("dml"), None if weight is None else weight.to("dml"), reduction=reduction)
    got.backward(torch.ones_like(got))
    torch.testing.assert_close(got.cpu(), expected, rtol=2e-6 if dtype == torch.float32 else 1e-14, atol=0)
    torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=0, atol=0)


@pytest.mark.parametrize("bad", ["input above 1", "input NaN", "target below 0"])
def test_binary_cross_entropy_refuses_values_outside_0_1_at_the_next_wait(bad):
    """The CPU's check, recorded on the device rather than read back: the loss call itself returns, and
    the error (naming the op, the CPU's message) comes with the next wait for the device."""
    x, target = torch.full((6,), 0.5), torch.full((6,), 0.5)
    if bad == "input above 1":
        x[3] = 1.5
    elif bad == "input NaN":
        x[2] = float("nan")
    else:
        target[4] = -1.0
    which = "target" if bad.startswith("target") else "input"
    with pytest.raises(RuntimeError, match=f"all elements of {which} should be between 0 and 1"):
        F.binary_cross_entropy(x, target)
    loss = F.binary_cross_entropy(x.to("dml"), target.to("dml"))
    with pytest.raises(RuntimeError, match=f"binary_cross_entropy.*all elements of {which} should be between 0 and 1"):
        loss.item()
    # The failure is reported once; the device goes on.
    assert F.binary_cross_entropy(torch.full((3,), 0.5).to("dml"), torch.ones(3).to("dml")).item() == pytest.approx(0.6931, abs=1e-4)


def test_binary_cross_entropy_does_not_wait_for_the_device():
    """The domain check is recorded, not read back: a BCE step waits no more than an MSE step."""
    import torch_dml
    from helpers import kernels_of

    x, target = torch.rand(256).to("dml").requires_grad_(), torch.rand(256).to("dml")

    def waits(loss):
        loss(x, target).backward()  # compiles the kernels
        torch_dml.synchronize()
        before = torch_dml._C._wait_count(0)
        loss(x, target).backward()
        return torch_dml._C._wait_count(0) - before

    assert waits(F.binary_cross_entropy) == waits(F.mse_loss)
    names = kernels_of(lambda: F.binary_cross_entropy(x, target).backward())
    rows = [n.split("/")[1] for n in names if n.startswith("ew/")]
    assert "binary_cross_entropy" in rows and "binary_cross_entropy_backward" in rows, names
    assert sum(n.startswith("index_check") for n in names) == 2, names
