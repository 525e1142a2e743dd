"""The report: versioned JSON (the data) and Markdown / HTML rendered from it with jinja2."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2

from conformance import SCHEMA_VERSION, statuses

TEMPLATES = Path(__file__).parent / "templates"
COLOURS = {statuses.PASS: "#2e7d32", statuses.FALLBACK: "#f9a825", statuses.FAIL: "#c62828",
           statuses.ERROR: "#6a1b9a", statuses.XFAIL: "#8d6e63", statuses.XPASS: "#ef6c00",
           statuses.SKIP: "#9e9e9e", statuses.UNTESTED: "#546e7a"}


def totals(results: list[dict[str, Any]]) -> dict[str, int]:
    counted = Counter(r["status"] for r in results)
    return {status: counted.get(status, 0) for status in statuses.SEVERITY}


def coverage(results: list[dict[str, Any]], overloads: list[dict[str, Any]]) -> dict[str, float]:
    tested = [r for r in results if r["status"] not in (statuses.SKIP, statuses.UNTESTED)]
    native = [r for r in tested if r["status"] in (statuses.PASS, statuses.XPASS)]
    correct = [r for r in tested if r["status"] in (statuses.PASS, statuses.FALLBACK, statuses.XPASS)]
    registered = [o for o in overloads if o["dispatch"] == "native"]
    exercised = [o for o in registered if o["exercised"]]
    share = (lambda part, whole: round(100.0 * len(part) / len(whole), 1) if whole else 0.0)
    return {"native_pass_pct": share(native, tested), "correct_pct": share(correct, tested),
            "registered_exercised_pct": share(exercised, registered)}


def build(meta: dict[str, Any], results: list[dict[str, Any]], overloads: list[dict[str, Any]],
          fallbacks: dict[str, int]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, **meta, "totals": totals(results),
            "coverage": coverage(results, overloads), "results": results, "overloads": overloads,
            "fallbacks": dict(sorted(fallbacks.items(), key=lambda item: -item[1]))}


def diff(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Cells whose status changed against a baseline report: regressions and new passes."""
    before = {(r["op"], r["variant"], r["dtype"]): r["status"] for r in baseline.get("results", [])}
    rank = statuses.SEVERITY.index
    regressions, improvements = [], []
    for r in current["results"]:
        key = (r["op"], r["variant"], r["dtype"])
        if key not in before or before[key] == r["status"]:
            continue
        change = {"op": r["op"], "dtype": r["dtype"], "before": before[key], "after": r["status"]}
        (regressions if rank(r["status"]) < rank(before[key]) else improvements).append(change)
    return {"regressions": regressions, "improvements": improvements}


def render(report: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(json.dumps(report, indent=1))
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape(["html"]))
    dtypes = sorted({r["dtype"] for r in report["results"]})
    grid: dict[str, dict[str, dict[str, Any]]] = {}
    for r in report["results"]:
        grid.setdefault(r["op"], {})[r["dtype"]] = r
    context = {"report": report, "dtypes": dtypes, "grid": grid, "colours": COLOURS,
               "statuses": statuses.SEVERITY, "report_json": json.dumps(report)}
    (out_dir / "report.md").write_text(environment.get_template("report.md.j2").render(**context))
    (out_dir / "index.html").write_text(environment.get_template("index.html.j2").render(**context))
