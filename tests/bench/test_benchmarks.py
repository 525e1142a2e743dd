"""The benchmark runner: timing statistics, units, fallback marking, ratios and the report."""

import json

import pytest
import torch

from benchmarks import probes, report, runner
from benchmarks.suites import BATCHED, Case, cases
from benchmarks.timing import measure


def test_measure_reports_median_and_spread():
    calls = []
    timing = measure(lambda: calls.append(1), "cpu", repeats=5, warmup=2, inner=3)
    assert len(calls) == 2 + 5 * 3
    assert timing.min_s <= timing.median_s <= timing.max_s and timing.repeats == 5 and timing.spread >= 0


def test_units():
    case = Case("gemm", "mm", "2", "TFLOP/s", lambda d: (lambda: None), 2e12)
    assert runner.value(case, 1.0) == 2.0
    latency = Case("overhead", "chain", "1", "us/op", lambda d: (lambda: None), 1000.0)
    assert abs(runner.value(latency, 0.001) - 1.0) < 1e-9


def summing(device):
    a = torch.ones(64, device=device)
    return lambda: a.sum()


def adding(device):
    a, b = torch.ones(64, device=device), torch.ones(64, device=device)
    return lambda: a + b


def renorming(device):
    a = torch.ones(8, 8, device=device)
    return lambda: a.renorm(2, 0, 1.0)  # no native kernel yet


def test_native_row_is_ok_and_fallback_row_is_marked():
    native = Case("reduction", "sum", "64", "GB/s", summing, 256.0)
    row = runner.run_case(native, "dml", repeats=2)
    assert row["status"] == "ok" and row["value"] > 0
    fallback = Case("norm", "renorm", "64", "GB/s", renorming, 512.0)
    row = runner.run_case(fallback, "dml", repeats=2)
    assert row["status"] == "fallback" and "aten::renorm.out" in row["fallback_ops"]


def test_dml_row_counts_dispatches_and_times_its_kernels():
    row = runner.run_case(Case("elementwise", "add", "64", "GB/s", adding, 768.0, inner=4), "dml", repeats=2)
    assert row["status"] == "ok" and row["calls_per_sync"] == 4
    assert row["dispatches_per_call"] == 1.0 and row["fallback_calls_per_call"] == 0.0
    assert 0 < row["submits_per_call"] <= 1.0  # one submit per sync at most, shared by the calls before it
    # The counted calls are a warm-up and 2 repeats of 4, each followed by one sync; nothing else waits.
    assert row["waits_per_call"] == round(3 / 9, 2)
    activity, clock = probes.device_clock("dml")
    if activity is None:
        assert row["device_time_note"] == clock and "device_s" not in row
    else:
        assert row["device_clock"] == "device timestamps" and row["device_events_per_call"] == 1.0
        assert row["device_s"] > 0 and row["device_value"] > 0
        [kernel] = row["device_top_kernels"]  # one kernel per add, timed without torch.profiler
        assert kernel["launches"] == 1.0 and kernel["device_s"] == pytest.approx(row["device_s"])


def test_top_kernels_are_listed_heaviest_first():
    def step() -> object:
        x = torch.rand(128, 128, device="dml")
        return (x @ x).relu().sum()
    row = runner.run_case(Case("training", "tiny step", "128", "ms/step", lambda device: step, 0.0), "dml", repeats=2)
    if "device_top_kernels" not in row:
        pytest.skip(row.get("device_time_note", "no device clock"))
    times = [k["device_s"] for k in row["device_top_kernels"]]
    assert times == sorted(times, reverse=True) and 2 <= len(times) <= probes.TOP_KERNELS
    table = report.top_kernels_table({"rows": [row]})
    assert table[0] == "### Heaviest dml kernels per call" and row["device_top_kernels"][0]["kernel"] in table[4]


def test_fallback_calls_are_counted_per_call():
    row = runner.run_case(Case("norm", "renorm", "64", "GB/s", renorming, 512.0), "dml", repeats=2,
                          device_times=False)
    assert row["fallback_calls_per_call"] >= 1.0 and "device_s" not in row


def test_batched_rows_beside_single_ones():
    chosen = cases(True, ["elementwise", "reduction"])
    batched = [(c.suite, c.name) for c in chosen if c.inner == 20]
    assert ("elementwise", "add") in batched and ("reduction", "sum") in batched
    assert len(batched) == sum(c.inner == 1 and (c.suite, c.name) in BATCHED for c in chosen)


def test_a_failed_profiling_pass_keeps_the_timed_row(monkeypatch):
    def failing(*args, **kwargs):
        raise RuntimeError("no profiler here")
    monkeypatch.setattr(probes, "device_time", failing)
    row = runner.run_case(Case("elementwise", "add", "64", "GB/s", adding, 768.0), "cpu", repeats=1)
    assert row["status"] == "ok" and row["value"] > 0 and "no profiler here" in row["device_time_note"]


