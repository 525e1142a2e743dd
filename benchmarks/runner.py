"""Runs every case on every device, marks rows that used the CPU fallback, and computes ratios."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks import peaks, probes
from benchmarks.compare import key
from benchmarks.suites import Case
from benchmarks.timing import measure


def device_description(device: str) -> str:
    kind = torch.device(device).type
    if kind == "cpu":
        return f"CPU: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"
    if kind == "cuda":
        return f"CUDA: {torch.cuda.get_device_name(0)}"
    import torch_dml

    adapter = torch_dml._C._adapters(True)[0]
    return f"dml: {adapter['name']} ({adapter['backend']})"


def adapter_name(device: str) -> str | None:
    """The name the peaks table knows the device by (None for the CPU: it has no entry)."""
    kind = torch.device(device).type
    if kind == "cuda":
        return torch.cuda.get_device_name(torch.device(device).index or 0)
    if kind == "dml":
        import torch_dml

        return torch_dml._C._adapters(True)[torch.device(device).index or 0]["name"]
    return None


def value(case: Case, seconds: float) -> float:
    if case.unit == "GB/s":
        return case.work / seconds / 1e9
    if case.unit == "TFLOP/s":
        return case.work / seconds / 1e12
    if case.unit == "us/op":
        return seconds / case.work * 1e6
    return seconds * 1e3  # ms/step


def run_case(case: Case, device: str, repeats: int, device_times: bool = True) -> dict[str, Any]:
    row: dict[str, Any] = {"suite": case.suite, "name": case.name, "size": case.size, "unit": case.unit,
                           "device": device, "calls_per_sync": case.inner}
    extra: dict[str, Any] = {}
    try:
        fn = case.make(device)
        if torch.device(device).type == "dml":
            fn()  # warm-up outside the count: kernels compile once
            counter = probes.DmlCounter(device)
            timing = measure(fn, device, repeats=repeats, warmup=1, inner=case.inner, host_only=case.host_only)
            extra.update(counter.stop().per_call(1 + repeats * case.inner))
        else:
            timing = measure(fn, device, repeats=repeats, inner=case.inner, host_only=case.host_only)
    except Exception as error:  # noqa: BLE001 -- a row that cannot run is reported, the run goes on
        row.update(status="error", error=f"{type(error).__name__}: {str(error)[:200]}")
        return row
    if case.unit == "ms/step":  # a model-level row: what a step holds on the device (issue 16's memory target)
        try:
            extra.update(probes.peak_memory(fn, device))
        except Exception as error:  # noqa: BLE001 -- the row was timed; only its memory figure is missing
            extra["peak_memory_note"] = f"failed: {type(error).__name__}: {str(error)[:160]}"
    if device_times:
        try:
            extra.update(probes.device_time(fn, device, rounds=min(repeats, 3), calls_per_sync=case.inner))
        except Exception as error:  # noqa: BLE001 -- the row was timed; only its device time is missing
            extra["device_time_note"] = f"profiling failed: {type(error).__name__}: {str(error)[:160]}"
    row.update({"status": "fallback" if extra.get("fallback_ops") else "ok", "value": value(case, timing.median_s),
                "median_s": timing.median_s, "min_s": timing.min_s, "max_s": timing.max_s,
                "spread": round(timing.spread, 3), "repeats": timing.repeats, "fallback_ops": [],
                "peak": peaks.figure_for(case.unit, case.peak), **extra})
    if row.get("device_s"):
        row["device_value"] = value(case, row["device_s"])
    return row


def add_peak_shares(rows: list[dict[str, Any]], adapters: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each row's share of its adapter's nominal peak; returns what was known of each device's peaks."""
    known = {device: peaks.lookup(name) for device, name in adapters.items()}
    for row in rows:
        if "value" in row and row["device"] in known:
            row["peak_share"], row["peak"] = peaks.share(known[row["device"]], row["unit"], row.get("peak") or "",
                                                         row["value"])
    return {device: {"adapter": adapters[device], "known": p is not None, "label": p.label if p else None,
                     "figures": p.figures if p else {}, "note": peaks.describe(p, adapters[device])}
            for device, p in known.items()}


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per case: each device's value and dml relative to CPU and CUDA (>1 means dml is better)."""
    table: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for row in rows:
        entry = table.setdefault(key(row), {"suite": row["suite"], "name": row["name"], "size": row["size"],
                                            "calls_per_sync": row.get("calls_per_sync", 1), "unit": row["unit"],
                                            "values": {}, "status": {}, "peak_share": {}})
        kind = row["device"].split(":")[0]
        entry["values"][kind] = row.get("value")
        entry["status"][kind] = row["status"]
        if row.get("peak_allocated_bytes") is not None:
            entry.setdefault("peak_memory", {})[kind] = {"allocated": row["peak_allocated_bytes"],
                                                         "reserved": row["peak_reserved_bytes"]}
        if row.get("peak_share") is not None:
            entry["peak_share"][kind] = row["peak_share"]
            entry.setdefault("peak", {})[kind] = row["peak"]
    lower_is_better = {"us/op", "ms/step"}
    for entry in table.values():
        dml = entry["values"].get("dml")
        for other in ("cpu", "cuda"):
            base = entry["values"].get(other)
            if dml and base:
                entry[f"dml_vs_{other}"] = round(base / dml if entry["unit"] in lower_is_better else dml / base, 3)
        memory = entry.get("peak_memory", {})
        if "dml" in memory and "cuda" in memory and memory["cuda"]["allocated"]:
            # Like the time ratios, above 1 means dml is better: CUDA's peak over dml's.
            entry["dml_vs_cuda_memory"] = round(memory["cuda"]["allocated"] / max(memory["dml"]["allocated"], 1), 3)
    return list(table.values())


