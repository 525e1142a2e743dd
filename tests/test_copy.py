"""Copies: host <-> device and device <-> device, any strides on either side, every dtype, dtype
conversion on the device. Run in strict mode: a copy that reached the CPU fallback fails."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")

SHAPES = [(), (1,), (7,), (5, 7), (3, 4, 5), (2, 3, 1, 4)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip_is_exact(dtype, shape):
    x = make_tensor(shape, dtype)
    y = x.to("dml")
    assert y.device.type == "dml" and y.dtype == dtype and y.shape == x.shape
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_strided_sources_read_back_exactly(dtype):
    x = make_tensor((6, 9), dtype)
    y = x.to("dml")
    assert torch.equal(y[:, 1::2].cpu(), x[:, 1::2])
    assert torch.equal(y.t().cpu(), x.t())
    assert torch.equal(y[2:5, 3].cpu(), x[2:5, 3])
    assert torch.equal(y[1:, 1:].contiguous().cpu(), x[1:, 1:])
    assert torch.equal(y.t().contiguous().cpu(), x.t().contiguous())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_upload_into_strided_destination_keeps_neighbours(dtype):
    base = make_tensor((6, 9), dtype, seed=1)
    update = make_tensor((6, 4), dtype, seed=2)
    device = base.to("dml")
    device[:, 1::2] = update.to("dml")  # device -> device into a strided view
    expected = base.clone()
    expected[:, 1::2] = update
    assert torch.equal(device.cpu(), expected)

    device = base.to("dml")
    device[1:4, 2:7].copy_(update[1:4, :].repeat(1, 2)[:, :5])  # host -> strided device view
    expected = base.clone()
    expected[1:4, 2:7] = update[1:4, :].repeat(1, 2)[:, :5]
    assert torch.equal(device.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("start,stop", [(1, 2), (1, 6), (3, 10), (0, 5), (2, 3)])
def test_packed_head_and_tail_words(dtype, start, stop):
    """Sub-word dtypes share u32 words: writing a slice must not touch the bytes around it."""
    base = make_tensor((12,), dtype, seed=3)
    update = make_tensor((stop - start,), dtype, seed=4)
    device = base.to("dml")
    device[start:stop] = update.to("dml")
    expected = base.clone()
    expected[start:stop] = update
    assert torch.equal(device.cpu(), expected)


@pytest.mark.parametrize("src_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dst_dtype", DTYPES, ids=str)
def test_conversion_on_device_matches_cpu(src_dtype, dst_dtype):
    if src_dtype.is_floating_point and not dst_dtype.is_floating_point and dst_dtype != torch.bool:
        # Out-of-range float -> int is undefined in C++; keep values inside every integer range.
        x = (torch.randn(40, generator=torch.Generator().manual_seed(5)) * 50).to(src_dtype)
    else:
        x = make_tensor((40,), src_dtype, seed=5)
    y = x.to("dml").to(dst_dtype)
    expected = x.to(dst_dtype)
    assert y.dtype == dst_dtype
    assert torch.equal(y.cpu(), expected), (y.cpu(), expected)


def test_float_to_int_truncates_toward_zero():
    x = torch.tensor([-2.7, -0.5, 0.5, 2.7, 100.9])
    assert torch.equal(x.to("dml").to(torch.int32).cpu(), x.to(torch.int32))
    assert torch.equal(x.to("dml").to(torch.int64).cpu(), x.to(torch.int64))


def test_bfloat16_rounds_to_nearest_even_and_keeps_nan():
    x = torch.tensor([1.00390625, 1.01171875, float("nan"), float("inf"), -float("inf"), 3.0e38, -0.0])
    assert torch.equal(x.to("dml").to(torch.bfloat16).cpu().float().nan_to_num(7.0),
                       x.to(torch.bfloat16).float().nan_to_num(7.0))


def test_broadcast_copy():
    row = torch.arange(5.0)
    target = torch.zeros(3, 5, device="dml")
    target.copy_(row)
    assert torch.equal(target.cpu(), row.expand(3, 5))
    target.copy_(torch.tensor(2.5, device="dml"))
    assert torch.equal(target.cpu(), torch.full((3, 5), 2.5))


def test_empty_and_zero_element_tensors():
    x = torch.empty(0, 3, device="dml")
    assert x.shape == (0, 3)
    assert x.cpu().shape == (0, 3)
    assert torch.zeros(0, device="dml").to(torch.int8).cpu().numel() == 0


def test_in_place_copy_onto_itself_and_overlapping_views():
    x = torch.arange(10, dtype=torch.float32)
    device = x.to("dml")
    device.copy_(device)
    assert torch.equal(device.cpu(), x)
    device[2:6] = device[4:8].clone()
    expected = x.clone()
    expected[2:6] = x[4:8]
    assert torch.equal(device.cpu(), expected)


def test_item_and_clone():
    x = torch.tensor([[1.5, -2.0]], device="dml")
    assert x[0, 1].item() == -2.0
    assert torch.tensor(7, dtype=torch.int64, device="dml").item() == 7
    assert torch.tensor(True, device="dml").item() is True
    cloned = x.clone()
    assert cloned.data_ptr() != x.data_ptr() and torch.equal(cloned.cpu(), x.cpu())


def test_large_tensor_round_trip():
    """Above the staging chunk (32 MiB) so the read path loops."""
    x = torch.arange(12 * 1024 * 1024, dtype=torch.int32)
    assert torch.equal(x.to("dml").cpu(), x)


def test_tensors_beyond_one_binding():
    """More than the adapter's largest storage binding (128 MiB on lavapipe): kernels split the work."""
    limit = __import__("torch_dml")._C._adapters(True)[0]["limits"]["maxStorageBufferBindingSize"]
    numel = limit // 4 + 3 * 1024 * 1024 + 5  # float32 elements past one binding
    x = torch.arange(numel, dtype=torch.int32)
    device = x.to("dml")
    assert torch.equal(device.cpu(), x)
    halves = device.to(torch.int16)  # converted on the device, every window split
    assert torch.equal(halves.cpu(), x.to(torch.int16))
    strided = device[1::2].clone()
    assert torch.equal(strided.cpu(), x[1::2])
    device[-7:].fill_(-1)
    assert device[-8:].cpu().tolist() == [int(x[-8])] + [-1] * 7
    del device, halves, strided


