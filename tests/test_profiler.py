"""torch.profiler on dml: the legacy path's device stubs (use_device="dml") and the Kineto path's kernel
events (ProfilerActivity.PrivateUse1), with device durations per dispatch."""

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
import torch_dml
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]
needs_kernel_events = pytest.mark.skipif(
    not torch_dml._C._profiler_kernel_events,
    reason="this torch has no PrivateUse1 Kineto registry (kernel events need torch >= 2.12)",
)


def small_model(dml: torch.device) -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(dml)
    return model, torch.randn(32, 64, device=dml)


def run(model: torch.nn.Module, x: torch.Tensor, steps: int = 5) -> float:
    """Seconds for `steps` forward passes, each read back (so the device work is inside the time)."""
    start = time.perf_counter()
    for _ in range(steps):
        model(x).sum().item()
    return time.perf_counter() - start


@pytest.fixture
def quiet(capfd: pytest.CaptureFixture[str]) -> Iterator[Callable[[], str]]:
    """What C++ wrote to stdout/stderr, for checking that profiling logs nothing."""
    capfd.readouterr()

    def read() -> str:
        captured = capfd.readouterr()
        return captured.out + captured.err

    yield read


def assert_no_profiler_complaints(log: str) -> None:
    assert "not enabled" not in log, log[:2000]
    assert "Exception in RecordFunction callback" not in log, log[:2000]


def assert_no_negative_times(averages: list) -> None:
    for row in averages:
        for field in ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total"):
            assert getattr(row, field) >= 0, (row.key, field, getattr(row, field))


def test_legacy_profiler_with_use_device_dml(dml: torch.device, quiet: Callable[[], str]) -> None:
    model, x = small_model(dml)
    run(model, x, steps=2)  # compiles the kernels
    plain = run(model, x)
    with torch.autograd.profiler.profile(use_device="dml"):  # the profiler's own first-use cost
        run(model, x, steps=1)
    with torch.autograd.profiler.profile(use_device="dml") as prof:
        profiled = run(model, x)
    assert_no_profiler_complaints(quiet())
    # Without device stubs every op threw and logged a backtrace: 82 s for a 0.04 s model.
    assert profiled < max(20 * plain, 2.0), (profiled, plain)
    assert profiled < 5.0
    averages = prof.key_averages()
    assert_no_negative_times(averages)
    addmm = [row for row in averages if row.key == "aten::addmm"]
    # Ten addmm calls (torch's legacy path counts each op's device event again).
    assert addmm and addmm[0].count in (10, 20)
    # The stubs time each op on the device: addmm's matmul work is part of its device time.
    assert addmm[0].device_time_total > 0


def test_profiler_with_privateuse1_activity(dml: torch.device, quiet: Callable[[], str]) -> None:
    model, x = small_model(dml)
    run(model, x, steps=2)
    plain = run(model, x)
    with profile(activities=ACTIVITIES):
        run(model, x, steps=1)
    with profile(activities=ACTIVITIES) as prof:
        profiled = run(model, x)
    assert_no_profiler_complaints(quiet())
    assert profiled < max(20 * plain, 2.0), (profiled, plain)
    assert profiled < 5.0
    assert_no_negative_times(prof.key_averages())


@needs_kernel_events
def test_kernels_carry_device_durations_and_their_op(dml: torch.device) -> None:
    a = torch.randn(256, 256, device=dml)
    b = torch.randn(256, 256, device=dml)
    (a @ b).sum().item()
    with profile(activities=ACTIVITIES) as prof:
        for _ in range(3):
            (a @ b).cpu()
            (a[:8, :8] + 1).cpu()
    events = prof.events()
    kernels = [e for e in events if e.device_type == DeviceType.PrivateUse1]
    assert kernels, [e.name for e in events]
    compiled = set(torch_dml._C._compiled_kernels(0))
    for kernel in kernels:
        assert kernel.device_time >= 0
        assert kernel.name in compiled
    # Each dispatch hangs under the op that launched it, so the op's device time is its kernels'
    # (dml's mm may call mm again on a view; the kernels sit under the innermost).
    mm = [e for e in events if e.name == "aten::mm" and e.device_type == DeviceType.CPU and e.kernels]
    add = [e for e in events if e.name == "aten::add" and e.device_type == DeviceType.CPU and e.kernels]
    assert len(mm) == 3 and len(add) == 3, [e.name for e in events]
    assert all(k.name.startswith("ew/add") for e in add for k in e.kernels)
    # 256x256x256 multiply-adds take far longer than adding 1 to 64 elements, on any device (the
    # fastest of three, since a software adapter's threads can be preempted mid-kernel).
    mm_time = min(e.device_time_total for e in mm)
    add_time = min(e.device_time_total for e in add)
    assert mm_time > add_time > 0


@needs_kernel_events
def test_chrome_trace_shows_kernels_with_grid_and_op(dml: torch.device, tmp_path: Path) -> None:
    x = torch.randn(1000, device=dml)
    (x * 2).cpu()
    with profile(activities=ACTIVITIES) as prof:
        (x * 2).cpu()
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    events = json.loads(trace.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert kernels, sorted({e.get("cat") for e in events if "cat" in e})
    kernel = kernels[0]
    assert kernel["dur"] >= 0
    assert kernel["args"]["op"] == "aten::mul"
    grid = kernel["args"]["grid"]
    assert len(grid) == 3 and all(g >= 1 for g in grid)
    assert kernel["args"]["clock"] in ("device timestamps", "host wall time, synchronous")
    # Kernels sit inside the profiled window, on the host's clock.
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    assert min(e["ts"] for e in ops) - 1000 <= kernel["ts"] <= max(e["ts"] + e["dur"] for e in ops) + 1000


@needs_kernel_events
def test_host_clock_fallback(dml: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    """Adapters without timestamp queries inside passes time each dispatch on the host, alone."""
    monkeypatch.setenv("TORCH_DML_PROFILE_CLOCK", "host")
    x = torch.randn(1000, device=dml)
    (x * 2).cpu()
    with profile(activities=ACTIVITIES) as prof:
        (x * 2).cpu()
    kernels = [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]
    assert kernels
    assert all(k.device_time > 0 for k in kernels)


def test_cpu_only_profile_has_no_device_events(dml: torch.device) -> None:
    x = torch.randn(1000, device=dml)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (x * 2).cpu()
    assert not [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]
    assert (x * 3).cpu().allclose(x.cpu() * 3)  # dispatch goes on untimed


@needs_kernel_events
def test_table_has_device_columns(dml: torch.device) -> None:
    x = torch.randn(1000, device=dml)
    with profile(activities=ACTIVITIES) as prof:
        (x * 2).cpu()
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=10)
    name = torch._C._get_privateuse1_backend_name().upper()
    assert f"Self {name}" in table and "aten::mul" in table
    assert torch_dml.device_count() >= 1
