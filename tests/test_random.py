"""Native random kernels (Philox): distributions, reproducibility, dropout; strict mode."""

import pytest
import torch
import torch_dml

pytestmark = pytest.mark.usefixtures("strict")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_uniform_and_normal_statistics(dtype):
    torch.dml.manual_seed(0)
    u = torch.empty(200_000, dtype=dtype, device="dml").uniform_(-2.0, 3.0)
    values = u.float().cpu()
    assert values.min() >= -2.0 and values.max() <= 3.0
    assert abs(values.mean().item() - 0.5) < 0.02
    assert abs(values.var().item() - 25 / 12) < 0.05
    n = torch.empty(200_000, dtype=dtype, device="dml").normal_(1.0, 2.0)
    values = n.float().cpu()
    assert abs(values.mean().item() - 1.0) < 0.03
    assert abs(values.std().item() - 2.0) < 0.03
    # roughly 68% within one standard deviation
    assert abs(((values - 1.0).abs() < 2.0).float().mean().item() - 0.6827) < 0.01


def test_distinct_elements_and_calls():
    torch.dml.manual_seed(1)
    a = torch.rand(4096, device="dml").cpu()
    b = torch.rand(4096, device="dml").cpu()
    assert a.unique().numel() > 4000
    assert not torch.equal(a, b)


def test_reproducible_and_independent_of_launch_shape():
    torch.dml.manual_seed(7)
    whole = torch.rand(1000, device="dml").cpu()
    torch.dml.manual_seed(7)
    strided = torch.empty(2000, device="dml")[::2]
    strided.uniform_()
    assert torch.equal(strided.cpu(), whole)


def test_bernoulli_and_integer_targets():
    torch.dml.manual_seed(2)
    b = torch.empty(100_000, device="dml").bernoulli_(0.3)
    assert abs(b.cpu().mean().item() - 0.3) < 0.01
    flags = torch.empty(1000, dtype=torch.bool, device="dml").bernoulli_(0.5).cpu()
    assert flags.dtype == torch.bool and 400 < flags.sum().item() < 600


def test_dropout_scales_kept_values_and_returns_the_mask():
    torch.dml.manual_seed(3)
    x = torch.randn(10_000)
    out, mask = torch.ops.aten.native_dropout(x.to("dml"), 0.25, True)
    out, mask = out.cpu(), mask.cpu()
    assert mask.dtype == torch.bool and abs(mask.float().mean().item() - 0.75) < 0.02
    torch.testing.assert_close(out, torch.where(mask, x / 0.75, torch.zeros_like(x)))
    same, _ = torch.ops.aten.native_dropout(x.to("dml"), 0.25, False)
    assert torch.equal(same.cpu(), x)


def test_invalid_arguments():
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.empty(3, device="dml").normal_(0, -1)
    with pytest.raises(RuntimeError, match="from=2"):
        torch.empty(3, device="dml").uniform_(2, 1)
    assert torch_dml.device_count() >= 1


def test_a_call_larger_than_one_binding_runs_in_pieces_with_the_values_of_one_launch():
    binding = torch_dml.get_device_properties(0).limits["maxStorageBufferBindingSize"]
    n = binding // 4 + 4096 + 3  # float32 elements: one binding's worth, then a tail in a second piece
    if n > 80_000_000:
        pytest.skip("this adapter binds more than 320 MB: the split would need a tensor too large to test here")
    torch.dml.manual_seed(3)
    whole = torch.rand(n, device="dml").cpu()
    torch.dml.manual_seed(3)
    head = torch.rand(4096, device="dml").cpu()
    assert torch.equal(whole[:4096], head)
    # The piece after the first one draws its own threads' numbers, not the first piece's again.
    tail = whole[-4099:]
    assert not torch.equal(tail, whole[:4099])
    assert whole.min().item() >= 0.0 and whole.max().item() < 1.0
    assert abs(whole.mean().item() - 0.5) < 1e-3
    assert abs(tail.mean().item() - 0.5) < 0.03
