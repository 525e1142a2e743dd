"""Per-cell conformance reports (conformance/report.py's report.json) -> one dashboard with cells as columns.

Reports are `report.json` files (a CI artifact) or `<cell id>.report.json[.gz]` files (docs/data/cells/,
the committed full runs, with their origin in that folder's sources.yaml). A report is named after its
cell: NAME=PATH on the command line, else the `id` in the cell.json the CI job writes next to it, else its
file name (`<cell id>.report.json.gz`), else its folder (`conformance-<cell id>` as the artifact was named),
else its adapter. When two reports claim one cell, the fuller profile wins (full over custom over quick).
The site holds index.html (coverage per cell, what differs between cells, op x cell grid), matrix.html
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
import yaml

from conformance import SCHEMA_VERSION, statuses
from conformance import report as conformance_report
from matrix.model import Matrix

TEMPLATES = Path(__file__).parent / "templates" / "dashboard"
ARTIFACT_PREFIX = "conformance-"
CELL_REPORT_SUFFIXES = (".report.json", ".report.json.gz")  # <cell id><suffix>, as in docs/data/cells/
SOURCES = "sources.yaml"  # next to the cell reports: where each came from (commit, date, machine, command)
# Which of two reports of one cell to show: the one that tested more.
PROFILE_RANK = {"full": 0, "custom": 1, "quick": 2}
RIGHT = (statuses.PASS, statuses.FALLBACK, statuses.XPASS)
WRONG = (statuses.FAIL, statuses.ERROR, statuses.XFAIL)
# What kind of difference a row of `differences` is, most useful first.
RIGHT_AND_WRONG, NATIVE_AND_FALLBACK, OTHER = "right on one, wrong on another", "native on one", "other"


@dataclass
class CellReport:
    name: str
    report: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)  # cell.json: os, python, torch, adapter, hardware
    source: str = ""
    origin: dict[str, Any] = field(default_factory=dict)  # its sources.yaml entry: commit, date, command

    @property
    def adapter(self) -> str:
        return str(self.report["backend"].get("adapter", {}).get("name", "?"))


def _report_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        found = [*path.rglob("report.json"), *(f for s in CELL_REPORT_SUFFIXES for f in path.rglob(f"*{s}"))]
        return sorted(found)
    raise FileNotFoundError(f"{path}: no such report or folder")


def _cell_id_of_file(path: Path) -> str:
    """`<cell id>.report.json[.gz]` -> the cell id; "" for any other name."""
    suffix = next((s for s in CELL_REPORT_SUFFIXES if path.name.endswith(s)), "")
    return path.name.removesuffix(suffix) if suffix else ""


def _default_name(path: Path, report: dict[str, Any], record: dict[str, Any]) -> str:
    if record.get("id"):
        return str(record["id"])
    if _cell_id_of_file(path):
        return _cell_id_of_file(path)
    folder = path.parent.name
    if folder.startswith(ARTIFACT_PREFIX):
        return folder.removeprefix(ARTIFACT_PREFIX)
    backend = report["backend"]
    features = backend.get("env", {}).get("TORCH_DML_DISABLE_FEATURES")
    name = f"{backend.get('adapter_class', 'other')}-torch{backend.get('torch', '?').split('+')[0]}"
    return f"{name}-no-{features}" if features else name


def read_sources(folder: Path) -> dict[str, dict[str, Any]]:
    """folder/sources.yaml: cell id -> where its committed report came from ({} when there is none)."""
    path = folder / SOURCES
    return dict(yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def load_one(path: Path, name: str = "") -> CellReport:
    report = conformance_report.read(path)
    if report.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(
            f"{path}: report schema {report.get('schema_version')!r}, this merge tool reads "
            f"{SCHEMA_VERSION}; regenerate it with the current `python -m conformance run`"
        )
    record_file = path.parent / "cell.json"
    record = json.loads(record_file.read_text()) if record_file.exists() else {}
    origin = read_sources(path.parent).get(_cell_id_of_file(path), {})
    return CellReport(name or _default_name(path, report, record), report, record, str(path), origin)


def _fullest(claims: list[CellReport]) -> CellReport:
    """Of the reports claiming one cell, the one of the fullest profile; two of that profile are ambiguous."""
    ranked = sorted(claims, key=lambda c: PROFILE_RANK.get(c.report.get("profile", ""), len(PROFILE_RANK)))
    best = ranked[0]
    if len(ranked) > 1 and ranked[1].report.get("profile") == best.report.get("profile"):
        raise ValueError(
            f"two reports claim cell {best.name} with the same profile ({best.report.get('profile')}): "
            "name them with NAME=PATH"
        )
    for dropped in ranked[1:]:
        print(
            f"merge: cell {best.name}: showing the {best.report.get('profile')} report {best.source}, "
            f"not the {dropped.report.get('profile')} one {dropped.source}"
        )
    return best


def collect(arguments: list[str]) -> list[CellReport]:
    """Reports from NAME=PATH / PATH arguments (files or folders searched for report.json and
    <cell id>.report.json[.gz]), one per cell."""
    cells: list[CellReport] = []
    for argument in arguments:
        name, _, path = argument.rpartition("=") if "=" in argument else ("", "", argument)
        files = _report_files(Path(path))
        if name and len(files) != 1:
            raise ValueError(f"{argument}: a named report must be one file, found {len(files)}")
        cells.extend(load_one(f, name) for f in files)
    by_name: dict[str, list[CellReport]] = {}
    for cell in cells:
        by_name.setdefault(cell.name, []).append(cell)
    return [_fullest(claims) for claims in by_name.values()]


def op_key(row: dict[str, Any]) -> str:
    return row["op"] if row.get("variant", "forward") == "forward" else f"{row['op']} ({row['variant']})"


def grid(cells: list[CellReport]) -> dict[str, dict[str, dict[str, Any]]]:
    """op -> cell -> {status: worst over dtypes, counts: status -> dtypes, dtypes: dtype -> status}."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for cell in cells:
        for row in cell.report["results"]:
            entry = table.setdefault(op_key(row), {}).setdefault(cell.name, {"dtypes": {}, "counts": {}})
            entry["dtypes"][row["dtype"]] = row["status"]
    for per_cell in table.values():
        for entry in per_cell.values():
            found = list(entry["dtypes"].values())
            entry["status"] = statuses.worst(found)
            entry["counts"] = {s: found.count(s) for s in statuses.SEVERITY if s in found}
    return dict(sorted(table.items()))


