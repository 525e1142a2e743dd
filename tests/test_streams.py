"""Streams and events over the device's single queue: ordering, synchronize, query, timing."""

import pytest
import torch
import torch_dml


def test_stream_objects():
    stream = torch.Stream(device="dml")
    assert stream.device_type == torch._C._get_privateuse1_backend_name() or stream.device.type == "dml"
    assert stream.device_index == 0
    other = torch.Stream(device="dml")
    assert other.stream_id != stream.stream_id
    with stream:
        assert torch.accelerator.current_stream() == stream
    stream.synchronize()
    assert stream.query()


def test_work_on_a_stream_is_ordered():
    x = torch.zeros(1000, device="dml")
    stream = torch.Stream(device="dml")
    with stream:
        x.fill_(2.0)
    x[:10].fill_(5.0)
    expected = torch.full((1000,), 2.0)
    expected[:10] = 5.0
    assert torch.equal(x.cpu(), expected)


def test_events_record_query_synchronize():
    event = torch.Event(device="dml")
    torch.ones(64, device="dml").fill_(3.0)
    event.record()
    event.synchronize()
    assert event.query()


def test_elapsed_time_needs_timing_and_is_positive():
    start = torch.Event(device="dml", enable_timing=True)
    end = torch.Event(device="dml", enable_timing=True)
    start.record()
    x = torch.empty(1 << 20, device="dml")
    for _ in range(5):
        x.fill_(1.0)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    untimed = torch.Event(device="dml")
    untimed.record()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing"):
        untimed.elapsed_time(end)


def test_accelerator_synchronize_waits_for_batched_work():
    x = torch.empty(256, device="dml")
    for i in range(100):  # more than one submit batch
        x.fill_(float(i))
    torch.accelerator.synchronize()
    assert torch.equal(x.cpu(), torch.full((256,), 99.0))
    dispatches, submits = torch_dml._C._stream_counters(0)
    assert dispatches >= 100 and submits >= 100 // 32


def test_bind_groups_are_reused_across_repeated_ops():
    a = torch.zeros(64, device="dml")
    b = torch.ones(64, device="dml")
    a.add_(b)
    before = torch_dml._C._bind_groups_created(0)
    for _ in range(50):
        a.add_(b)
    assert torch_dml._C._bind_groups_created(0) == before  # same buffers, same bind group
    assert torch.equal(a.cpu(), torch.full((64,), 51.0))  # each dispatch still saw its own parameters


def test_empty_cache_forgets_bind_groups_of_freed_buffers():
    # A freed buffer's handle may be reused by a new buffer: a stale cached bind group would then
    # point at the old memory and the new tensor would read the wrong values.
    for step in range(3):
        x = torch.full((1000,), float(step), device="dml")
        y = x + 1
        assert torch.equal(y.cpu(), torch.full((1000,), step + 1.0))
        del x, y
        torch_dml.empty_cache()


def test_bind_group_cache_starting_over_keeps_recorded_work_valid():
    # More distinct bind groups than the cache holds: the cache starts over midway through a batch,
    # and the groups it drops must stay valid for the work already recorded and not yet submitted.
    from helpers import run_python
    result = run_python("""
import torch, torch_dml
xs = [torch.full((64,), float(i), device="dml") for i in range(5000)]
created = torch_dml._C._bind_groups_created(0)
for x in xs:
    x.add_(1.0)
assert torch_dml._C._bind_groups_created(0) - created >= 5000
assert all(torch.equal(x.cpu(), torch.full((64,), i + 1.0)) for i, x in enumerate(xs))
print("ok")
""", TORCH_DML_FLUSH_EVERY="100000")
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr
