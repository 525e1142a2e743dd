"""The report: versioned JSON (the data, schema/report.schema.json) and Markdown / HTML rendered from it
with jinja2, never from live objects."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2

from conformance import SCHEMA_VERSION, statuses

TEMPLATES = Path(__file__).parent / "templates"
SCHEMA = Path(__file__).parent / "schema" / "report.schema.json"
COLOURS = {statuses.PASS: "#2e7d32", statuses.FALLBACK: "#f9a825", statuses.FAIL: "#c62828",
           statuses.ERROR: "#6a1b9a", statuses.XFAIL: "#8d6e63", statuses.XPASS: "#ef6c00",
           statuses.SKIP: "#9e9e9e", statuses.UNTESTED: "#546e7a"}
# Cell labels in the grid: FALLBACK cut to four letters would read like FAIL.
SHORT = {statuses.FALLBACK: "CPU", statuses.ERROR: "ERR", statuses.XFAIL: "xfail", statuses.XPASS: "XPASS",
         statuses.UNTESTED: "-"}
DISPATCH_KINDS = ["native", "composite", "fallback", "missing"]
# For the diff: better to worse. SKIP and UNTESTED are not ranked: a change to or from them is "changed".
RANKED = [statuses.PASS, statuses.XPASS, statuses.FALLBACK, statuses.XFAIL, statuses.FAIL, statuses.ERROR]


def read(path: Path) -> dict[str, Any]:
    """A report.json, or one gzipped (`*.json.gz`: a full run is several MB as plain JSON, ~300 kB gzipped)."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.name.endswith(".gz") else raw)


def totals(results: list[dict[str, Any]]) -> dict[str, int]:
    counted = Counter(r["status"] for r in results)
    return {status: counted.get(status, 0) for status in statuses.SEVERITY}


