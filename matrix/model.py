"""matrix.yaml as typed data, and the rules a valid matrix keeps (coverage of every axis value)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
MATRIX_FILE = HERE / "matrix.yaml"
ROOT = HERE.parent

# Which matrix.yaml key each axis is read from on a cell.
AXES = ("python", "torch", "os", "adapter")
# Who runs a cell (its `run_by`): a job of .github/workflows/ci.yml, or a person on a lent machine with
# `bash .ci/gpu-check all`, whose report is committed under docs/data/cells/ (no runner of ours exists).
RUN_BY_WORKFLOW, RUN_BY_GPU_CHECK = "workflow", "gpu-check"


@dataclass(frozen=True)
class Cell:
    id: str
    os: str
    python: str
    torch: str
    adapter: str
    hardware: str
    webgpu: str
    adapters: str
    why: str
    runner: str | list[str] = ""  # empty for a gpu-check cell
    hosted: bool = False
    run_by: str = RUN_BY_WORKFLOW
    python_arch: str = ""  # setup-python's architecture; empty: the runner's own

    @property
    def labels(self) -> list[str]:
        if not self.runner:
            return []
        return [self.runner] if isinstance(self.runner, str) else list(self.runner)

    @property
    def in_workflow(self) -> bool:
        return self.run_by == RUN_BY_WORKFLOW

    @property
    def artifact(self) -> str:
        """The name its conformance report is uploaded under (unique per cell, as upload-artifact needs)."""
        return f"conformance-{self.id}"


@dataclass(frozen=True)
class WheelTarget:
    platform: str
    runner: str
    archs: str


@dataclass(frozen=True)
class Matrix:
    axes: dict[str, list[str]]
    default_torch: str
    torch_releases: dict[str, str]
    wgpu: str
    wgpu_native: str
    retired: list[dict[str, Any]]
    adapters: dict[str, dict[str, Any]]
    cells: list[Cell]
    wheels: list[WheelTarget] = field(default_factory=list)

    @property
    def hosted(self) -> list[Cell]:
        return [c for c in self.cells if c.in_workflow and c.hosted]

    @property
    def self_hosted(self) -> list[Cell]:
        return [c for c in self.cells if c.in_workflow and not c.hosted]

    @property
    def by_gpu_check(self) -> list[Cell]:
        """Cells no workflow runs: their reports are committed by hand (docs/data/cells/)."""
        return [c for c in self.cells if c.run_by == RUN_BY_GPU_CHECK]

    def cell(self, cell_id: str) -> Cell:
        for c in self.cells:
            if c.id == cell_id:
                return c
        raise KeyError(f"no cell {cell_id!r} in matrix.yaml (cells: {', '.join(c.id for c in self.cells)})")

    def adapter_for_report_class(self, report_class: str) -> str:
        for name, info in self.adapters.items():
            if report_class in info.get("report_classes", []):
                return name
        return report_class


def parse(data: dict[str, Any]) -> Matrix:
    cells = [
        Cell(**{k: (str(v) if k in ("python", "torch") else v) for k, v in raw.items()})
        for raw in data["cells"]
    ]
    return Matrix(
        axes={axis: [str(v) for v in values] for axis, values in data["axes"].items()},
        default_torch=str(data["default_torch"]),
        torch_releases={str(k): str(v) for k, v in data["torch_releases"].items()},
        wgpu=str(data["wgpu"]),
        wgpu_native=str(data["wgpu_native"]),
        retired=list(data.get("retired", [])),
        adapters=dict(data["adapters"]),
        cells=cells,
        wheels=[WheelTarget(**w) for w in data.get("wheels", [])],
    )


def load(path: Path = MATRIX_FILE) -> Matrix:
    return parse(yaml.safe_load(path.read_text()))


def problems(matrix: Matrix) -> list[str]:
    """Everything that makes the matrix invalid, worded for the person editing matrix.yaml."""
    found: list[str] = []
    ids = [c.id for c in matrix.cells]
    found += [f"cell id {i!r} appears more than once" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for axis in AXES:
        allowed = matrix.axes[axis]
        used = {getattr(c, axis) for c in matrix.cells}
        found += [f"{axis} {v} has no cell: add one, or drop it from axes" for v in allowed if v not in used]
        found += [
            f"cell {c.id}: {axis} {getattr(c, axis)!r} is not in axes.{axis}"
            for c in matrix.cells
            if getattr(c, axis) not in allowed
        ]
    for c in matrix.cells:
        if len(c.why.split()) < 5:
            found.append(f"cell {c.id}: `why` must say why the cell exists (a sentence, not {c.why!r})")
        if c.run_by == RUN_BY_GPU_CHECK:
            if c.runner or c.hosted:
                found.append(
                    f"cell {c.id}: run_by {RUN_BY_GPU_CHECK} has no CI runner; drop `runner` and `hosted`"
                )
        elif c.run_by != RUN_BY_WORKFLOW:
            found.append(
                f"cell {c.id}: run_by {c.run_by!r} is neither {RUN_BY_WORKFLOW} nor {RUN_BY_GPU_CHECK}"
            )
        elif not c.runner:
            found.append(f"cell {c.id}: a workflow cell needs a `runner`")
        elif not c.hosted and "self-hosted" not in c.labels:
            found.append(f"cell {c.id}: a non-hosted cell's runner labels must include self-hosted")
        elif c.hosted and "self-hosted" in c.labels:
            found.append(f"cell {c.id}: hosted cell with self-hosted labels")
        if c.adapter not in matrix.adapters:
            found.append(f"cell {c.id}: adapter {c.adapter!r} is not described under adapters")
    for torch_minor in matrix.axes["torch"]:
        release = matrix.torch_releases.get(torch_minor, "")
        if not release.startswith(torch_minor + "."):
            found.append(f"torch {torch_minor} has no matching exact release in torch_releases")
    if matrix.default_torch not in matrix.axes["torch"]:
        found.append(f"default_torch {matrix.default_torch} is not in axes.torch")
    for entry in matrix.retired:
        if not str(entry.get("why", "")).strip():
            found.append(f"retired {entry.get('python')}: says no reason")
        found += [
            f"python {v} is both retired and in axes.python: drop one"
            for v in map(str, entry.get("python", []))
            if v in matrix.axes["python"]
        ]
    return found
