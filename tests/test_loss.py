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
