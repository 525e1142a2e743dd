"""torch.unique (sorted) and torch.unique_consecutive on dml, in strict mode, equal to the CPU's:
values, inverse and counts, NaN as its own value each time, empty and integer inputs."""

import pytest
import torch
import torch_dml
from helpers import kernels_of

CASES = {
    "nan": torch.tensor([3.0, 1, float("nan"), 1, float("nan"), 2]),
    "int_matrix": torch.randint(0, 5, (4, 7), generator=torch.Generator().manual_seed(0)),
    "int32": torch.tensor([[1, 1, 2], [2, 3, 3]], dtype=torch.int32),
    "many_repeats": torch.randn(300, generator=torch.Generator().manual_seed(1)).round(),
    "single": torch.tensor([5.0]),
    "empty": torch.tensor([]),
}


def same(got, want):
    got, want = (got if isinstance(got, tuple) else (got,)), (want if isinstance(want, tuple) else (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert torch.equal(g.cpu().nan_to_num(-7.0), w.nan_to_num(-7.0)), (g, w)


@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_unique_and_unique_consecutive_equal_the_cpu(name, inverse, counts):
    x = CASES[name]
    with torch_dml.strict():
        got = torch.unique(x.to("dml"), return_inverse=inverse, return_counts=counts)
        got_runs = torch.unique_consecutive(x.to("dml"), return_inverse=inverse, return_counts=counts)
    same(got, torch.unique(x, return_inverse=inverse, return_counts=counts))
    same(got_runs, torch.unique_consecutive(x, return_inverse=inverse, return_counts=counts))


def test_unique_sorts_then_selects_the_runs():
    x = torch.randint(0, 50, (1000,)).to("dml")
    names = [n.split("/")[0] for n in kernels_of(lambda: torch.unique(x, return_counts=True))]
    assert any(n.startswith("sort") for n in names), names
    assert "index_add" in names, names


def test_unsorted_unique_stays_on_the_cpu():
    """The CPU's unsorted order comes from its hash set: not reproduced, so not claimed."""
    torch_dml.reset_fallback_counts()
    torch.unique(torch.tensor([3, 1, 2]).to("dml"), sorted=False)
    assert torch_dml.fallback_counts().get("aten::_unique2", 0) == 1
