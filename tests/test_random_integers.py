"""torch.randint / random_ run natively (strict mode): values in range for every dtype, every value of a
small range drawn about equally often, reproducible from the dml seed."""

import pytest
import torch
import torch_dml

pytestmark = pytest.mark.usefixtures("strict")

DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.float32, torch.float16,
          torch.bfloat16]
if torch_dml.has_float64_support(0):
    DTYPES.append(torch.float64)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_randint_stays_in_range_and_covers_it(dtype):
    low, high = (-5, 7) if dtype != torch.uint8 else (3, 15)
    x = torch.randint(low, high, (40000,), dtype=dtype, device="dml").cpu()
    assert x.dtype == dtype
    values = x.to(torch.int64)
    assert values.min().item() == low and values.max().item() == high - 1
    counts = torch.bincount(values - low, minlength=high - low).double()
    expected = len(x) / (high - low)
    chi_square = ((counts - expected) ** 2 / expected).sum().item()
    assert chi_square < 50, counts  # 11 degrees of freedom: 50 is far beyond any fair draw


def test_wide_int64_ranges():
    x = torch.randint(-(2**40), 2**40, (10000,), device="dml").cpu()
    assert x.min() >= -(2**40) and x.max() < 2**40
    assert x.unique().numel() > 9990  # 2^41 values: repeats are rare
    assert (x < 0).float().mean().item() == pytest.approx(0.5, abs=0.03)


def test_random_to_and_in_place_forms():
    x = torch.empty(1000, dtype=torch.int32, device="dml")
    x.random_(10)
    assert x.min().item() >= 0 and x.max().item() <= 9
    x.random_(100, 103)
    assert set(x.cpu().tolist()) == {100, 101, 102}
    b = torch.empty(1000, dtype=torch.bool, device="dml").random_(0, 2)
    assert 300 < b.sum().item() < 700


def test_reproducible_from_the_seed():
    torch_dml.manual_seed(7)
    a = torch.randint(0, 1000, (64,), device="dml").cpu()
    torch_dml.manual_seed(7)
    b = torch.randint(0, 1000, (64,), device="dml").cpu()
    c = torch.randint(0, 1000, (64,), device="dml").cpu()
    assert torch.equal(a, b) and not torch.equal(b, c)


def test_bounds_the_dtype_cannot_hold_still_raise():
    with torch_dml.strict(False), pytest.raises(RuntimeError):
        torch.empty(4, dtype=torch.int8, device="dml").random_(0, 1000)


# random_() and random_(from) without `to` end, inclusively, where the CPU's do: 2^digits for float
# types, the maximum for integer ones. int64 and float64 ranges exceed the 48 bits drawn: they fall back.
UNBOUNDED = {torch.float32: 2**24, torch.float16: 2**11, torch.bfloat16: 2**8, torch.int32: 2**31 - 1,
             torch.int16: 2**15 - 1, torch.int8: 127, torch.uint8: 255, torch.bool: 1}


@pytest.mark.parametrize("dtype", list(UNBOUNDED), ids=str)
def test_random_without_bounds_covers_the_cpu_range(dtype):
    last = UNBOUNDED[dtype]
    x = torch.empty(60000, dtype=dtype, device="dml").random_().cpu().to(torch.float64)
    assert x.min().item() >= 0 and x.max().item() <= last
    assert torch.equal(x, x.round())
    # The top eighth of the range is reached, and the mean sits near last / 2.
    assert x.max().item() >= last * 7 // 8 and abs(x.mean().item() / last - 0.5) < 0.02
    y = torch.empty(60000, dtype=dtype, device="dml").random_(last // 2, None).cpu().to(torch.float64)
    assert y.min().item() >= last // 2 and y.max().item() <= last and y.max().item() >= last - max(last // 8, 1)


def test_random_without_bounds_beyond_48_bits_falls_back():
    with pytest.raises(torch_dml.FallbackError):
        torch.empty(4, dtype=torch.int64, device="dml").random_()
