"""Streams and events over the device's single queue: ordering, synchronize, query, timing."""

import pytest
import torch
import torch_dml
from helpers import run_python


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



@pytest.mark.parametrize("flush_every", ["32", "100000"])
def test_kernel_parameters_reach_their_dispatch_when_reused_and_when_the_ring_starts_over(flush_every):
    # Parameters already in the uniform ring are found by content and bound again, and the ring starts
    # over when full (256 KiB: 20000 distinct blocks of at least 16 bytes overflow it, within one batch
    # when nothing flushes early). Every dispatch must still see its own values.
    result = run_python("""
import torch, torch_dml
a = torch.zeros(64, device="dml")
b = torch.ones(64, device="dml")
expected = torch.zeros(64)
for i in range(20000):
    alpha = float(i) if i % 2 == 0 else -float(i - 1)  # fresh values that cancel pairwise
    a.add_(b, alpha=alpha)
    expected += alpha
    if i % 3 == 0:
        a.add_(b, alpha=0.5)  # the same parameters again and again
        expected += 0.5
    if i % 4999 == 0:
        assert torch.equal(a.cpu(), expected), (i, a.cpu()[:4], expected[:4])
assert torch.equal(a.cpu(), expected)
assert (a[:8] * 2).sum().item() == float(expected[:8].sum() * 2)
print("ok")
""", TORCH_DML_FLUSH_EVERY=flush_every)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr

# -- torch.dml.Stream / Event and the current-stream functions (the torch.cuda names) ----------------------

def test_dml_stream_is_a_torch_stream_on_dml():
    stream = torch.dml.Stream()
    assert isinstance(stream, torch.Stream) and type(stream) is torch.dml.Stream
    assert stream.device == torch.device("dml", 0)
    assert stream.stream_id != torch.dml.Stream().stream_id
    assert stream != torch.dml.default_stream()
    assert torch_dml.Stream is torch.dml.Stream
    with pytest.raises(RuntimeError, match="Invalid device_id argument supplied"):
        torch.dml.Stream(device=torch_dml.device_count())


def test_default_and_current_stream():
    default = torch.dml.default_stream()
    assert default.stream_id == 0 and default.device == torch.device("dml", 0)
    assert torch.dml.current_stream() == default
    assert torch.dml.current_stream("dml:0") == torch.accelerator.current_stream(0)
    assert isinstance(torch.dml.current_stream(), torch.dml.Stream)


def test_set_stream_and_restore():
    stream = torch.dml.Stream()
    try:
        torch.dml.set_stream(stream)
        assert torch.dml.current_stream() == stream
        assert torch.accelerator.current_stream() == stream
        torch.dml.set_stream(None)  # a no-op, as torch.cuda.set_stream(None)
        assert torch.dml.current_stream() == stream
    finally:
        torch.dml.set_stream(torch.dml.default_stream())
    assert torch.dml.current_stream() == torch.dml.default_stream()


def test_stream_context_manager_nests_and_restores():
    outer, inner = torch.dml.Stream(), torch.dml.Stream()
    before = torch.dml.current_stream()
    with torch.dml.stream(outer) as entered:
        assert entered is outer and torch.dml.current_stream() == outer
        with torch.dml.stream(inner):
            assert torch.dml.current_stream() == inner
        assert torch.dml.current_stream() == outer
        with torch.dml.stream(None):
            assert torch.dml.current_stream() == outer
    assert torch.dml.current_stream() == before


def test_stream_context_restores_after_an_exception():
    before = torch.dml.current_stream()
    with pytest.raises(KeyError), torch.dml.stream(torch.dml.Stream()):
        raise KeyError("inside")
    assert torch.dml.current_stream() == before


def test_work_queued_in_stream_context_is_ordered_with_the_default_stream():
    x = torch.zeros(4096, device="dml")
    side = torch.dml.Stream()
    with torch.dml.stream(side):
        x.add_(1.0)
    side.synchronize()
    assert side.query()
    x.mul_(3.0)  # default stream, after the side stream's work
    assert torch.equal(x.cpu(), torch.full((4096,), 3.0))


def test_wait_stream_and_wait_event():
    producer, consumer = torch.dml.Stream(), torch.dml.Stream()
    x = torch.zeros(256, device="dml")
    with torch.dml.stream(producer):
        x.fill_(7.0)
        done = producer.record_event()
    assert type(done) is torch.dml.Event
    consumer.wait_event(done)
    consumer.wait_stream(producer)
    with torch.dml.stream(consumer):
        y = x * 2
    consumer.synchronize()
    assert torch.equal(y.cpu(), torch.full((256,), 14.0))


