"""linspace / logspace natively (strict mode) for floating dtypes, with the CPU kernel's formula (the
first half counts up from start, the second down from end): both ends exact, the rest within an ulp of
the CPU (whose vectorised loop rounds some lanes differently)."""

import pytest
import torch

pytestmark = pytest.mark.usefixtures("strict")

ULP_TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-15, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.mark.parametrize("dtype", list(ULP_TOLERANCE), ids=str)
@pytest.mark.parametrize("start,end,steps", [(0, 1, 10), (-3.5, 7.25, 101), (5, -5, 1000), (2, 2, 1), (1, 3, 0)])
def test_linspace_and_logspace(dtype, start, end, steps):
    actual = torch.linspace(start, end, steps, dtype=dtype, device="dml").cpu()
    expected = torch.linspace(start, end, steps, dtype=dtype)
    torch.testing.assert_close(actual, expected, rtol=ULP_TOLERANCE[dtype], atol=ULP_TOLERANCE[dtype] * 4)
    if steps:
        assert actual[0] == expected[0] and actual[-1] == expected[-1]
    actual = torch.logspace(start / 4, end / 4, steps, base=3.0, dtype=dtype, device="dml").cpu()
    expected = torch.logspace(start / 4, end / 4, steps, base=3.0, dtype=dtype)
    torch.testing.assert_close(actual, expected, rtol=ULP_TOLERANCE[dtype] * 4, atol=0)
