"""The report rendered from synthetic results: calls per sync, per-call counts and device time, share of
peak, and the regression section."""

from bench_results import result, row

from benchmarks import compare, report, runner


def rendered(*rows, **kwargs) -> str:
    run = result(*rows, **kwargs)
    run["devices"]["cuda"] = "CUDA: NVIDIA H100 80GB HBM3"
    run["peaks"] = runner.add_peak_shares(run["rows"], {"dml": "NVIDIA H100 80GB HBM3", "cuda": "NVIDIA H100 80GB HBM3"})
    run["comparison"] = runner.ratios(run["rows"])
    return report.markdown(run)


def test_columns_for_calls_per_sync_and_share_of_peak():
    text = rendered(row("add", 1e-3, peak="memory"), row("add", 5e-4, calls_per_sync=20, peak="memory"),
                    row("add", 5e-4, device="cuda", peak="memory"))
    # value = 1 / median_s GB/s: 1000 GB/s is 29.9% of an H100's 3350 GB/s, 2000 GB/s 59.7%.
    assert "| elementwise | add | 1024 | 1 | GB/s | 1000 | 2000 |  | 0.5 | 29.9% | 59.7% |" in text
    assert "| elementwise | add | 1024 | 20 | GB/s | 2000 |  |  |  | 59.7% |  |" in text
    assert "peak figures for dml: NVIDIA H100 SXM: memory 3350 GB/s" in text


def test_share_of_tensor_cores_is_marked():
    mm = {"suite": "gemm", "size": "4096", "unit": "TFLOP/s", "peak": "float16"}
    text = rendered(row("mm float16", 1.0 / 17.1, **mm), row("mm float16", 1.0 / 650.6, device="cuda", **mm))
    assert "| 12.8% | 65.8% of tensor cores |" in text


def test_per_call_detail_has_counts_and_device_time():
    text = rendered(row("add", 1e-3, dispatches_per_call=1.0, submits_per_call=1.0, waits_per_call=1.0,
                        fallback_calls_per_call=0.0, device_s=2.5e-4, device_clock="device timestamps"),
                    row("renorm", 1e-3, status="fallback", dispatches_per_call=2.0, submits_per_call=1.0,
                        waits_per_call=2.0, fallback_calls_per_call=1.0,
                        device_time_note="the adapter has no timestamp queries inside passes"))
    assert "| elementwise | add | 1024 | 1 | 1000 | 1.0% | 250 | device timestamps | 1.0 | 1.0 | 1.0 | 0.0 |" in text
    assert "| 1000 | 1.0% |  | the adapter has no timestamp queries inside passes | 2.0 | 1.0 | 2.0 | 1.0 |" in text
    assert "| renorm | 1024 | 1 | GB/s | 1000 (fallback) |" in text


def test_unknown_adapter_is_named_without_ratios():
    run = result(row("add", 1e-3))
    run["peaks"] = runner.add_peak_shares(run["rows"], {"dml": "llvmpipe (LLVM 17.0.6, 256 bits)"})
    run["comparison"] = runner.ratios(run["rows"])
    text = report.markdown(run)
    assert "no nominal peak figures for 'llvmpipe (LLVM 17.0.6, 256 bits)'" in text
    header = next(line for line in text.splitlines() if line.startswith("| suite | case |"))
    assert "% of peak" not in header


def test_regression_section():
    base, new = result(row("add", 1e-3)), result(row("add", 2e-3))
    new["comparison"] = runner.ratios(new["rows"])
    new["regression_check"] = compare.compare(base, new)
    text = report.markdown(new)
    assert "## Against the baseline (2026-11-27T20:00:00+00:00, commit abc1234)" in text
    assert "| slower | elementwise | add | 1024 | 1 | 1000 us | 2000 us | +100.0% | 5.0% |  |" in text


def test_peak_memory_of_model_rows_side_by_side():
    step = {"suite": "models", "size": "batch 32", "unit": "ms/step"}
    text = rendered(row("ResNet-18 step", 0.1, peak_allocated_bytes=3 * 2**30, peak_reserved_bytes=4 * 2**30, **step),
                    row("ResNet-18 step", 0.05, device="cuda", peak_allocated_bytes=2 * 2**30,
                        peak_reserved_bytes=5 * 2**29, **step),
                    row("add", 1e-3))
    assert "### Peak device memory per call" in text
    # CUDA's allocated peak over dml's: 2 GiB / 3 GiB.
    assert "| models | ResNet-18 step | batch 32 | 2048.0 | 2560.0 | 3072.0 | 4096.0 | 0.667 |" in text
    assert "| elementwise | add | 1024 | " not in text.split("### Peak device memory per call")[1]
