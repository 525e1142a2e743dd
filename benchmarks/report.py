"""JSON and Markdown reports and PNG plots (bandwidth vs size, GEMM TFLOP/s vs size)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def markdown(result: dict[str, Any]) -> str:
    lines = [f"# Benchmarks ({result['generated']}, profile {result['profile']})", ""]
    lines += [f"- {device}: {text}" for device, text in result["devices"].items()]
    versions = f"- torch {result['versions']['torch']}, wgpu {result['versions']['wgpu']}"
    lines += [f"{versions}, wall time {result['wall_time_s']} s", "",
              "Rows marked *fallback* ran (partly) through the CPU fallback: they measure the fallback, not a kernel.",
              "Ratios above 1 mean dml is better.", ""]
    devices = [d.split(":")[0] for d in result["devices"]]
    header = "| suite | case | size | unit | " + " | ".join(devices) + " | dml/cpu | dml/cuda |"
    lines += [header, "|" + " --- |" * (6 + len(devices))]
    for entry in result["comparison"]:
        cells = []
        for d in devices:
            v = entry["values"].get(d)
            note = " (fallback)" if entry["status"].get(d) == "fallback" else ""
            cells.append("error" if v is None else f"{v:.4g}{note}")
        lines.append(f"| {entry['suite']} | {entry['name']} | {entry['size']} | {entry['unit']} | " + " | ".join(cells)
                     + f" | {entry.get('dml_vs_cpu', '')} | {entry.get('dml_vs_cuda', '')} |")
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
        for name in sorted({e["name"] for e in entries}):
            for device in sorted({d for e in entries for d in e["values"]}):
                points = [(e["size"], e["values"][device]) for e in entries
                          if e["name"] == name and e["values"].get(device) is not None]
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{name} ({device})")
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
