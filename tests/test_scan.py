"""cumsum / cumprod / logcumsumexp, nonzero, masked_select and boolean-mask indexing run natively
(strict mode) and agree with the CPU."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")

FLOAT_TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-4}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
                   torch.bfloat16: {"rtol": 5e-2, "atol": 5e-2}, torch.float64: {"rtol": 1e-10, "atol": 1e-10}}


def _compare(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.device.type == "dml"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(actual.cpu(), expected, **FLOAT_TOLERANCE[expected.dtype])
    else:
        assert torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(dtype, dim):
    x = make_tensor((5, 600, 3), dtype) if not dtype.is_floating_point else torch.randn(5, 600, 3).to(dtype)
    _compare(torch.cumsum(x.to("dml"), dim), torch.cumsum(x, dim))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8], ids=str)
def test_cumprod(dtype):
    gen = torch.Generator().manual_seed(0)
    x = (torch.rand(4, 40, generator=gen) + 0.5).to(dtype) if dtype.is_floating_point else \
        torch.randint(-2, 3, (4, 40), generator=gen).to(dtype)
    _compare(torch.cumprod(x.to("dml"), 1), torch.cumprod(x, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_logcumsumexp(dtype):
    x = (torch.randn(3, 700) * 10).to(dtype)
    x[0, 5] = -float("inf")
    x[1, :3] = -float("inf")
    _compare(torch.logcumsumexp(x.to("dml"), 1), torch.logcumsumexp(x, 1))


def test_scan_forms_and_edge_cases():
    x = torch.randn(4, 5)
    d = x.to("dml")
    _compare(torch.cumsum(d, 1, dtype=torch.int32), torch.cumsum(x, 1, dtype=torch.int32))
    out = torch.empty(0, device="dml")
    torch.cumsum(d, 1, out=out)
    _compare(out, torch.cumsum(x, 1))
    e = d.clone()
    e.cumsum_(0)
    _compare(e, x.cumsum(0))
    _compare(torch.cumsum(torch.tensor(3.0, device="dml"), 0), torch.cumsum(torch.tensor(3.0), 0))
    _compare(torch.cumsum(torch.empty(0, 3, device="dml"), 0), torch.cumsum(torch.empty(0, 3), 0))
    _compare(torch.cumsum(d.t(), 0), torch.cumsum(x.t(), 0))  # a non-contiguous input


def test_cumsum_backward():
    x = torch.randn(3, 300)
    d = x.to("dml").requires_grad_()
    c = x.clone().requires_grad_()
    g = torch.randn(3, 300)
    torch.cumsum(d, 1).backward(g.to("dml"))
    torch.cumsum(c, 1).backward(g)
    torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nonzero(dtype):
    x = make_tensor((6, 7, 5), dtype)
    x.view(-1)[::3] = 0
    _compare(torch.nonzero(x.to("dml")), torch.nonzero(x))
    for a, e in zip(torch.nonzero(x.to("dml"), as_tuple=True), torch.nonzero(x, as_tuple=True), strict=True):
        _compare(a, e)


def test_nonzero_edge_cases():
    for x in (torch.zeros(4, 3), torch.ones(1000), torch.tensor(5.0), torch.tensor(0.0), torch.empty(0, 2)):
        _compare(torch.nonzero(x.to("dml")), torch.nonzero(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_masked_select_and_mask_indexing(dtype):
    x = make_tensor((4, 6, 5), dtype)
    mask = torch.rand(4, 6, 5, generator=torch.Generator().manual_seed(3)) > 0.4
    d, m = x.to("dml"), mask.to("dml")
    _compare(torch.masked_select(d, m), torch.masked_select(x, mask))
    _compare(torch.masked_select(d, m[0, 0]), torch.masked_select(x, mask[0, 0]))  # broadcast mask
    _compare(d[m], x[mask])
    _compare(d[m[:, :, 0]], x[mask[:, :, 0]])          # a mask over the first two dims
    _compare(d[:, m[0, :, 0]], x[:, mask[0, :, 0]])    # a mask after a slice
    _compare(d[m[:, 0, 0], 2], x[mask[:, 0, 0], 2])    # a mask with an integer index


def test_printing_is_native():
    text = str(torch.tensor([[1.5, float("nan")], [float("inf"), -2.0]], device="dml"))
    assert "nan" in text and "inf" in text
