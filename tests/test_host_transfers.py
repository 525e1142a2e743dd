"""Host <-> device transfers: bytes straight between CPU tensors and device buffers when the layouts
match, reads through reused readback buffers (a 64 KiB one for small reads, two 8 MiB ones for chunked
large reads), `.item()` reading one element's bytes. Compared with the CPU values, in strict mode."""

import math

import pytest
import torch
import torch_dml
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")

CHUNK = 8 << 20
SMALL_STAGING = 64 << 10
MIB = 1 << 20


def counters() -> tuple[int, int]:
    return torch_dml._C._stream_counters(0)


@pytest.mark.parametrize(
    "nbytes",
    [
        SMALL_STAGING - 4, SMALL_STAGING, SMALL_STAGING + 4,
        MIB - 4, MIB, MIB + 4,
        CHUNK - 4, CHUNK, CHUNK + 4, 2 * CHUNK + 12,
    ],
)
def test_sizes_around_staging_boundaries(nbytes):
    x = make_tensor((nbytes // 4,), torch.int32, seed=nbytes % 97)
    y = x.to("dml")
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("nbytes", [CHUNK - 1, CHUNK + 1, 2 * CHUNK + 3, MIB + 1, 5])
def test_byte_sizes_not_a_whole_word(nbytes):
    x = make_tensor((nbytes,), torch.uint8, seed=1)
    y = x.to("dml")
    assert torch.equal(y.cpu(), x)
    # A read that starts inside a word and ends inside another.
    assert torch.equal(y[3:-2].cpu(), x[3:-2])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("numel", [1, 13, 300_001])
def test_round_trip_every_dtype(dtype, numel):
    x = make_tensor((numel,), dtype, seed=numel)
    y = x.to("dml")
    assert y.dtype == dtype
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_item_every_dtype_and_offset(dtype):
    x = make_tensor((11,), dtype, seed=5)
    y = x.to("dml")
    for i in (0, 1, 2, 3, 10):
        got, want = y[i].item(), x[i].item()
        assert type(got) is type(want)
        assert got == want or (math.isnan(got) and math.isnan(want))
    assert y.view(1, 11)[0, 7].item() == x[7].item()


def test_item_special_values():
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-40])
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = special.to(dtype)
        y = x.to("dml")
        for i in range(len(special)):
            got, want = y[i].item(), x[i].item()
            assert (math.isnan(got) and math.isnan(want)) or (got == want and str(got) == str(want))


def test_item_and_contiguous_read_record_no_kernels():
    y = torch.arange(1000, dtype=torch.float32).to("dml")
    torch.dml.synchronize()
    dispatches, _ = counters()
    assert y[123].item() == 123.0
    assert torch.equal(y.cpu(), torch.arange(1000, dtype=torch.float32))
    assert torch.equal(y[5:900].cpu(), torch.arange(5, 900, dtype=torch.float32))
    assert counters()[0] == dispatches


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.bfloat16, torch.bool], ids=str)
def test_non_contiguous_sources(dtype):
    x = make_tensor((64, 48), dtype, seed=2)
    y = x.to("dml")
    for view in (lambda t: t.t(), lambda t: t[:, 1::3], lambda t: t[5:40, 7], lambda t: t[3:, 5:].t()):
        got = view(y).cpu()
        assert torch.equal(got, view(x))
    images = make_tensor((2, 3, 17, 9), dtype, seed=3).contiguous(memory_format=torch.channels_last)
    on_device = images.to("dml")
    assert on_device.stride() == images.stride()
    back = on_device.cpu()
    assert back.stride() == images.stride() and torch.equal(back, images)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.uint8], ids=str)
