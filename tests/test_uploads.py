"""Host -> device writes: queue writes up to 64 KiB, larger ones in 8 MiB chunks through three reused
mapped staging buffers, each chunk's copy in the command stream's order. Compared with the CPU values,
in strict mode."""

import pytest
import torch
import torch_dml
from conftest import make_tensor

pytestmark = pytest.mark.usefixtures("strict")

QUEUE_WRITE_MAX = 64 << 10
CHUNK = 8 << 20
SLOTS = 3
MIB = 1 << 20


def fill_every_slot() -> None:
    """One write of more chunks than slots: afterwards every slot was used, so the next write remaps."""
    source = make_tensor(((SLOTS + 1) * CHUNK // 4,), torch.int32, seed=11)
    assert torch.equal(source.to("dml").cpu(), source)


@pytest.mark.parametrize(
    "nbytes",
    [
        QUEUE_WRITE_MAX - 4, QUEUE_WRITE_MAX, QUEUE_WRITE_MAX + 4,
        CHUNK - 4, CHUNK, CHUNK + 4,
        SLOTS * CHUNK - 4, SLOTS * CHUNK + 4, (SLOTS + 1) * CHUNK + 8,
    ],
)
def test_words_around_threshold_and_chunk_boundaries(nbytes):
    x = make_tensor((nbytes // 4,), torch.int32, seed=nbytes % 89)
    y = x.to("dml")
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("dtype", [torch.int8, torch.bool, torch.float16, torch.uint8], ids=str)
@pytest.mark.parametrize("extra", [-1, 1, 3])
@pytest.mark.parametrize("base", [QUEUE_WRITE_MAX, CHUNK, 2 * CHUNK])
def test_sizes_not_a_whole_word(dtype, base, extra):
    numel = base // torch.tensor([], dtype=dtype).element_size() + extra
    x = make_tensor((numel,), dtype, seed=numel % 83)
    y = x.to("dml")
    assert torch.equal(y.cpu(), x)


@pytest.mark.parametrize("start", [1, 2, 4, 1000])
def test_into_views_at_offsets(start):
    """Dense views that start inside a block (and inside a word): the bytes around them keep theirs."""
    numel = 2 * CHUNK + 4096
    base = make_tensor((numel,), torch.uint8, seed=3)
    device = base.to("dml")
    update = make_tensor((CHUNK + 37,), torch.uint8, seed=4)
    device[start:start + update.numel()].copy_(update)
    base[start:start + update.numel()] = update
    assert torch.equal(device.cpu(), base)
    words = make_tensor((CHUNK // 4 + 9,), torch.float32, seed=5)
    target = torch.zeros(2 * (CHUNK // 4) + 100, device="dml")
    target[start:start + words.numel()].copy_(words)
    expected = torch.zeros(target.numel())
    expected[start:start + words.numel()] = words
    assert torch.equal(target.cpu(), expected)


@pytest.mark.parametrize("numel", [QUEUE_WRITE_MAX // 4 - 1, QUEUE_WRITE_MAX // 4 + 1, (2 * CHUNK + 8) // 4])
def test_ordered_with_kernels_on_the_destination(numel):
    """y reads the old x and z the new one, though neither is submitted when the copy is asked for."""
    x = torch.full((numel,), 3.0, device="dml")
    new = torch.randn(numel)
    y = x * 2
    x.copy_(new)
    z = x + 0
    assert torch.equal(y.cpu(), torch.full((numel,), 6.0))
    assert torch.equal(z.cpu(), new)
    # A write after a kernel that writes the destination lands after it.
    x.mul_(0)
    x.copy_(new)
    w = x * 1
    assert torch.equal(w.cpu(), new)


def test_many_writes_without_synchronising():
    """More chunks in flight than slots: every slot is reused while kernels and copies are queued."""
    sources = [make_tensor((CHUNK // 4 + 1000 * i,), torch.float32, seed=i) for i in range(8)]
    on_device = [s.to("dml") for s in sources]
    accumulator = torch.zeros(CHUNK // 4, device="dml")
    for t in on_device:
        accumulator.add_(t[: CHUNK // 4])
    expected = torch.zeros(CHUNK // 4)
    for s in sources:
        expected.add_(s[: CHUNK // 4])
    assert torch.allclose(accumulator.cpu(), expected)
    for s, t in zip(sources, on_device):
        assert torch.equal(t.cpu(), s)


def test_interleaved_with_reads():
    x = torch.zeros(3 * CHUNK // 4 + 17, device="dml")
    for i in range(4):
        values = make_tensor((x.numel(),), torch.float32, seed=20 + i)
        x.copy_(values)
        assert x[i * 1000 + 5].item() == values[i * 1000 + 5].item()
        assert torch.equal(x.cpu(), values)
        x.add_(1)
        assert torch.equal(x.cpu(), values + 1)


def test_host_memory_free_after_return():
    """The copy is complete from the host's side on return: overwriting the source changes nothing."""
    source = make_tensor((2 * CHUNK // 4 + 5,), torch.float32, seed=9)
    keep = source.clone()
    y = source.to("dml")
    source.fill_(-1.0)
    del source
    assert torch.equal(y.cpu(), keep)


def test_failed_map_raises_and_recovers():
    fill_every_slot()
    x = make_tensor((2 * CHUNK // 4 + 3,), torch.float32, seed=12)
    torch_dml._C._fail_next_upload_map(0)
    with pytest.raises(RuntimeError, match=r"copy to dml: mapping an upload buffer.* on adapter"):
        x.to("dml")
    # The refused buffer was given up: the next write's first chunk takes a new one, made mapped, and
    # the second chunk's remap is refused, after the first chunk's copy was submitted.
    torch_dml._C._fail_next_upload_map(0)
    target = torch.zeros(x.numel(), device="dml")
    with pytest.raises(RuntimeError, match=r"copy to dml: mapping an upload buffer"):
        target.copy_(x)
    partial = target.cpu()
    assert torch.equal(partial[: CHUNK // 4], x[: CHUNK // 4])
    assert not partial[CHUNK // 4:].any()
    target.copy_(x)
    assert torch.equal(target.cpu(), x)
    assert torch.equal(x.to("dml").cpu(), x)
    # Small writes never map; the hook waits for the next large one.
    torch_dml._C._fail_next_upload_map(0)
    small = torch.arange(100, dtype=torch.float32)
    assert torch.equal(small.to("dml").cpu(), small)
    with pytest.raises(RuntimeError, match=r"copy to dml: mapping an upload buffer"):
        fill_every_slot()
    fill_every_slot()


def test_large_write_uses_one_submit_per_chunk():
    x = torch.zeros(2 * CHUNK // 4 + 1, device="dml")
    torch.dml.synchronize()
    dispatches, submits = torch_dml._C._stream_counters(0)
    x.copy_(torch.ones(x.numel()))
    after_dispatches, after_submits = torch_dml._C._stream_counters(0)
    assert after_dispatches == dispatches
    assert after_submits - submits == 3
    assert torch.equal(x.cpu(), torch.ones(x.numel()))


def test_staging_is_not_device_memory():
    """Upload buffers are host-side transfer memory, like the readback buffers: outside the statistics."""
    x = torch.zeros(3 * CHUNK // 4, device="dml")
    torch.dml.synchronize()
    allocated, reserved = torch.dml.memory_allocated(), torch.dml.memory_reserved()
    x.copy_(torch.ones(x.numel()))
    assert torch.dml.memory_allocated() == allocated
    assert torch.dml.memory_reserved() == reserved
    assert torch.equal(x.cpu(), torch.ones(x.numel()))
