"""scatter_reduce and index_reduce natively (strict mode): every position folds the values sent to it
in position order (sum, prod, mean, amax, amin; with or without self's value), the same bits every run;
amax / amin let a NaN win as the CPU does, integer means round down."""

import pytest
import torch
from conftest import make_tensor

pytestmark = pytest.mark.usefixtures("strict")

REDUCES = ["sum", "prod", "mean", "amax", "amin"]
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def _check(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype.is_floating_point:
        tol = TOLERANCE[expected.dtype]
        torch.testing.assert_close(actual.cpu(), expected, rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64],
                         ids=str)
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dtype, reduce, include_self):
    x = make_tensor((5, 6), dtype) if not dtype.is_floating_point else torch.randn(5, 6).to(dtype)
    gen = torch.Generator().manual_seed(2)
    index = torch.randint(0, 5, (4, 6), generator=gen)  # repeats along dim 0, some rows untouched
    src = torch.randn(4, 6, generator=gen).to(dtype) if dtype.is_floating_point else make_tensor((4, 6), dtype, 1) % 7
    expected = x.scatter_reduce(0, index, src, reduce, include_self=include_self)
    _check(x.to("dml").scatter_reduce(0, index.to("dml"), src.to("dml"), reduce, include_self=include_self), expected)
    inplace = x.to("dml")
    inplace.scatter_reduce_(0, index.to("dml"), src.to("dml"), reduce, include_self=include_self)
    _check(inplace, expected)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    x = torch.randn(4, 5, 3)
    index = torch.tensor([4, 0, 4, 2])
    source = torch.randn(4, 4, 3)
    expected = x.index_reduce(1, index, source, reduce, include_self=include_self)
    _check(x.to("dml").index_reduce(1, index.to("dml"), source.to("dml"), reduce, include_self=include_self), expected)


def test_nan_wins_amax_and_amin():
    x = torch.zeros(3)
    src = torch.tensor([1.0, float("nan"), 2.0, -1.0])
    index = torch.tensor([0, 0, 1, 1])
    for reduce in ("amax", "amin"):
        expected = x.scatter_reduce(0, index, src, reduce)
        _check(x.to("dml").scatter_reduce(0, index.to("dml"), src.to("dml"), reduce), expected)


def test_gnn_style_mean_aggregation_trains():
    """Message passing: mean of neighbour features per node, backward through scatter_reduce."""
    gen = torch.Generator().manual_seed(3)
    features = torch.randn(10, 4, generator=gen)
    targets = torch.randint(0, 6, (10,), generator=gen).unsqueeze(1).expand(10, 4)
    grads = []
    for device in ("cpu", "dml"):
        h = features.to(device).detach().requires_grad_()
        out = torch.zeros(6, 4, device=device).scatter_reduce(0, targets.to(device), h, "mean", include_self=False)
        out.square().sum().backward()
        grads.append(h.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-5, atol=1e-6)