def save_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """The rows measured so far, replaced whole after each row: a run cut short (a lease's time limit)
    still leaves them."""
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(rows, indent=1))
    partial.replace(path)


def run(cases: list[Case], devices: list[str], repeats: int, device_times: bool = True,
        rows_file: Path | None = None) -> dict[str, Any]:
    rows = []
    started = time.perf_counter()
    for i, case in enumerate(cases, 1):
        for device in devices:
            if case.accelerator_only and torch.device(device).type == "cpu":
                continue
            row = run_case(case, device, repeats, device_times)
            rows.append(row)
            if rows_file is not None:
                save_rows(rows, rows_file)
            shown = f"{row['value']:.4g} {case.unit}" if "value" in row else row.get("error", "")
            mark = " (through the CPU fallback)" if row["status"] == "fallback" else ""
            batched = f", {case.inner} calls per sync" if case.inner > 1 else ""
            print(f"[{i}/{len(cases)}] {case.suite} {case.name} {case.size}{batched} on {device}: {shown}{mark}",
                  flush=True)
    names = {d: name for d in devices if (name := adapter_name(d))}
    return {"devices": {d: device_description(d) for d in devices}, "peaks": add_peak_shares(rows, names),
            "rows": rows, "comparison": ratios(rows), "wall_time_s": round(time.perf_counter() - started, 1)}


def run_apart(arguments: list[str], out: Path) -> dict[str, Any]:
    """``python -m benchmarks ARGUMENTS`` in a child that never loads torch_dml: with dml registered,
    PyTorch takes it for the process's accelerator and CUDA backward passes fail (torch_dml_autoload),
    so CUDA rows are timed beside the dml ones, not with them. The child reports into `out`."""
    child = subprocess.run([sys.executable, "-m", "benchmarks", *arguments, "--out", str(out)], check=False,
                           env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    if child.returncode != 0:  # the rows timed here are still worth a report
        print(f"benchmarks: the process for {' '.join(arguments)} failed (exit {child.returncode}); "
              "its rows are missing", flush=True)
        return {"devices": {}, "peaks": {}, "rows": [], "wall_time_s": 0.0}
    return json.loads((out / "results.json").read_text())


def merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    rows = first["rows"] + second["rows"]
    return {"devices": {**first["devices"], **second["devices"]},
            "peaks": {**first.get("peaks", {}), **second.get("peaks", {})}, "rows": rows, "comparison": ratios(rows),
            "wall_time_s": round(first["wall_time_s"] + second["wall_time_s"], 1)}
