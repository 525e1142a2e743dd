"""GradScaler's two ops run natively (strict mode) and follow the CPU's decisions step by step:
unscaling, inf/NaN detection, back-off and growth."""

import pytest
import torch

pytestmark = pytest.mark.usefixtures("strict")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("poison", [None, float("inf"), float("nan"), -float("inf")])
def test_non_finite_check_and_unscale(dtype, poison):
    gen = torch.Generator().manual_seed(0)
    grads = [torch.randn(5, 3, generator=gen).to(dtype), torch.randn(7, generator=gen).to(dtype),
             torch.empty(0, dtype=dtype)]
    if poison is not None:
        grads[1][4] = poison
    mine = [g.to("dml") for g in grads]
    found_inf = torch.zeros(1, device="dml")
    torch._amp_foreach_non_finite_check_and_unscale_(mine, found_inf, torch.full((1,), 0.25, device="dml"))
    assert found_inf.item() == (0.0 if poison is None else 1.0)
    # Every gradient is unscaled, overflow or not, as CUDA does (the CPU kernel leaves them when it
    # finds one; the step is skipped either way).
    for actual, g in zip(mine, grads, strict=True):
        torch.testing.assert_close(actual.cpu(), (g.float() * 0.25).to(dtype), equal_nan=True)


def test_found_inf_stays_set():
    found_inf = torch.ones(1, device="dml")
    torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(3, device="dml")], found_inf,
                                                     torch.ones(1, device="dml"))
    assert found_inf.item() == 1.0


def test_update_scale_follows_the_cpu():
    """Growth every third clean step, back-off on an overflow, no growth past float32's range."""
    found_sequence = [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    states = {}
    for device in ("cpu", "dml"):
        scale = torch.full((1,), 2.0**126, device=device)
        tracker = torch.zeros(1, dtype=torch.int32, device=device)
        history = []
        for found in found_sequence:
            torch._amp_update_scale_(scale, tracker, torch.full((1,), float(found), device=device), 4.0, 0.5, 3)
            history.append((scale.item(), tracker.item()))
        states[device] = history
    assert states["dml"] == states["cpu"]


def test_grad_scaler_training_matches_the_cpu():
    results = {}
    for device in ("cpu", "dml"):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 3).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(device, init_scale=2.0**16, growth_interval=2)
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(1)).to(device)
        for step in range(5):
            optimizer.zero_grad()
            loss = model(x).square().mean() * (float("inf") if step == 2 else 1.0)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        results[device] = (scaler.get_scale(), [p.detach().cpu() for p in model.parameters()])
    assert results["dml"][0] == results["cpu"][0]
    for a, e in zip(results["dml"][1], results["cpu"][1], strict=True):
        torch.testing.assert_close(a, e)
