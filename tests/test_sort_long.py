"""Rows longer than one workgroup sorts (1024) sort natively (strict mode) through sorted runs and merge
passes with the CPU's stable order; randperm, median, nanmedian and kthvalue run natively through the
same row sort."""

import math
import re

import pytest
import torch
import torch_dml
from conftest import make_tensor
from test_sort import _equal, _with_specials

pytestmark = pytest.mark.usefixtures("strict")

LONG_CASES = [
    (1025, torch.float32),
    (1025, torch.bool),
    (4097, torch.float16),
    (4097, torch.int64),
    (4097, torch.uint8),
    (3000, torch.bfloat16),
    (2049, torch.int16),
    (50257, torch.float32),
    (50257, torch.int32),
]
if torch_dml.has_float64_support(0):
    LONG_CASES.append((5000, torch.float64))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("length,dtype", LONG_CASES, ids=str)
def test_long_rows_sort_as_on_the_cpu(length, dtype, descending):
    rows = 2 if length < 10000 else 1
    x = _with_specials((rows, length), dtype)
    values, indices = torch.sort(x.to("dml"), dim=-1, descending=descending, stable=True)
    expected_values, expected_indices = torch.sort(x, dim=-1, descending=descending, stable=True)
    _equal(values, expected_values)
    _equal(indices, expected_indices)


def test_a_million_elements():
    x = _with_specials((2**20,), torch.float32)
    values, indices = torch.sort(x.to("dml"), stable=True)
    expected_values, expected_indices = torch.sort(x, stable=True)
    _equal(values, expected_values)
    _equal(indices, expected_indices)


@pytest.mark.parametrize("descending", [False, True])
def test_many_ties_keep_index_order(descending):
    x = torch.randint(0, 3, (3, 6000), generator=torch.Generator().manual_seed(1)).float()
    x[1] = 5.0  # one row all equal
    _equal(torch.argsort(x.to("dml"), dim=1, descending=descending, stable=True),
           torch.argsort(x, dim=1, descending=descending, stable=True))


def test_other_dims_and_non_contiguous_inputs():
    x = make_tensor((3000, 3), torch.float32)
    _equal(torch.sort(x.to("dml"), dim=0).indices, torch.sort(x, dim=0, stable=True).indices)
    strided = x.to("dml").t()[:, ::2]
    _equal(torch.sort(strided, dim=1, descending=True).values, torch.sort(x.t()[:, ::2], dim=1, descending=True).values)
    _equal(torch.msort(x.to("dml")), torch.msort(x))


@pytest.mark.parametrize("k", [1, 50, 1000, 1500, 3000])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_over_a_vocabulary(largest, k):
    logits = _with_specials((2, 50257), torch.float32)
    values, indices = torch.topk(logits.to("dml"), k, dim=-1, largest=largest)
    expected, _ = torch.topk(logits, k, dim=-1, largest=largest)
    _equal(values, expected)
    _equal(torch.gather(logits.to("dml"), 1, indices), expected)


@pytest.mark.parametrize("k", [0, 7, 4097])
def test_topk_of_long_rows_along_other_dims(k):
    x = make_tensor((4097, 3), torch.int16)
    values, indices = torch.topk(x.to("dml"), k, dim=0)
    expected, _ = torch.topk(x, k, dim=0)
    _equal(values, expected)
    _equal(torch.gather(x.to("dml"), 0, indices), expected)


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1024, 1025, 100000])
def test_randperm_is_a_permutation(n):
    perm = torch.randperm(n, device="dml")
    assert perm.device.type == "dml" and perm.dtype == torch.int64
    _equal(torch.sort(perm).values, torch.arange(n))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.uint8, torch.float32, torch.float16], ids=str)
def test_randperm_dtypes(dtype):
    perm = torch.randperm(200, dtype=dtype, device="dml")
    assert perm.dtype == dtype
    assert torch.equal(torch.sort(perm.cpu().long()).values, torch.arange(200))