def _share(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def coverage(results: list[dict[str, Any]], overloads: list[dict[str, Any]]) -> dict[str, Any]:
    tested = [r for r in results if r["status"] not in (statuses.SKIP, statuses.UNTESTED)]
    native = [r for r in tested if r["status"] in (statuses.PASS, statuses.XPASS)]
    correct = [r for r in tested if r["status"] in (statuses.PASS, statuses.FALLBACK, statuses.XPASS)]
    registered = [o for o in overloads if o["dispatch"] == "native"]
    exercised = [o for o in registered if o["exercised"]]
    ops = {r["op"] for r in tested}
    ops_native = {r["op"] for r in native}
    by_variant = {}
    for variant in sorted({r["variant"] for r in tested}):
        rows = [r for r in tested if r["variant"] == variant]
        by_variant[variant] = _share(sum(r["status"] in (statuses.PASS, statuses.XPASS) for r in rows), len(rows))
    return {"native_pass_pct": _share(len(native), len(tested)), "correct_pct": _share(len(correct), len(tested)),
            "registered_exercised_pct": _share(len(exercised), len(registered)),
            "tested_cases": len(tested), "ops_tested": len(ops), "ops_with_native_pass": len(ops_native),
            "native_pass_pct_by_variant": by_variant}


def overload_table(results: list[dict[str, Any]], registered: list[str], kind_of: Any) -> list[dict[str, Any]]:
    """Every registered or exercised aten overload: how the dispatcher serves it (kind_of(name) -> native /
    composite / fallback / missing), how many tested cases reached it and how many of those passed."""
    reached: dict[str, list[str]] = {}
    for r in results:
        if r["status"] in (statuses.SKIP, statuses.UNTESTED):
            continue
        # The dispatch mode sees the overloads a sample called; the fallback counters add those reached
        # below it (cumsum -> cumsum.out, which fell back to the CPU).
        fell_back = [name.removeprefix("aten::") for name in r.get("fallbacks", {})]
        for name in dict.fromkeys([*r.get("overloads", []), *fell_back]):
            reached.setdefault(name, []).append(r["status"])
    names = {n.removeprefix("aten::") for n in registered} | set(reached)
    table = []
    for name in sorted(names):
        found = reached.get(name, [])
        table.append({"name": name, "dispatch": kind_of(name), "exercised": bool(found),
                      "registered": f"aten::{name}" in registered, "cases": len(found),
                      "passing": sum(s in (statuses.PASS, statuses.XPASS) for s in found)})
    return table


def build(meta: dict[str, Any], results: list[dict[str, Any]], overloads: list[dict[str, Any]],
          fallbacks: dict[str, int]) -> dict[str, Any]:
    families = sorted({r.get("family", "") for r in results if r.get("family")})
    return {"schema_version": SCHEMA_VERSION, **meta, "totals": totals(results),
            "coverage": coverage(results, overloads), "families": families, "results": results,
            "overloads": overloads, "fallbacks": dict(sorted(fallbacks.items(), key=lambda item: -item[1]))}


def diff(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Cases whose status changed against a baseline report: regressions, new passes (improvements), other
    changes (to or from SKIP/UNTESTED), and cases only one of the two reports has."""
    before = {(r["op"], r.get("variant", "forward"), r["dtype"]): r["status"] for r in baseline.get("results", [])}
    now = {(r["op"], r.get("variant", "forward"), r["dtype"]): r["status"] for r in current["results"]}
    found: dict[str, list[dict[str, str]]] = {"regressions": [], "improvements": [], "changed": [], "new": [],
                                              "gone": []}
    for key, status in sorted(now.items()):
        op, variant, dtype = key
        if key not in before:
            found["new"].append({"op": op, "variant": variant, "dtype": dtype, "before": "", "after": status})
            continue
        if before[key] == status:
            continue
        change = {"op": op, "variant": variant, "dtype": dtype, "before": before[key], "after": status}
        if status in RANKED and before[key] in RANKED:
            worse = RANKED.index(status) > RANKED.index(before[key])
            found["regressions" if worse else "improvements"].append(change)
        else:
            found["changed"].append(change)
    for key in sorted(set(before) - set(now)):
        op, variant, dtype = key
        found["gone"].append({"op": op, "variant": variant, "dtype": dtype, "before": before[key], "after": ""})
    return found


def grid(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the op x dtype grid: one per (op, variant), its cells by dtype."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        if r["dtype"] == "-":
            continue
        row = rows.setdefault((r["op"], r["variant"]), {"op": r["op"], "variant": r["variant"],
                                                         "family": r.get("family", ""), "cells": {}})
        row["cells"][r["dtype"]] = r
    return [rows[key] for key in sorted(rows)]


def details(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per op, its cases that neither passed nor were skipped (errors, max abs/rel error, samples)."""
    by_op: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r["status"] not in (statuses.PASS, statuses.SKIP, statuses.UNTESTED):
            by_op.setdefault(r["op"], []).append(r)
    return [{"op": op, "cases": sorted(rows, key=lambda r: (r["variant"], r["dtype"]))}
            for op, rows in sorted(by_op.items())]


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}"


def _write(path: Path, text: str) -> None:
    """Whole or not at all: the report is rewritten while a run goes on, and a reader (or a kill) in the
    middle of a write must not meet half a file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def render(report: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(out_dir / "report.json", json.dumps(report, indent=1))
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                                     autoescape=jinja2.select_autoescape(["html", "html.j2"]))
    environment.filters["number"] = _number
    results = report["results"]
    context = {"report": report, "dtypes": sorted({r["dtype"] for r in results if r["dtype"] != "-"}),
               "grid": grid(results), "details": details(results), "colours": COLOURS, "short": SHORT,
               "statuses": statuses.SEVERITY, "dispatch_kinds": DISPATCH_KINDS,
               "families": report.get("families") or sorted({r.get("family", "") for r in results} - {""}),
               "variants": sorted({r["variant"] for r in results if r["dtype"] != "-"}),
               "untested": [r for r in results if r["status"] == statuses.UNTESTED],
               "overload_counts": Counter((o["dispatch"], o["exercised"]) for o in report.get("overloads", []))}
    _write(out_dir / "report.md", environment.get_template("report.md.j2").render(**context))
    _write(out_dir / "index.html", environment.get_template("index.html.j2").render(**context))