def test_errors_do_not_stop_the_run():
    def broken(device):
        raise RuntimeError("no such kernel")
    row = runner.run_case(Case("x", "broken", "1", "GB/s", broken, 1.0), "dml", repeats=1)
    assert row["status"] == "error" and "no such kernel" in row["error"]


def test_ratios_and_markdown():
    rows = [{"suite": "gemm", "name": "mm", "size": "8", "unit": "TFLOP/s", "device": d, "status": "ok", "value": v}
            for d, v in (("cpu", 1.0), ("dml", 3.0), ("cuda", 6.0))]
    rows += [{"suite": "training", "name": "step", "size": "1", "unit": "ms/step", "device": d, "status": s, "value": v}
             for d, v, s in (("cpu", 10.0, "ok"), ("dml", 5.0, "fallback"))]
    table = {e["name"]: e for e in runner.ratios(rows)}
    assert table["mm"]["dml_vs_cpu"] == 3.0 and table["mm"]["dml_vs_cuda"] == 0.5
    assert table["step"]["dml_vs_cpu"] == 2.0  # lower is better for ms/step
    result = {"generated": "now", "profile": "quick", "devices": {"cpu": "CPU", "dml": "dml", "cuda": "GPU"},
              "versions": {"torch": "2.13", "wgpu": "0.32.0"}, "wall_time_s": 1.0, "comparison": runner.ratios(rows)}
    text = report.markdown(result)
    assert "| gemm | mm | 8 | 1 | TFLOP/s | 1 | 3 | 6 | 3.0 | 0.5 |" in text and "(fallback)" in text


def test_quick_profile_has_every_suite():
    names = {case.suite for case in cases(True, ["elementwise", "reduction", "gemm", "overhead", "training"])}
    assert {"elementwise", "reduction", "gemm", "copy", "overhead", "training"} <= names


def test_rows_timed_apart_merge_into_one_comparison(tmp_path):
    child = runner.run_apart(["--devices", "cpu", "--suites", "overhead", "--quick", "--repeats", "1"], tmp_path)
    assert child["rows"] and {row["device"] for row in child["rows"]} == {"cpu"}
    # The child kept its rows as it went, for a run cut short.
    assert json.loads((tmp_path / "rows.json").read_text()) == child["rows"]
    dml = [{**row, "device": "dml", "value": 2 * row["value"]} for row in child["rows"] if "value" in row]
    merged = runner.merge({"devices": {"dml": "dml"}, "rows": dml, "wall_time_s": 1.0}, child)
    assert set(merged["devices"]) == {"dml", "cpu"} and len(merged["rows"]) == len(dml) + len(child["rows"])
    assert all("dml_vs_cpu" in entry for entry in merged["comparison"] if entry["values"].get("dml"))


def test_model_rows_run_natively(strict):
    """The models suite (full-size ResNet-18 and GPT-style decoder on a GPU) in its toy sizes, on kernels only."""
    chosen = cases(True, ["models"])
    assert {c.name for c in chosen} >= {"ResNet-18 training step (SGD)", "GPT-style decoder training step (AdamW)"}
    for case in chosen:
        loss = case.make("dml")()
        assert torch.isfinite(loss.cpu()).all(), case.name


def test_peak_memory_counts_what_a_call_allocates(dml):
    held = torch.zeros(1 << 20, device=dml)  # 4 MiB alive before the call
    figures = probes.peak_memory(lambda: torch.ones(1 << 22, device=dml) * 2, "dml")
    # The parameters' 4 MiB plus two 16 MiB temporaries at once (ones, and the product).
    assert figures["peak_allocated_bytes"] >= 4 * 2**20 + 2 * 16 * 2**20
    assert figures["peak_reserved_bytes"] >= figures["peak_allocated_bytes"]
    assert probes.peak_memory(lambda: None, "cpu") == {}
    del held


def test_rows_are_saved_after_each_row(tmp_path, monkeypatch):
    saved = []
    case = Case("overhead", "noop", "1", "us/op", lambda device: lambda: None, 1.0)
    original = runner.save_rows

    def spy(rows, path):
        original(rows, path)
        saved.append(len(json.loads(path.read_text())))

    monkeypatch.setattr(runner, "save_rows", spy)
    runner.run([case, case], ["cpu"], repeats=1, device_times=False, rows_file=tmp_path / "rows.json")
    assert saved == [1, 2]


def test_kernel_grids_of_a_case(dml):
    from benchmarks import kernel_grids

    dispatches, rows = kernel_grids.grids("MLP step", quick=True)
    assert dispatches == sum(launches for _, launches, _, _ in rows) > 0
    assert any(kernel.startswith(("gemm", "gemm128")) for kernel, *_ in rows)
    assert all(groups == sorted(groups) and groups[0] >= 1 for _, _, groups, _ in rows)