def test_randperm_draws_every_order_about_equally_often():
    torch_dml.manual_seed(11)
    draws = 600
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(draws):
        key = tuple(torch.randperm(3, device="dml").cpu().tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    expected = draws / 6
    chi_square = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi_square < 30, counts  # 5 degrees of freedom: 30 is far beyond any fair draw


def test_randperm_reproducible_from_the_seed_and_a_generator():
    torch_dml.manual_seed(3)
    a = torch.randperm(5000, device="dml").cpu()
    torch_dml.manual_seed(3)
    b = torch.randperm(5000, device="dml").cpu()
    c = torch.randperm(5000, device="dml").cpu()
    assert torch.equal(a, b) and not torch.equal(b, c)
    generator = torch.Generator(device="dml").manual_seed(4)
    d = torch.randperm(5000, device="dml", generator=generator).cpu()
    generator.manual_seed(4)
    out = torch.empty(0, dtype=torch.int64, device="dml")
    torch.randperm(5000, generator=generator, out=out)
    assert torch.equal(d, out.cpu())


@pytest.mark.parametrize("n,dtype", [(-1, torch.int64), (3000, torch.float16)], ids=str)
def test_randperm_errors_as_on_the_cpu(n, dtype):
    with pytest.raises(RuntimeError) as expected:
        torch.randperm(n, dtype=dtype)
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
        torch.randperm(n, dtype=dtype, device="dml")


def _with_nans(shape, dtype, every):
    x = make_tensor(shape, dtype, seed=2)
    if dtype.is_floating_point:
        x.view(-1)[::every] = float("nan")
    if x.numel() > 2:
        x.view(-1)[1::5] = x.view(-1)[2]  # repeated values: the index rule shows
    return x


MEDIAN_CASES = [((7,), None), ((4, 1500), 1), ((5, 6), 0), ((3, 4, 5), -1), ((2, 3000), 0), ((), None)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("shape,dim", MEDIAN_CASES, ids=str)
@pytest.mark.parametrize("op", [torch.median, torch.nanmedian])
def test_median_as_on_the_cpu(op, shape, dim, dtype):
    # NaN in only some rows: median's first-NaN rule and nanmedian's skipping both show.
    x = _with_nans(shape, dtype, every=23)
    if dim is None:
        _equal(op(x.to("dml")), op(x))
        return
    for keepdim in (False, True):
        values, indices = op(x.to("dml"), dim=dim, keepdim=keepdim)
        expected_values, expected_indices = op(x, dim=dim, keepdim=keepdim)
        _equal(values, expected_values)
        _equal(indices, expected_indices)


def test_nanmedian_of_all_nan_rows():
    x = torch.full((3, 2000), float("nan"))
    x[1, :1500] = torch.arange(1500.0)
    values, indices = torch.nanmedian(x.to("dml"), dim=1)
    expected_values, _ = torch.nanmedian(x, dim=1)
    _equal(values, expected_values)
    assert indices.cpu()[1].item() == 749
    assert math.isnan(torch.nanmedian(torch.full((5,), float("nan"), device="dml")).item())


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape,dim,k", [((9,), 0, 1), ((4, 1500), 1, 700), ((6, 5), 0, 6), ((2, 3, 2000), -1, 2000),
                                         ((2, 5000), 1, 3)],
                         ids=str)
def test_kthvalue_as_on_the_cpu(shape, dim, k, dtype):
    x = _with_nans(shape, dtype, every=31)
    values, indices = torch.kthvalue(x.to("dml"), k, dim=dim, keepdim=True)
    expected_values, _ = torch.kthvalue(x, k, dim=dim, keepdim=True)
    _equal(values, expected_values)
    # Among equal values the CPU's quickselect may return any index: check it points at the value.
    _equal(torch.gather(x.to("dml"), dim, indices), expected_values)


def test_out_forms_and_errors():
    x = make_tensor((3, 2000), torch.float32)
    values, indices = torch.empty(0, device="dml"), torch.empty(0, dtype=torch.int64, device="dml")
    torch.median(x.to("dml"), dim=1, out=(values, indices))
    expected = torch.median(x, dim=1)
    _equal(values, expected.values)
    _equal(indices, expected.indices)
    values, indices = values.resize_(0), indices.resize_(0)
    torch.kthvalue(x.to("dml"), 3, dim=0, out=(values, indices))
    _equal(values, torch.kthvalue(x, 3, dim=0).values)
    with torch_dml.strict(False), pytest.raises(RuntimeError, match="out of range"):
        torch.kthvalue(x.to("dml"), 2001, dim=1)
