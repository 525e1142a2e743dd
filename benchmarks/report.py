"""JSON and Markdown reports and PNG plots (bandwidth vs size, GEMM TFLOP/s vs size)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import compare


def _share(entry: dict[str, Any], device: str) -> str:
    value = entry.get("peak_share", {}).get(device)
    tensor = " of tensor cores" if entry.get("peak", {}).get(device, "").endswith("tensor cores") else ""
    return "" if value is None else f"{value:.1%}{tensor}"


def _us(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e6:.4g}"


def comparison_table(result: dict[str, Any]) -> list[str]:
    devices = [d.split(":")[0] for d in result["devices"]]
    peaked = [d for d in devices if any(e.get("peak_share", {}).get(d) is not None for e in result["comparison"])]
    header = ("| suite | case | size | calls/sync | unit | " + " | ".join(devices) + " | dml/cpu | dml/cuda |"
              + "".join(f" {d} % of peak |" for d in peaked))
    lines = [header, "|" + " --- |" * (7 + len(devices) + len(peaked))]
    for entry in result["comparison"]:
        cells = []
        for d in devices:
            v = entry["values"].get(d)
            note = " (fallback)" if entry["status"].get(d) == "fallback" else ""
            cells.append("" if d not in entry["status"] else "error" if v is None else f"{v:.4g}{note}")
        lines.append(f"| {entry['suite']} | {entry['name']} | {entry['size']} | {entry.get('calls_per_sync', 1)} | "
                     f"{entry['unit']} | " + " | ".join(cells)
                     + f" | {entry.get('dml_vs_cpu', '')} | {entry.get('dml_vs_cuda', '')} |"
                     + "".join(f" {_share(entry, d)} |" for d in peaked))
    return lines


def detail_table(result: dict[str, Any], kind: str) -> list[str]:
    """Per call on one device: wall and device time, and on dml what the call cost in dispatches."""
    rows = [r for r in result.get("rows", []) if r["device"].split(":")[0] == kind and "median_s" in r]
    if not rows:
        return []
    counted = kind == "dml"
    lines = [f"### Per call on {kind}", "",
             "| suite | case | size | calls/sync | median us | spread | device us | device clock |"
             + (" dispatches | submits | waits | fallback calls |" if counted else ""),
             "|" + " --- |" * (8 + 4 * counted)]
    for r in rows:
        clock = "; ".join(filter(None, (r.get("device_clock"), r.get("device_time_note"))))
        line = (f"| {r['suite']} | {r['name']} | {r['size']} | {r.get('calls_per_sync', 1)} | {_us(r['median_s'])} | "
                f"{r['spread']:.1%} | {_us(r.get('device_s'))} | {clock} |")
        if counted:
            line += (f" {r.get('dispatches_per_call', '')} | {r.get('submits_per_call', '')} |"
                     f" {r.get('waits_per_call', '')} | {r.get('fallback_calls_per_call', '')} |")
        lines.append(line)
    return lines + [""]


def _mib(n: int | None) -> str:
    return "" if n is None else f"{n / 2**20:.1f}"


def memory_table(result: dict[str, Any]) -> list[str]:
    """Peak device memory over one call of each model-level row, per device (benchmarks/probes.py)."""
    entries = [e for e in result["comparison"] if e.get("peak_memory")]
    if not entries:
        return []
    kinds = sorted({k for e in entries for k in e["peak_memory"]})
    lines = ["### Peak device memory per call", "",
             ("*allocated*: what tensors held at the peak; *reserved*: what the caching allocator held from the "
              "device. Both include what was alive before the call (parameters, optimizer state). "
              "*dml/cuda*: CUDA's allocated peak over dml's (above 1: dml holds less)."), "",
             "| suite | case | size |" + "".join(f" {k} allocated MiB | {k} reserved MiB |" for k in kinds)
             + " dml/cuda |", "|" + " --- |" * (4 + 2 * len(kinds))]
    for e in entries:
        cells = "".join(f" {_mib(e['peak_memory'].get(k, {}).get('allocated'))} |"
                        f" {_mib(e['peak_memory'].get(k, {}).get('reserved'))} |" for k in kinds)
        lines.append(f"| {e['suite']} | {e['name']} | {e['size']} |{cells} {e.get('dml_vs_cuda_memory', '')} |")
    return lines + [""]


def top_kernels_table(result: dict[str, Any]) -> list[str]:
    """Where each dml row's device time goes: its heaviest kernels per call (benchmarks/probes.py)."""
    rows = [r for r in result.get("rows", []) if r.get("device_top_kernels")]
    if not rows:
        return []
    lines = ["### Heaviest dml kernels per call", "",
             "| suite | case | size | device us | kernels (us per call, launches per call, most workgroups) |",
             "|" + " --- |" * 5]
    for r in rows:
        kernels = "; ".join(f"{k['kernel']} {_us(k['device_s'])} ({k['launches']:g}"
                            + (f", {k['workgroups']} wg)" if "workgroups" in k else ")") for k in r["device_top_kernels"])
        lines.append(f"| {r['suite']} | {r['name']} | {r['size']} | {_us(r.get('device_s'))} | {kernels} |")
    return lines + [""]


