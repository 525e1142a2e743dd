"""fill_ and zero_ (and the factories built on them), native in strict mode."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")


def value_for(dtype: torch.dtype):
    if dtype == torch.bool:
        return True
    return -3.25 if dtype.is_floating_point else (-3 if dtype != torch.uint8 else 200)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_contiguous(dtype):
    x = torch.empty(37, dtype=dtype, device="dml")
    x.fill_(value_for(dtype))
    assert torch.equal(x.cpu(), torch.full((37,), value_for(dtype), dtype=dtype))
    x.zero_()
    assert torch.equal(x.cpu(), torch.zeros(37, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_strided_keeps_neighbours(dtype):
    base = make_tensor((5, 11), dtype)
    device = base.to("dml")
    device[:, 1::3].fill_(value_for(dtype))
    device[1:3, 2:9].zero_()
    expected = base.clone()
    expected[:, 1::3] = value_for(dtype)
    expected[1:3, 2:9] = 0
    assert torch.equal(device.cpu(), expected)


def test_factories_are_native():
    assert torch.equal(torch.zeros(2, 3, device="dml").cpu(), torch.zeros(2, 3))
    assert torch.equal(torch.ones(4, dtype=torch.int8, device="dml").cpu(), torch.ones(4, dtype=torch.int8))
    assert torch.equal(torch.full((3,), 1.5, device="dml").cpu(), torch.full((3,), 1.5))
    assert torch.equal(torch.zeros_like(torch.empty(3, 2, device="dml")).cpu(), torch.zeros(3, 2))


def test_fill_with_zero_dim_tensor_value():
    x = torch.empty(4, device="dml")
    x.fill_(torch.tensor(6.0, device="dml"))
    assert torch.equal(x.cpu(), torch.full((4,), 6.0))


def test_fill_value_is_converted_like_cpu():
    x = torch.empty(3, dtype=torch.int32, device="dml").fill_(2.9)
    assert torch.equal(x.cpu(), torch.empty(3, dtype=torch.int32).fill_(2.9))
    h = torch.empty(3, dtype=torch.float16, device="dml").fill_(1 / 3)
    assert torch.equal(h.cpu(), torch.full((3,), 1 / 3, dtype=torch.float16))
