"""`python -m matrix publish CELL REPORT`: commit one cell's conformance report to docs/data/cells/.

The folder holds one full run per real cell, `<cell id>.report.json.gz`, which the docs' pages and the
published dashboard read, and sources.yaml, which says where each came from (commit, date, machine,
command). A cell no workflow runs (`run_by: gpu-check`, a lent GPU) has no other way onto the dashboard.
The report is checked against its cell first: a report of another adapter class or torch minor, or a quick
run, would put wrong marks on the pages.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import yaml

from conformance import SCHEMA_VERSION
from conformance import report as conformance_report
from matrix.merge import SOURCES, read_sources
from matrix.model import ROOT, Matrix

CELLS = ROOT / "docs" / "data" / "cells"
SOURCES_HEADER = (
    "# Where each <cell id>.report.json.gz here came from; written by `python -m matrix publish`\n"
    "# (see README.md). matrix/merge.py reads it: the dashboard and the docs print each cell's commit.\n"
)


def problems(matrix: Matrix, cell_id: str, report: dict[str, Any]) -> list[str]:
    """Why this report cannot stand for this cell (empty when it can)."""
    ids = [c.id for c in matrix.cells]
    if cell_id not in ids:
        return [f"no cell {cell_id!r} in matrix.yaml (cells: {', '.join(ids)})"]
    cell = matrix.cell(cell_id)
    backend = report.get("backend", {})
    found = []
    if report.get("schema_version") != SCHEMA_VERSION:
        found.append(f"report schema {report.get('schema_version')!r}, not {SCHEMA_VERSION}")
    adapter = matrix.adapter_for_report_class(backend.get("adapter_class", "other"))
    if adapter != cell.adapter:
        found.append(
            f"the report ran on a {adapter} adapter ({backend.get('adapter', {}).get('name')}), "
            f"the cell is {cell.adapter}"
        )
    torch_minor = ".".join(str(backend.get("torch", "")).split("+")[0].split(".")[:2])
    if torch_minor != cell.torch:
        found.append(f"the report ran torch {backend.get('torch')}, the cell is torch {cell.torch}")
    if report.get("profile") == "quick":
        found.append("a quick-profile report: this folder holds full runs (`python -m conformance run`)")
    partial = report.get("partial")
    if partial:
        found.append(
            f"a partial report ({partial.get('tests_run')} of {partial.get('tests_total')} tests run: "
            f"{partial.get('reason')}): this folder holds finished runs"
        )
    return found


def publish(
    matrix: Matrix, cell_id: str, path: Path, commit: str, command: str, machine: str, folder: Path = CELLS
) -> Path:
    report = conformance_report.read(path)
    found = problems(matrix, cell_id, report)
    if found:
        raise ValueError(f"{path} cannot be {cell_id}'s report:\n  " + "\n  ".join(found))
    commit = commit or str(report.get("suite", {}).get("commit", ""))
    if not commit:
        raise ValueError(f"{path} records no commit: pass --commit (the commit the run was built from)")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{cell_id}.report.json.gz"
    raw = path.read_bytes()
    # A gzipped report is kept byte for byte (its checksum matches the run's); mtime 0 keeps a
    # re-published plain report byte-identical too.
    target.write_bytes(raw if path.name.endswith(".gz") else gzip.compress(raw, mtime=0))
    backend = report["backend"]
    adapter = backend.get("adapter", {})
    sources = read_sources(folder)
    sources[cell_id] = {
        "commit": commit,
        "date": str(report.get("generated", ""))[:10],
        "profile": report.get("profile", ""),
        "machine": machine
        or f"{adapter.get('name')} ({adapter.get('driver', '?')}), torch {backend.get('torch')}",
        "command": command,
    }
    text = yaml.safe_dump(dict(sorted(sources.items())), sort_keys=False, width=1000, allow_unicode=True)
    (folder / SOURCES).write_text(SOURCES_HEADER + text)
    return target