def test_more_than_eight_dimensions():
    x = torch.arange(2 * 3 * 2 * 3 * 2 * 3 * 2 * 3 * 2 * 3, dtype=torch.float32).reshape(2, 3, 2, 3, 2, 3, 2, 3, 2, 3)
    y = x.to("dml")
    # A permutation that no coalescing can merge: the host path must still be exact.
    permuted = y.permute(9, 0, 8, 1, 7, 2, 6, 3, 5, 4)
    assert torch.equal(permuted.cpu(), x.permute(9, 0, 8, 1, 7, 2, 6, 3, 5, 4))
    assert torch.equal(permuted.contiguous().cpu(), x.permute(9, 0, 8, 1, 7, 2, 6, 3, 5, 4).contiguous())
    target = torch.zeros_like(y).permute(9, 0, 8, 1, 7, 2, 6, 3, 5, 4)
    target.copy_(x.permute(9, 0, 8, 1, 7, 2, 6, 3, 5, 4))
    assert torch.equal(target.cpu(), x.permute(9, 0, 8, 1, 7, 2, 6, 3, 5, 4))


def test_conjugate_and_negative_views_copy_their_values():
    """The conj/neg bits live in metadata; copies must apply them (and must not recurse forever)."""
    x = torch.randn(4, 3, dtype=torch.complex64)
    d = x.to("dml")
    assert torch.equal(d.conj().cpu(), x.conj())
    assert torch.equal(d.conj().clone().cpu(), x.conj().resolve_conj())
    assert torch.equal(d.t().conj().contiguous().cpu(), x.t().conj().resolve_conj())
    assert torch.equal(x.conj().to("dml").cpu(), x.conj())
    n = torch.randn(5)
    assert torch.equal(n.to("dml")._neg_view().cpu(), -n)
