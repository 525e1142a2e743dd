"""The regression check: a run against a stored baseline, row by row, slower only beyond the noise the two
runs measured themselves.

A row's time is its median seconds per call; its noise is the spread of its repeats ((max - min) /
median). A row is *slower* when the new median and the new fastest repeat both exceed the baseline's by
more than the larger of the two spreads, and never by less than FLOOR: repeats that happen to agree
closely do not make a 2% wobble a regression. A row that ran before and now errors, or was native and now takes the CPU fallback, is a
regression whatever its time. Only dml rows are checked: CPU and CUDA rows are there for reference.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

FLOOR = 0.05
BASELINES = Path(__file__).resolve().parent / "baselines"
REGRESSIONS = {"slower", "broken", "now fallback"}


def tolerance(base: dict[str, Any], new: dict[str, Any]) -> float:
    return max(FLOOR, base.get("spread") or 0.0, new.get("spread") or 0.0)


def key(row: dict[str, Any]) -> tuple[str, str, str, int]:
    """What identifies a row across devices and runs (reports written before calls per sync had one)."""
    return row["suite"], row["name"], row["size"], row.get("calls_per_sync", 1)


def _dml_rows(result: dict[str, Any]) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    return {key(row): row for row in result["rows"] if row["device"].split(":")[0] == "dml"}


def beyond(slow: dict[str, Any], fast: dict[str, Any], noise: float) -> bool:
    """Whether `slow` took longer than `fast` by more than `noise`, in its median and in its fastest
    repeat both: load from other processes only adds time, so the fastest repeat is the least disturbed,
    and a real slowdown moves it too. Measured on lavapipe, two pairs of quick runs of one commit on two
    busy cores: 4 and 3 of 39 medians beyond the noise; 0 and 3 with their fastest repeats as well."""
    checked = [slow[k] > fast[k] * (1.0 + noise) for k in ("median_s", "min_s") if slow.get(k) and fast.get(k)]
    return bool(checked) and all(checked)


def verdict(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """One row of the check: what changed between the two runs of a case and whether it regressed."""
    line: dict[str, Any] = {"suite": new["suite"], "name": new["name"], "size": new["size"],
                            "calls_per_sync": new.get("calls_per_sync", 1), "unit": new["unit"],
                            "base_s": base.get("median_s"), "new_s": new.get("median_s")}
    if new["status"] == "error":
        line["verdict"] = "still broken" if base["status"] == "error" else "broken"
        line["note"] = new.get("error", "")
        return line
    if base["status"] == "error":
        line["verdict"] = "fixed"
        return line
    line["tolerance"] = round(tolerance(base, new), 3)
    line["change"] = round(new["median_s"] / base["median_s"] - 1.0, 3)
    if new["status"] == "fallback" and base["status"] == "ok":
        line["verdict"] = "now fallback"
        line["note"] = ", ".join(new.get("fallback_ops", []))
    elif beyond(new, base, line["tolerance"]):
        line["verdict"] = "slower"
    elif beyond(base, new, line["tolerance"]):
        line["verdict"] = "faster"
    else:
        line["verdict"] = "same"
    if new["status"] == "ok" and base["status"] == "fallback":
        line["note"] = "now native"
    return line


def compare(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    before, after = _dml_rows(base), _dml_rows(new)
    lines = [verdict(before[k], after[k]) for k in after if k in before]
    lines += [{"suite": k[0], "name": k[1], "size": k[2], "calls_per_sync": k[3], "verdict": "new"}
              for k in after if k not in before]
    lines += [{"suite": k[0], "name": k[1], "size": k[2], "calls_per_sync": k[3], "verdict": "missing"}
              for k in before if k not in after]
    warnings = []
    if adapter(base) != adapter(new):
        warnings.append(f"the baseline ran on {adapter(base)!r}, this run on {adapter(new)!r}: times do not compare")
    if base.get("profile") != new.get("profile"):
        warnings.append(f"the baseline is profile {base.get('profile')!r}, this run {new.get('profile')!r}")
    return {"baseline": {k: base.get(k) for k in ("generated", "profile", "commit")},
            "adapter": adapter(new), "floor": FLOOR, "rows": lines, "warnings": warnings,
            "regressions": sum(line["verdict"] in REGRESSIONS for line in lines)}


def adapter(result: dict[str, Any]) -> str:
    """The dml adapter a run measured, as its report describes it."""
    described = [text for device, text in result.get("devices", {}).items() if device.split(":")[0] == "dml"]
    return described[0].removeprefix("dml: ") if described else ""


def baseline_name(result: dict[str, Any]) -> str:
    """The file a baseline for this run's adapter and profile is stored under: one per both, since a
    quick run and a full one time different sizes and repeats."""
    slug = re.sub(r"[^a-z0-9]+", "-", adapter(result).lower()).strip("-") or "no-dml-adapter"
    return f"{slug}-{result.get('profile', 'full')}.json"


def find_baseline(result: dict[str, Any], folder: Path | None = None) -> Path | None:
    path = (folder or BASELINES) / baseline_name(result)
    return path if path.is_file() else None


def load(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def markdown(check: dict[str, Any]) -> str:
    """The rows that changed (or could not be compared); rows within the noise are only counted."""
    base = check["baseline"]
    lines = [f"## Against the baseline ({base.get('generated')}, commit {base.get('commit') or 'unknown'})", "",
             (f"A row is slower when its median time per call and its fastest repeat both grew by more than the "
              f"larger spread (max-min over median) of its repeats in either run, and by at least "
              f"{check['floor']:.0%}. dml rows only."), ""]
    lines += [f"- warning: {w}" for w in check["warnings"]]
    same = sum(line["verdict"] == "same" for line in check["rows"])
    changed = [line for line in check["rows"] if line["verdict"] != "same"]
    others = len(changed) - check["regressions"]
    lines += [f"{check['regressions']} regressions, {same} rows within the noise, {others} other changes.", ""]
    if changed:
        lines += ["| verdict | suite | case | size | calls/sync | baseline | now | change | noise | note |",
                  "|" + " --- |" * 10]
        for line in changed:
            times = [f"{line[k] * 1e6:.4g} us" if line.get(k) else "" for k in ("base_s", "new_s")]
            change = f"{line['change']:+.1%}" if "change" in line else ""
            noise = f"{line['tolerance']:.1%}" if "tolerance" in line else ""
            lines.append(f"| {line['verdict']} | {line['suite']} | {line['name']} | {line['size']} | "
                         f"{line['calls_per_sync']} | {times[0]} | {times[1]} | {change} | {noise} | "
                         f"{line.get('note', '')} |")
    return "\n".join(lines) + "\n"
