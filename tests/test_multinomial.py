"""multinomial and exponential_ natively (strict mode) on the device's Philox stream: the samples are
not the CPU's (a different generator), so the tests check the distribution: frequencies, categories
never drawn, no repeats without replacement, reproducibility under a seed, and the CPU's errors."""

import pytest
import torch

pytestmark = pytest.mark.usefixtures("strict")

PROBS = torch.tensor([0.1, 0.2, 0.0, 0.7])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
def test_frequencies_with_replacement(dtype):
    torch.dml.manual_seed(0)
    weights = (PROBS * 3).to(dtype).to("dml")  # unnormalised weights, as the CPU accepts
    draws = torch.multinomial(weights, 100_000, replacement=True)
    assert draws.dtype == torch.int64 and draws.shape == (100_000,) and draws.device.type == "dml"
    counts = torch.bincount(draws.cpu(), minlength=4).double() / 100_000
    assert counts[2] == 0
    assert torch.allclose(counts, PROBS.double(), atol=0.01), counts


def test_one_draw_per_row_follows_each_row():
    torch.dml.manual_seed(1)
    rows = torch.tensor([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]).repeat(5000, 1).to("dml")
    draws = torch.multinomial(rows, 1).cpu()
    assert draws.shape == (10_000, 1)
    assert (draws[0::2] == 2).all()
    second = draws[1::2]
    assert (second != 2).all() and abs((second == 0).double().mean().item() - 0.5) < 0.03


def test_without_replacement_draws_distinct_nonzero_categories():
    torch.dml.manual_seed(2)
    rows = PROBS.repeat(2000, 1).to("dml")
    draws = torch.multinomial(rows, 3).cpu()
    assert (draws != 2).all()
    assert all(len(set(row.tolist())) == 3 for row in draws)
    # the first draw of each row follows the probabilities (the exponential race's first place)
    first = torch.bincount(draws[:, 0], minlength=4).double() / 2000
    assert torch.allclose(first, PROBS.double(), atol=0.04), first


def test_reproducible_under_a_seed_and_a_generator():
    weights = torch.rand(8, 50, device="dml")
    torch.dml.manual_seed(3)
    a = torch.multinomial(weights, 5)
    torch.dml.manual_seed(3)
    b = torch.multinomial(weights, 5)
    assert torch.equal(a.cpu(), b.cpu())
    generator = torch.Generator(device="dml").manual_seed(4)
    c = torch.multinomial(weights, 5, replacement=True, generator=generator)
    generator.manual_seed(4)
    d = torch.multinomial(weights, 5, replacement=True, generator=generator)
    assert torch.equal(c.cpu(), d.cpu())


def test_the_cpu_errors():
    for bad in ([0.5, -0.1], [0.5, float("nan")], [0.0, 0.0]):
        with pytest.raises(RuntimeError):
            torch.multinomial(torch.tensor(bad, device="dml"), 1)
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(torch.tensor([0.5, 0.5], device="dml"), 3)
    with pytest.raises(RuntimeError, match="not enough"):
        torch.multinomial(torch.tensor([0.5, 0.0, 0.0], device="dml"), 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_exponential(dtype):
    torch.dml.manual_seed(5)
    x = torch.empty(200_000, dtype=dtype, device="dml").exponential_(2.0).double().cpu()
    assert (x > 0).all()
    assert abs(x.mean().item() - 0.5) < 0.01
    assert abs(x.std().item() - 0.5) < 0.01
