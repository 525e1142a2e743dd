"""tril / triu (functional, in-place, out=), native (strict mode), against the CPU: one word-moving
kernel for every dtype, any batch, any diagonal, any strides."""

import re

import pytest
import torch
import torch_dml
from conftest import DTYPES, make_tensor
from test_driver_portability import signed_remainders

pytestmark = pytest.mark.usefixtures("strict")

OPS = [torch.tril, torch.triu]
SHAPES = [(5, 5), (3, 7), (7, 3), (2, 3, 4, 5), (1, 1), (0, 3), (3, 0), (2, 0, 4), (4, 33, 17)]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_diagonal(op, dtype):
    for shape in SHAPES:
        x = make_tensor(shape, dtype, 1)
        for k in [0, 1, -1, 2, -3, 40, -40]:
            assert torch.equal(op(x.to("dml"), k).cpu(), op(x, k)), (shape, k)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
@pytest.mark.parametrize("dtype", [torch.bool, torch.int16, torch.float32, torch.int64], ids=str)
def test_in_place_and_out(op, dtype):
    x = make_tensor((3, 5, 6), dtype, 2)
    d = x.to("dml")
    getattr(d, op.__name__ + "_")(-1)
    assert torch.equal(d.cpu(), op(x, -1))
    out = torch.empty(0, dtype=dtype, device="dml")
    result = op(x.to("dml"), 2, out=out)
    assert result is out and torch.equal(out.cpu(), op(x, 2))
    # A strided out= tensor receives the values where it lies.
    big = torch.zeros(3, 5, 12, dtype=dtype, device="dml")
    op(x.to("dml"), 1, out=big[:, :, ::2])
    expected = torch.zeros(3, 5, 12, dtype=dtype)
    op(x, 1, out=expected[:, :, ::2])
    assert torch.equal(big.cpu(), expected)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32], ids=str)
def test_non_contiguous_and_unaligned_views(op, dtype):
    x = make_tensor((4, 9, 10), dtype, 3)
    d = x.to("dml")
    assert torch.equal(op(d.transpose(1, 2), 1).cpu(), op(x.transpose(1, 2), 1))
    assert torch.equal(op(d[:, 1:, 1:], -2).cpu(), op(x[:, 1:, 1:], -2))
    # A contiguous view starting mid-word (a 1- or 2-byte dtype) and an in-place op on it.
    flat = make_tensor((1 + 6 * 7,), dtype, 4)
    view, expected = flat.to("dml")[1:].view(6, 7), flat[1:].view(6, 7).clone()
    getattr(view, op.__name__ + "_")(0)
    assert torch.equal(view.cpu(), op(expected, 0))


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
def test_complex_dtypes_move_as_words(op):
    # 8- and 16-byte elements are two and four words: no dtype the adapter holds needs a shader feature.
    dtypes = [torch.complex64] + ([torch.complex128] if torch_dml.has_float64_support(0) else [])
    for dtype in dtypes:
        x = torch.randn(3, 4, 5, dtype=dtype, generator=torch.Generator().manual_seed(5))
        for k in [-1, 0, 2]:
            assert torch.equal(op(x.to("dml"), k).cpu(), op(x, k))


def test_errors_match_the_cpu():
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        torch.tril(torch.ones(3, device="dml"))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got int instead"):
        torch.triu(torch.ones(3, 3, device="dml"), out=torch.empty(3, 3, dtype=torch.int32, device="dml"))


def test_backward():
    x = torch.randn(4, 5, requires_grad=True)
    d = x.detach().to("dml").requires_grad_()
    (torch.tril(x, 1) * 3).sum().backward()
    (torch.tril(d, 1) * 3).sum().backward()
    assert torch.equal(d.grad.cpu(), x.grad)


def test_a_causal_mask_runs_natively():
    # The shape of a GPT decoder's mask: triu of a filled square, then masked_fill.
    mask = torch.triu(torch.full((16, 16), float("-inf"), device="dml"), diagonal=1)
    assert torch.equal(mask.cpu(), torch.triu(torch.full((16, 16), float("-inf")), diagonal=1))
    assert torch.equal(torch.tril(torch.ones(16, 16, dtype=torch.bool, device="dml")).cpu(),
                       torch.tril(torch.ones(16, 16, dtype=torch.bool)))


def test_kernel_has_no_signed_remainder():
    torch.tril(torch.ones(3, 3, device="dml"))
    names = [n for n in torch_dml._C._compiled_kernels(0) if re.match(r"triangle", n)]
    assert names
    for name in names:
        assert not signed_remainders(torch_dml._C._compiled_kernel_source(0, name)), name


def test_larger_than_one_storage_binding():
    # 134.5 MB of float32 is past lavapipe's 128 MiB binding: a slice of words per dispatch.
    limit = torch_dml._C._adapters(True)[0]["limits"]["maxStorageBufferBindingSize"]
    if limit > 512 * 1024 * 1024:
        pytest.skip(f"the adapter binds {limit >> 20} MiB at once: a tensor past that is too large to test here")
    side = int((limit / 8) ** 0.5) + 4  # two float32 matrices, just past one binding
    x = torch.rand(2, side, side + 3, generator=torch.Generator().manual_seed(6))
    assert x.numel() * 4 > limit
    assert torch.equal(torch.tril(x.to("dml"), 5).cpu(), torch.tril(x, 5))