def test_record_stream_is_accepted():
    x = torch.ones(16, device="dml")
    stream = torch.dml.Stream()
    x.record_stream(stream)  # reached the CPU fallback, which has no kernel for it
    with pytest.raises(RuntimeError, match="needs a dml stream"):
        x.record_stream(torch.Stream(device="cpu"))
    assert torch.equal(x.cpu(), torch.ones(16))


def test_dml_event_record_query_synchronize_and_time():
    start = torch.dml.Event(enable_timing=True)
    end = torch.dml.Event(enable_timing=True)
    assert isinstance(start, torch.Event) and type(start) is torch.dml.Event
    assert start.query()  # never recorded: nothing to wait for, as in CUDA
    stream = torch.dml.current_stream()
    start.record(stream)
    x = torch.empty(1 << 18, device="dml")
    for _ in range(5):
        x.fill_(1.0)
    stream.record_event(end)
    end.synchronize()
    assert end.query()
    assert end.device == torch.device("dml", 0)
    assert start.elapsed_time(end) > 0.0  # the record of `end` waited for the fills
    plain_end = torch.Event(device="dml", enable_timing=True)
    plain_end.record()
    assert start.elapsed_time(plain_end) > 0.0
    untimed = torch.dml.Event()
    untimed.record()
    with pytest.raises(ValueError, match="enable_timing"):
        untimed.elapsed_time(end)
    event = torch.dml.Event()
    event.record()
    event.wait()  # the current stream waits: already ordered on the one queue
    event.synchronize()
    assert event.query()


def test_interprocess_event_is_refused_clearly():
    with pytest.raises(ValueError, match="cannot be shared between processes"):
        torch.dml.Event(interprocess=True)


@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "unrecorded"])
def test_dml_event_elapsed_time_errors_match_torch_event(timed):
    # Code written for torch.Event / torch.cuda.Event catches ValueError with torch's sentence.
    def message(make) -> tuple[type, str]:
        start, end = make(), make()
        start.record()
        if not timed:
            end.record()
        with pytest.raises(Exception) as raised:
            start.elapsed_time(end)
        return type(raised.value), str(raised.value).split(".")[0]

    plain = message(lambda: torch.Event(device="dml", enable_timing=timed))
    dml = message(lambda: torch.dml.Event(enable_timing=timed))
    assert plain[0] is ValueError and dml == plain, (dml, plain)


def test_spin_wait_default_follows_the_adapter_type():
    # A CPU adapter's driver threads run the work, so the host must not spin beside them; a GPU spins.
    kind = torch_dml._C._adapter(0)["adapter_type"]
    assert torch_dml._C._spin_wait_us(0) == (0 if kind == "cpu" else 200)


SPIN_WORKLOAD = (
    "import torch, torch_dml\n"
    "print(torch_dml._C._spin_wait_us(0))\n"
    "x = torch.arange(4096.0, device='dml')\n"
    "for _ in range(50):\n"
    "    x = x + 1\n"
    "    torch_dml.synchronize()\n"
    "assert x[7].item() == 57.0\n"
    "big = torch.randn(1024, 1024, device='dml')\n"
    "product = big @ big  # long enough that the spin window runs out and the blocking wait finishes\n"
    "expected = big.cpu() @ big.cpu()\n"
    "assert torch.allclose(product.cpu(), expected, rtol=1e-3, atol=1e-2)\n"
    "y = torch.arange(5_000_000, dtype=torch.float32, device='dml') * 2\n"
    "assert torch.equal(y.cpu(), torch.arange(5_000_000, dtype=torch.float32) * 2)\n"
    "print('ok')\n"
)


@pytest.mark.parametrize("spin", ["0", "1000", "100000"])
def test_waits_are_right_with_any_spin(spin):
    """Synchronize, .item() and chunked reads wait through the spin path and the blocking one alike."""
    result = run_python(SPIN_WORKLOAD, TORCH_DML_SPIN_WAIT_US=spin)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [spin, "ok"]


def test_a_bad_spin_setting_is_a_clear_error():
    result = run_python("import torch, torch_dml\ntorch.ones(1, device='dml').sum().item()\n", TORCH_DML_SPIN_WAIT_US="soon")
    assert result.returncode != 0
    assert "TORCH_DML_SPIN_WAIT_US" in result.stderr and "'soon'" in result.stderr