def markdown(result: dict[str, Any]) -> str:
    lines = [f"# Benchmarks ({result['generated']}, profile {result['profile']})", ""]
    lines += [f"- {device}: {text}" for device, text in result["devices"].items()]
    versions = f"- torch {result['versions']['torch']}, wgpu {result['versions']['wgpu']}"
    commit = f", commit {result['commit']}" if result.get("commit") else ""
    lines += [f"{versions}{commit}, wall time {result['wall_time_s']} s"]
    lines += [f"- peak figures for {device}: {info['note']}" for device, info in result.get("peaks", {}).items()]
    lines += ["",
              "Rows marked *fallback* ran (partly) through the CPU fallback: they measure the fallback, not a kernel.",
              ("Ratios above 1 mean dml is better. *calls/sync*: calls issued between two synchronisations; "
               "*% of peak*: the value over the adapter's nominal figure (docs/benchmarks.md)."), ""]
    lines += comparison_table(result) + [""]
    for kind in dict.fromkeys(d.split(":")[0] for d in result["devices"]):
        if kind != "cpu":
            lines += detail_table(result, kind)
    lines += memory_table(result)
    lines += top_kernels_table(result)
    if result.get("regression_check"):
        lines.append(compare.markdown(result["regression_check"]))
    return "\n".join(lines) + "\n"


def plots(result: dict[str, Any], out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    for suite, unit, filename in (("elementwise", "GB/s", "bandwidth.png"), ("gemm", "TFLOP/s", "gemm.png")):
        entries = [e for e in result["comparison"] if e["suite"] == suite]
        if not entries:
            continue
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for name, per_sync in sorted({(e["name"], e.get("calls_per_sync", 1)) for e in entries}):
            label = name if per_sync == 1 else f"{name} x{per_sync} per sync"
            for device in sorted({d for e in entries for d in e["values"]}):
                points = [(e["size"], e["values"][device]) for e in entries
                          if (e["name"], e.get("calls_per_sync", 1)) == (name, per_sync)
                          and e["values"].get(device) is not None]
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{label} ({device})")
        ax.set_xlabel("size (elements)" if suite == "elementwise" else "m x k x n")
        ax.set_ylabel(unit)
        ax.set_yscale("log")
        ax.set_title(f"{suite}: {unit} by size")
        ax.legend(fontsize=7)
        ax.tick_params(axis="x", labelrotation=30)
        fig.tight_layout()
        fig.savefig(out / filename, dpi=110)
        plt.close(fig)
        written.append(filename)
    return written


def write(result: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    result["plots"] = plots(result, out)
    (out / "results.json").write_text(json.dumps(result, indent=1))
    (out / "results.md").write_text(markdown(result))
