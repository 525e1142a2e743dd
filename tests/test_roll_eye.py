"""roll (every dtype, through the element gather) and eye natively (strict mode), equal to the CPU."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "shifts,dims", [(3, None), (-7, None), ((1, -2), (0, 2)), ((5,), (1,)), ((2, 3), (1, 1)), (0, 0)], ids=str
)
def test_roll(dtype, shifts, dims):
    x = make_tensor((3, 4, 5), dtype)
    expected = torch.roll(x, shifts, dims)
    assert torch.equal(torch.roll(x.to("dml"), shifts, dims).cpu(), expected)
    assert torch.equal(torch.roll(x.to("dml").transpose(0, 2), shifts, dims).cpu(), torch.roll(x.transpose(0, 2), shifts, dims))


def test_roll_of_an_empty_tensor():
    x = torch.empty(0, 3)
    assert torch.roll(x.to("dml"), 2, 1).shape == (0, 3)


def test_roll_backward_and_swin_style_windows():
    x = torch.randn(2, 8, 8, 3)
    moved = x.to("dml").requires_grad_()
    shifted = torch.roll(moved, (-2, -2), (1, 2))
    assert torch.equal(shifted.detach().cpu(), torch.roll(x, (-2, -2), (1, 2)))
    (shifted * torch.arange(3.0, device="dml")).sum().backward()
    assert torch.equal(moved.grad.cpu(), torch.arange(3.0).expand(2, 8, 8, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
def test_eye(dtype):
    for args in ((4,), (3, 5), (0,), (5, 2)):
        assert torch.equal(torch.eye(*args, dtype=dtype, device="dml").cpu(), torch.eye(*args, dtype=dtype))
    out = torch.empty(0, device="dml")
    torch.eye(3, out=out)
    assert torch.equal(out.cpu(), torch.eye(3))
