"""What a row costs besides its wall time: dml's dispatch, submit and CPU-fallback counts per call, and
the device time of its kernels: dml's from torch_dml's dispatch timer (timestamp queries), CUDA's from
torch.profiler's CUPTI kernel events."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from benchmarks.timing import synchronize


def _index(device: str) -> int:
    return torch.device(device).index or 0


@dataclass
class Counts:
    dispatches: int
    submits: int
    fallback_ops: dict[str, int]
    waits: int = 0  # the host waiting for the device: reads back and synchronizations

    def per_call(self, calls: int) -> dict[str, Any]:
        return {"dispatches_per_call": round(self.dispatches / calls, 2),
                "submits_per_call": round(self.submits / calls, 2),
                "waits_per_call": round(self.waits / calls, 2),
                "fallback_calls_per_call": round(sum(self.fallback_ops.values()) / calls, 2),
                "fallback_ops": sorted(self.fallback_ops)}


class DmlCounter:
    """Counts between `__init__` and `stop()` (the fallback counters are process-wide, so reset here)."""

    def __init__(self, device: str) -> None:
        import torch_dml

        self._index = _index(device)
        torch_dml.reset_fallback_counts()
        self._start = torch_dml._C._stream_counters(self._index)
        self._waits = torch_dml._C._wait_count(self._index)

    def stop(self) -> Counts:
        import torch_dml

        dispatches, submits = torch_dml._C._stream_counters(self._index)
        return Counts(dispatches - self._start[0], submits - self._start[1], torch_dml.fallback_counts(),
                      torch_dml._C._wait_count(self._index) - self._waits)


def peak_memory(fn: Callable[[], object], device: str) -> dict[str, Any]:
    """Device memory over one call of `fn`, from the caching allocator's statistics: the peak of what
    tensors held (`allocated`) and of what the allocator held from the device (`reserved`, its cache
    included), both counting what was alive before the call (a model's parameters and optimizer state).
    dml and CUDA keep the same statistics; the CPU has none, so its rows have no figure."""
    kind = torch.device(device).type
    if kind == "cuda":
        stats = torch.cuda
    elif kind == "dml":
        import torch_dml as stats
    else:
        return {}
    index = _index(device)
    synchronize(device)
    stats.reset_peak_memory_stats(index)
    fn()
    synchronize(device)
    return {"peak_allocated_bytes": stats.max_memory_allocated(index),
            "peak_reserved_bytes": stats.max_memory_reserved(index)}


def device_clock(device: str) -> tuple[str | None, str]:
    """(who times the kernels: "CUDA" (torch.profiler) or "torch_dml", and how), or (None, why there is no
    device time)."""
    kind = torch.device(device).type
    if kind == "cuda":
        return "CUDA", "CUPTI kernel records"
    if kind != "dml":
        return None, "no device clock on the CPU"
    import torch_dml

    if os.environ.get("TORCH_DML_PROFILE_CLOCK") == "host":
        return None, "TORCH_DML_PROFILE_CLOCK=host: kernels timed on the host, not the device"
    if not torch_dml._C._has_feature(_index(device), "timestamp-query-inside-passes"):
        return None, "the adapter has no timestamp queries inside passes"
    return "torch_dml", "device timestamps"


def device_time(fn: Callable[[], object], device: str, rounds: int, calls_per_sync: int) -> dict[str, Any]:
    """Seconds of device activity per call, summed over the kernels of `rounds` synchronised rounds of
    `calls_per_sync` calls. Timing adds host work, so this runs apart from
    the timed repeats; batching is unchanged, so the kernels are the ones the timed calls ran."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    activity, clock = device_clock(device)
    if activity is None:
        return {"device_clock": None, "device_time_note": clock}
    if activity == "torch_dml":
        return _dml_device_time(fn, device, rounds, calls_per_sync, clock)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(rounds):
            for _ in range(calls_per_sync):
                fn()
            synchronize(device)
    kernels = [event for event in prof.events() if event.device_type == DeviceType.CUDA]
    calls = rounds * calls_per_sync
    if not kernels:
        return {"device_clock": clock, "device_s": None, "device_time_note": "no kernel events recorded"}
    return {"device_clock": clock, "device_s": sum(k.device_time_total for k in kernels) * 1e-6 / calls,
            "device_events_per_call": round(len(kernels) / calls, 2)}


# dml kernels are timed by torch_dml's own dispatch timer (the one its torch.profiler activity reads), so
# every torch gets device times (2.11 has no PrivateUse1 kernel events) and each row its heaviest kernels.
TOP_KERNELS = 3


def _dml_device_time(fn: Callable[[], object], device: str, rounds: int, calls_per_sync: int,
                     clock: str) -> dict[str, Any]:
    import torch_dml

    index = _index(device)
    torch_dml._C._start_kernel_timing(index)
    try:
        for _ in range(rounds):
            for _ in range(calls_per_sync):
                fn()
            synchronize(device)
    finally:
        timings = torch_dml._C._stop_kernel_timing(index)
    calls = rounds * calls_per_sync
    if not timings:
        return {"device_clock": clock, "device_s": None, "device_time_note": "no kernels recorded"}
    per_kernel: dict[str, list[float]] = {}
    for kernel, start_ns, end_ns, _on_device, (x, y, z) in timings:
        entry = per_kernel.setdefault(kernel, [0.0, 0, 0])
        entry[0] += (end_ns - start_ns) * 1e-9
        entry[1] += 1
        entry[2] = max(entry[2], x * y * z)
    heaviest = sorted(per_kernel.items(), key=lambda item: -item[1][0])[:TOP_KERNELS]
    # The most workgroups a launch of the kernel had: few against the adapter's cores is a kernel that
    # leaves most of a large GPU idle.
    return {"device_clock": clock, "device_s": sum(seconds for seconds, _, _ in per_kernel.values()) / calls,
            "device_events_per_call": round(len(timings) / calls, 2),
            "device_top_kernels": [{"kernel": name, "device_s": seconds / calls, "launches": round(count / calls, 2),
                                    "workgroups": groups}
                                   for name, (seconds, count, groups) in heaviest]}
