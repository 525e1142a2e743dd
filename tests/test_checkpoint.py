"""torch.utils.checkpoint on dml: the recomputed forward draws the same dropout masks as the first one,
because checkpoint finds torch.dml initialised and stashes and restores its RNG state."""

import pytest
import torch
import torch_dml
from torch.utils.checkpoint import checkpoint


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    layers = [torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(32, 4)]
    return torch.nn.Sequential(*layers).to("dml")


def _loss_and_gradients(checkpointed: bool, use_reentrant: bool) -> tuple[float, list[torch.Tensor]]:
    model = _model()
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(1)).to("dml").requires_grad_()
    torch.dml.manual_seed(7)
    out = checkpoint(model, x, use_reentrant=use_reentrant) if checkpointed else model(x)
    loss = out.square().sum()
    loss.backward()
    return loss.item(), [p.grad.cpu() for p in model.parameters()] + [x.grad.cpu()]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_with_dropout_matches_plain_backward(use_reentrant):
    loss, gradients = _loss_and_gradients(checkpointed=True, use_reentrant=use_reentrant)
    expected_loss, expected_gradients = _loss_and_gradients(checkpointed=False, use_reentrant=use_reentrant)
    assert loss == expected_loss
    for actual, expected in zip(gradients, expected_gradients, strict=True):
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)


def test_device_module_reports_initialized():
    torch.ones(1, device="dml")
    assert torch.dml.is_initialized()
    assert torch.dml._initialized is True
    with pytest.raises(AttributeError):
        torch.dml.no_such_attribute  # noqa: B018


def test_rng_state_round_trip_repeats_dropout():
    x = torch.ones(256, device="dml")
    state = torch.dml.get_rng_state(device="dml:0")
    first = torch.nn.functional.dropout(x, 0.5).cpu()
    second = torch.nn.functional.dropout(x, 0.5).cpu()
    torch.dml.set_rng_state(state, device="dml:0")
    assert torch.equal(torch.nn.functional.dropout(x, 0.5).cpu(), first)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5).cpu(), second)
    assert not torch.equal(first, second)


def test_rng_state_all_and_seeds():
    states = torch.dml.get_rng_state_all()
    assert len(states) == torch_dml.device_count()
    assert all(s.dtype == torch.uint8 and s.device.type == "cpu" for s in states)
    drawn = torch.rand(8, device="dml").cpu()
    torch.dml.set_rng_state_all(states)
    assert torch.equal(torch.rand(8, device="dml").cpu(), drawn)
    torch.dml.seed()
    fresh = torch.dml.initial_seed()
    drawn = torch.rand(8, device="dml").cpu()
    torch.dml.manual_seed(fresh)
    assert torch.equal(torch.rand(8, device="dml").cpu(), drawn)
    torch.dml.seed_all()
    assert torch.dml.initial_seed() != fresh  # a fresh non-deterministic seed (equal with odds 2**-64)
