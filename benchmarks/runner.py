"""Runs every case on every device, marks rows that used the CPU fallback, and computes ratios."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

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


def value(case: Case, seconds: float) -> float:
    if case.unit == "GB/s":
        return case.work / seconds / 1e9
    if case.unit == "TFLOP/s":
        return case.work / seconds / 1e12
    if case.unit == "us/op":
        return seconds / case.work * 1e6
    return seconds * 1e3  # ms/step


def run_case(case: Case, device: str, repeats: int) -> dict[str, Any]:
    row: dict[str, Any] = {"suite": case.suite, "name": case.name, "size": case.size, "unit": case.unit,
                           "device": device}
    fallback_ops: dict[str, int] = {}
    try:
        fn = case.make(device)
        if torch.device(device).type == "dml":
            import torch_dml

            fn()  # warm-up outside the count: kernels compile once
            torch_dml.reset_fallback_counts()
            timing = measure(fn, device, repeats=repeats, warmup=1, host_only=case.host_only)
            fallback_ops = torch_dml.fallback_counts()
        else:
            timing = measure(fn, device, repeats=repeats, host_only=case.host_only)
    except Exception as error:  # noqa: BLE001 -- a row that cannot run is reported, the run goes on
        row.update(status="error", error=f"{type(error).__name__}: {str(error)[:200]}")
        return row
    row.update(status="fallback" if fallback_ops else "ok", value=value(case, timing.median_s),
               median_s=timing.median_s, spread=round(timing.spread, 3), repeats=timing.repeats,
               fallback_ops=sorted(fallback_ops))
    return row


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per case: each device's value and dml relative to CPU and CUDA (>1 means dml is better)."""
    table: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["suite"], row["name"], row["size"])
        entry = table.setdefault(key, {"suite": row["suite"], "name": row["name"], "size": row["size"],
                                       "unit": row["unit"], "values": {}, "status": {}})
        entry["values"][row["device"].split(":")[0]] = row.get("value")
        entry["status"][row["device"].split(":")[0]] = row["status"]
    lower_is_better = {"us/op", "ms/step"}
    for entry in table.values():
        dml = entry["values"].get("dml")
        for other in ("cpu", "cuda"):
            base = entry["values"].get(other)
            if dml and base:
                entry[f"dml_vs_{other}"] = round(base / dml if entry["unit"] in lower_is_better else dml / base, 3)
    return list(table.values())


def run(cases: list[Case], devices: list[str], repeats: int) -> dict[str, Any]:
    rows = []
    started = time.perf_counter()
    for i, case in enumerate(cases, 1):
        for device in devices:
            if case.accelerator_only and torch.device(device).type == "cpu":
                continue
            row = run_case(case, device, repeats)
            rows.append(row)
            shown = f"{row['value']:.4g} {case.unit}" if "value" in row else row.get("error", "")
            mark = " (through the CPU fallback)" if row["status"] == "fallback" else ""
            print(f"[{i}/{len(cases)}] {case.suite} {case.name} {case.size} on {device}: {shown}{mark}", flush=True)
    return {"devices": {d: device_description(d) for d in devices}, "rows": rows, "comparison": ratios(rows),
            "wall_time_s": round(time.perf_counter() - started, 1)}


def run_apart(arguments: list[str]) -> dict[str, Any]:
    """``python -m benchmarks ARGUMENTS`` in a child that never loads torch_dml: with dml registered,
    PyTorch takes it for the process's accelerator and CUDA backward passes fail (torch_dml_autoload),
    so CUDA rows are timed beside the dml ones, not with them."""
    with tempfile.TemporaryDirectory() as out:
        child = subprocess.run([sys.executable, "-m", "benchmarks", *arguments, "--out", out], check=False,
                               env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
        if child.returncode != 0:  # the rows timed here are still worth a report
            print(f"benchmarks: the process for {' '.join(arguments)} failed (exit {child.returncode}); "
                  "its rows are missing", flush=True)
            return {"devices": {}, "rows": [], "wall_time_s": 0.0}
        return json.loads((Path(out) / "results.json").read_text())


def merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    rows = first["rows"] + second["rows"]
    return {"devices": {**first["devices"], **second["devices"]}, "rows": rows, "comparison": ratios(rows),
            "wall_time_s": round(first["wall_time_s"] + second["wall_time_s"], 1)}
