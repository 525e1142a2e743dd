"""cat, index_select and embedding, native (strict mode), against the CPU."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cat(dtype):
    a, b = make_tensor((2, 3), dtype, 1), make_tensor((4, 3), dtype, 2)
    assert torch.equal(torch.cat([a.to("dml"), b.to("dml")]).cpu(), torch.cat([a, b]))
    c = make_tensor((2, 5), dtype, 3)
    assert torch.equal(torch.cat([a.to("dml"), c.to("dml")], dim=1).cpu(), torch.cat([a, c], dim=1))
    assert torch.equal(torch.stack([a.to("dml"), a.to("dml")], 0).cpu(), torch.stack([a, a], 0))


def test_cat_promotes_and_skips_legacy_empty():
    a, b = torch.arange(3, dtype=torch.int32), torch.tensor([0.5, 1.5])
    assert torch.equal(torch.cat([a.to("dml"), b.to("dml")]).cpu(), torch.cat([a, b]))
    empty = torch.empty(0)
    x = torch.randn(2, 2)
    assert torch.equal(torch.cat([empty.to("dml"), x.to("dml")]).cpu(), torch.cat([empty, x]))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([torch.ones(2, 3, device="dml"), torch.ones(2, 4, device="dml")])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_select(dtype, dim):
    x = make_tensor((4, 6, 8), dtype, 4)
    index = torch.tensor([3, 0, 3, 1])
    # rows that are not whole 32-bit words (dim 2 of a 1- or 2-byte dtype) take the element gather
    actual = torch.index_select(x.to("dml"), dim, index.to("dml"))
    assert torch.equal(actual.cpu(), torch.index_select(x, dim, index))


def test_index_select_of_a_scalar():
    x = torch.tensor(2.5)
    for index in (torch.tensor([0]), torch.tensor(0)):
        actual = x.to("dml").index_select(0, index.to("dml"))
        expected = x.index_select(0, index)
        assert actual.shape == expected.shape and torch.equal(actual.cpu(), expected)


def test_index_out_of_range_is_an_index_error():
    x = torch.randn(5, 4).to("dml")
    with pytest.raises(IndexError, match="index 5 is out of range in self"):
        torch.index_select(x, 0, torch.tensor([0, 5], device="dml")).cpu()  # raised at the wait


def test_embedding_forward():
    table = torch.nn.Embedding(10, 6)
    dml_table = torch.nn.Embedding(10, 6).to("dml")
    dml_table.load_state_dict(table.state_dict())
    tokens = torch.tensor([[1, 9, 4], [0, 0, 7]])
    with torch.no_grad():
        assert torch.equal(dml_table(tokens.to("dml")).cpu(), table(tokens))
