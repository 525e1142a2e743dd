"""Per-cell conformance reports (conformance/report.py's report.json) -> one dashboard with cells as columns.

A report is named after its cell: NAME=PATH on the command line, else the `id` in the cell.json the CI job
writes next to it, else its folder (`conformance-<cell id>` as the artifact was named), else its adapter.
The site holds index.html (coverage per cell, op x cell grid, what differs between cells), matrix.html
(every matrix.yaml cell and whether it reported), merged.json (the data both are rendered from) and
cells/<name>/ (each cell's own report, rendered by conformance/report.py).
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from conformance import SCHEMA_VERSION, statuses
from conformance import report as conformance_report
from matrix.model import Matrix

TEMPLATES = Path(__file__).parent / "templates" / "dashboard"
ARTIFACT_PREFIX = "conformance-"


@dataclass
class CellReport:
    name: str
    report: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)  # cell.json: os, python, torch, adapter, hardware
    source: str = ""

    @property
    def adapter(self) -> str:
        return str(self.report["backend"].get("adapter", {}).get("name", "?"))


def _report_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(path.rglob("report.json"))
    raise FileNotFoundError(f"{path}: no such report or folder")


def _default_name(path: Path, report: dict[str, Any], record: dict[str, Any]) -> str:
    if record.get("id"):
        return str(record["id"])
    folder = path.parent.name
    if folder.startswith(ARTIFACT_PREFIX):
        return folder.removeprefix(ARTIFACT_PREFIX)
    backend = report["backend"]
    features = backend.get("env", {}).get("TORCH_DML_DISABLE_FEATURES")
    name = f"{backend.get('adapter_class', 'other')}-torch{backend.get('torch', '?').split('+')[0]}"
    return f"{name}-no-{features}" if features else name


def load_one(path: Path, name: str = "") -> CellReport:
    report = json.loads(path.read_text())
    if report.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(
            f"{path}: report schema {report.get('schema_version')!r}, this merge tool reads "
            f"{SCHEMA_VERSION}; regenerate it with the current `python -m conformance run`"
        )
    record_file = path.parent / "cell.json"
    record = json.loads(record_file.read_text()) if record_file.exists() else {}
    return CellReport(name or _default_name(path, report, record), report, record, str(path))


def collect(arguments: list[str]) -> list[CellReport]:
    """Reports from NAME=PATH / PATH arguments (files or folders searched for report.json)."""
    cells: list[CellReport] = []
    for argument in arguments:
        name, _, path = argument.rpartition("=") if "=" in argument else ("", "", argument)
        files = _report_files(Path(path))
        if name and len(files) != 1:
            raise ValueError(f"{argument}: a named report must be one file, found {len(files)}")
        cells.extend(load_one(f, name) for f in files)
    names = [c.name for c in cells]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two reports claim cell(s) {', '.join(duplicates)}: name them with NAME=PATH")
    return cells


def _op_key(row: dict[str, Any]) -> str:
    return row["op"] if row.get("variant", "forward") == "forward" else f"{row['op']} ({row['variant']})"


def grid(cells: list[CellReport]) -> dict[str, dict[str, dict[str, Any]]]:
    """op -> cell -> {status: worst over dtypes, counts: status -> dtypes, dtypes: dtype -> status}."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for cell in cells:
        for row in cell.report["results"]:
            entry = table.setdefault(_op_key(row), {}).setdefault(cell.name, {"dtypes": {}, "counts": {}})
            entry["dtypes"][row["dtype"]] = row["status"]
    for per_cell in table.values():
        for entry in per_cell.values():
            found = list(entry["dtypes"].values())
            entry["status"] = statuses.worst(found)
            entry["counts"] = {s: found.count(s) for s in statuses.SEVERITY if s in found}
    return dict(sorted(table.items()))


def differences(cells: list[CellReport]) -> list[dict[str, Any]]:
    """(op, dtype) pairs whose status differs between cells (absent from a cell counts as differing)."""
    by_key: dict[tuple[str, str], dict[str, str]] = {}
    for cell in cells:
        for row in cell.report["results"]:
            by_key.setdefault((_op_key(row), row["dtype"]), {})[cell.name] = row["status"]
    names = [c.name for c in cells]
    rows = []
    for (op, dtype), seen in sorted(by_key.items()):
        per_cell = {name: seen.get(name, "") for name in names}
        if len(set(per_cell.values())) > 1:
            rows.append({"op": op, "dtype": dtype, "statuses": per_cell})
    # Worst first: a cell that errors where another passes matters more than a skip.
    return sorted(rows, key=lambda r: min(statuses.SEVERITY.index(s) for s in r["statuses"].values() if s))


def summary(cell: CellReport) -> dict[str, Any]:
    backend = cell.report["backend"]
    return {
        "name": cell.name,
        "adapter": cell.adapter,
        "adapter_class": backend.get("adapter_class", "other"),
        "webgpu": backend.get("adapter", {}).get("backend", cell.record.get("webgpu", "")),
        "torch": backend.get("torch", ""),
        "python": cell.record.get("python", ""),
        "os": cell.record.get("os", ""),
        "profile": cell.report.get("profile", ""),
        "generated": cell.report.get("generated", ""),
        "env": backend.get("env", {}),
        "totals": cell.report["totals"],
        "coverage": cell.report["coverage"],
        "fallback_ops": len(cell.report.get("fallbacks", {})),
        "source": cell.source,
    }


def matrix_status(matrix: Matrix, cells: list[CellReport]) -> dict[str, Any]:
    """Every matrix cell with its report (or none), and reports that belong to no matrix cell."""
    by_name = {c.name: c for c in cells}
    rows = []
    for cell in matrix.cells:
        reported = by_name.get(cell.id)
        rows.append(
            {
                "id": cell.id,
                "os": cell.os,
                "python": cell.python,
                "torch": cell.torch,
                "adapter": cell.adapter,
                "hardware": cell.hardware,
                "webgpu": cell.webgpu,
                "runner": cell.labels,
                "hosted": cell.hosted,
                "why": cell.why,
                "report": summary(reported) if reported else None,
            }
        )
    known = {c.id for c in matrix.cells}
    extra = [summary(c) for c in cells if c.name not in known]
    return {
        "cells": rows,
        "extra": extra,
        "reported": sum(1 for r in rows if r["report"]),
        "retired": matrix.retired,
    }


def merged(matrix: Matrix, cells: list[CellReport]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cells": [summary(c) for c in cells],
        "grid": grid(cells),
        "differences": differences(cells),
        "matrix": matrix_status(matrix, cells),
    }


def build_site(matrix: Matrix, cells: list[CellReport], out: Path) -> Path:
    if not cells:
        raise ValueError("no conformance reports to merge")
    out.mkdir(parents=True, exist_ok=True)
    data = merged(matrix, cells)
    (out / "merged.json").write_text(json.dumps(data, indent=1))
    for cell in cells:
        conformance_report.render(cell.report, out / "cells" / cell.name)
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )
    context = {
        "data": data,
        "colours": conformance_report.COLOURS,
        "statuses": statuses.SEVERITY,
        "names": [c.name for c in cells],
    }
    (out / "index.html").write_text(environment.get_template("index.html.j2").render(**context))
    (out / "matrix.html").write_text(environment.get_template("matrix.html.j2").render(**context))
    return out / "index.html"