def test_non_contiguous_destinations(dtype):
    x = make_tensor((40, 30), dtype, seed=4)
    y = x.to("dml")
    out = make_tensor((40, 60), dtype, seed=5)
    expected = out.clone()
    expected[:, ::2] = x
    out[:, ::2].copy_(y)
    assert torch.equal(out, expected)
    # Into a device view: strided destination, and a dense one whose bytes start mid-word.
    base = make_tensor((40, 60), dtype, seed=6)
    device = base.to("dml")
    device[:, 1::2].copy_(x)
    expected = base.clone()
    expected[:, 1::2] = x
    assert torch.equal(device.cpu(), expected)
    flat = make_tensor((1001,), dtype, seed=7)
    device_flat = flat.to("dml")
    update = make_tensor((997,), dtype, seed=8)
    device_flat[3:1000].copy_(update)
    flat[3:1000] = update
    assert torch.equal(device_flat.cpu(), flat)


def test_dtype_conversion_on_the_way_out():
    x = torch.randn(1000)
    y = x.to("dml")
    assert torch.equal(y.to("cpu", torch.float64), x.double())
    out = torch.empty(1000, dtype=torch.float16)
    out.copy_(y)
    assert torch.equal(out, x.half())


@pytest.mark.parametrize("numel", [1000, 3 << 20])
def test_pinned_and_unpinned_host_tensors(numel):
    x = torch.randn(numel)
    pinned = x.pin_memory()
    assert pinned.is_pinned()
    for source in (x, pinned):
        for non_blocking in (False, True):
            y = source.to("dml", non_blocking=non_blocking)
            torch.dml.synchronize()
            assert torch.equal(y.cpu(), x)
    y = x.to("dml")
    out = torch.empty(numel).pin_memory()
    out.copy_(y, non_blocking=True)
    torch.dml.synchronize()
    assert torch.equal(out, x)
    assert torch.equal(y.to("cpu", non_blocking=True), x)


@pytest.mark.parametrize("numel", [1000, 3 << 20])
def test_copies_keep_order_with_pending_kernels(numel):
    """Reads see kernels recorded before them; writes land after kernels that read the old values."""
    x = torch.zeros(numel, device="dml")
    new = torch.randn(numel)
    for _ in range(3):
        x.add_(1)
    before = x * 2          # recorded, not yet run
    x.copy_(new)            # must not change what `before` reads
    after = x + 1
    assert torch.equal(before.cpu(), torch.full((numel,), 6.0))
    assert torch.equal(after.cpu(), new + 1)
    assert torch.equal(x.cpu(), new)
    x.mul_(0).add_(7)
    assert x[numel // 2].item() == 7.0
    assert torch.equal(x.cpu(), torch.full((numel,), 7.0))


def test_back_to_back_large_copies():
    """Reads of more chunks than readback buffers, each buffer reused while the other's copy is pending."""
    sources = [torch.randn(5 << 20) for _ in range(3)]
    on_device = [s.to("dml") for s in sources]
    total = on_device[0] + on_device[1] + on_device[2]
    assert torch.equal(total.cpu(), sources[0] + sources[1] + sources[2])


def test_failed_map_raises_and_recovers():
    y = torch.arange(10, dtype=torch.float32).to("dml")
    torch_dml._C._fail_next_map(0)
    with pytest.raises(RuntimeError, match=r"item\(\): mapping a readback buffer.* on adapter"):
        y[3].item()
    assert y[3].item() == 3.0
    torch_dml._C._fail_next_map(0)
    with pytest.raises(RuntimeError, match=r"copy from dml to cpu: mapping a readback buffer.* on adapter"):
        y.cpu()
    assert torch.equal(y.cpu(), torch.arange(10, dtype=torch.float32))
    big = torch.randn(3 << 20)  # 12 MiB: the failure comes while the second chunk's copy is queued
    on_device = big.to("dml")
    torch_dml._C._fail_next_map(0)
    with pytest.raises(RuntimeError, match=r"copy from dml to cpu: mapping a readback buffer"):
        on_device.cpu()
    assert torch.equal(on_device.cpu(), big)
