"""sort / argsort / topk run natively (strict mode) with the CPU's stable order: NaN after everything
ascending and before everything descending, -0.0 equal to 0.0, ties in index order."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")


def _with_specials(shape, dtype):
    x = make_tensor(shape, dtype)
    if dtype.is_floating_point:
        flat = x.view(-1)
        flat[::7] = float("nan")
        flat[1::11] = 0.0
        flat[2::11] = -0.0
        flat[3::13] = float("inf")
        flat[4::13] = -float("inf")
        if flat.numel() > 6:
            flat[5::9] = flat[6]  # repeats, for stability
    elif dtype != torch.bool:
        x.view(-1)[::5] = x.view(-1)[1]
    return x


def _equal(actual, expected):
    assert actual.device.type == "dml" and actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [((6, 300), 1), ((70, 3), 0), ((2, 3, 1024), -1), ((5,), 0)])
def test_stable_sort(dtype, descending, shape, dim):
    x = _with_specials(shape, dtype)
    values, indices = torch.sort(x.to("dml"), dim=dim, descending=descending, stable=True)
    expected_values, expected_indices = torch.sort(x, dim=dim, descending=descending, stable=True)
    _equal(values, expected_values)
    _equal(indices, expected_indices)
    _equal(torch.argsort(x.to("dml"), dim=dim, descending=descending, stable=True),
           torch.argsort(x, dim=dim, descending=descending, stable=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    x = make_tensor((8, 100), dtype)
    values, indices = torch.topk(x.to("dml"), 7, dim=1, largest=largest)
    expected_values, _ = torch.topk(x, 7, dim=1, largest=largest)
    _equal(values, expected_values)
    # Among equal values topk may pick any index: check the indices point at the values.
    _equal(torch.gather(x.to("dml"), 1, indices), expected_values)


def test_sort_forms():
    x = torch.randn(4, 9)
    values, indices = torch.empty(0, device="dml"), torch.empty(0, dtype=torch.long, device="dml")
    torch.sort(x.to("dml"), dim=0, out=(values, indices))
    expected = torch.sort(x, dim=0)
    _equal(values, expected.values)
    _equal(torch.sort(torch.tensor(2.5, device="dml")).values, torch.tensor(2.5))
    _equal(torch.sort(torch.empty(0, 3, device="dml"), dim=0).values, torch.empty(0, 3))
    _equal(torch.sort(x.t().to("dml"), dim=1).values, torch.sort(x.t(), dim=1).values)