def difference_kind(found: list[str]) -> str:
    """Right in one cell and wrong in another (the line worth reading first), native in one cell and
    only through the fallback in another, or anything else (skipped, not run, untested)."""
    if any(s in RIGHT for s in found) and any(s in WRONG for s in found):
        return RIGHT_AND_WRONG
    if statuses.FALLBACK in found and any(s in (statuses.PASS, statuses.XPASS) for s in found):
        return NATIVE_AND_FALLBACK
    return OTHER


def differences(cells: list[CellReport]) -> list[dict[str, Any]]:
    """(op, variant, dtype) cases whose status differs between cells (absent from a cell counts as
    differing), each with its kind and the message of every cell where it went wrong."""
    by_key: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
    for cell in cells:
        for row in cell.report["results"]:
            key = (row["op"], row.get("variant", "forward"), row["dtype"])
            by_key.setdefault(key, {})[cell.name] = row
    names = [c.name for c in cells]
    kinds = [RIGHT_AND_WRONG, NATIVE_AND_FALLBACK, OTHER]
    rows = []
    for (op, variant, dtype), seen in sorted(by_key.items()):
        per_cell = {name: seen[name]["status"] if name in seen else "" for name in names}
        if len(set(per_cell.values())) > 1:
            found = [s for s in per_cell.values() if s]
            messages = {n: seen[n].get("message", "") for n in names if per_cell[n] in WRONG}
            kind = difference_kind(found) if len(found) > 1 else OTHER
            rows.append(
                {
                    "op": op,
                    "variant": variant,
                    "dtype": dtype,
                    "statuses": per_cell,
                    "kind": kind,
                    "messages": messages,
                }
            )
    # The most useful kind first, then worst status first: an error where another cell passes matters
    # more than a skip.
    return sorted(
        rows,
        key=lambda r: (
            kinds.index(r["kind"]),
            min(statuses.SEVERITY.index(s) for s in r["statuses"].values() if s),
        ),
    )


def differences_by_kind(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {k: [] for k in (RIGHT_AND_WRONG, NATIVE_AND_FALLBACK, OTHER)}
    for row in rows:
        grouped[row["kind"]].append(row)
    return grouped


def commit(cell: CellReport) -> str:
    """The commit the cell's numbers come from: its sources.yaml entry, else what the run recorded."""
    return str(cell.origin.get("commit") or cell.report.get("suite", {}).get("commit") or "")


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
        "partial": cell.report.get("partial"),  # an unfinished run (conformance/partial.py), else None
        "max_samples": cell.report.get("suite", {}).get("max_samples", ""),
        "commit": commit(cell),
        "generated": cell.report.get("generated", ""),
        "wall_time_s": cell.report.get("wall_time_s", ""),
        "command": cell.origin.get("command", ""),
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
                "run_by": cell.run_by,
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


def fill_records(matrix: Matrix, cells: list[CellReport]) -> None:
    """A report with no cell.json (a committed one) takes its cell's python and os from matrix.yaml."""
    known = {c.id: c for c in matrix.cells}
    for cell in cells:
        if cell.name in known:
            cell.record = {"python": known[cell.name].python, "os": known[cell.name].os, **cell.record}


def merged(matrix: Matrix, cells: list[CellReport]) -> dict[str, Any]:
    fill_records(matrix, cells)
    return {
        "schema_version": SCHEMA_VERSION,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cells": [summary(c) for c in cells],
        "grid": grid(cells),
        "differences": differences_by_kind(differences(cells)),
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
        "kinds": {"right_and_wrong": RIGHT_AND_WRONG, "native": NATIVE_AND_FALLBACK, "other": OTHER},
    }
    (out / "index.html").write_text(environment.get_template("index.html.j2").render(**context))
    (out / "matrix.html").write_text(environment.get_template("matrix.html.j2").render(**context))
    return out / "index.html"
