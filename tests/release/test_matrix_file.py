"""matrix/matrix.yaml: every axis value covered, every cell explained, the RFC's hardware present, and the
versions it names agreeing with tox.ini and setup.py."""

from __future__ import annotations

import configparser
import dataclasses
import re
from pathlib import Path

import pytest

from matrix import model

ROOT = Path(__file__).resolve().parents[2]
# The RFC's hardware: (words of the name, the runner label that must select it).
RFC_HARDWARE = [
    ("Intel UHD 630", "intel-uhd630"),
    ("AMD RX 5700 XT", "amd-rx5700xt"),
    ("AMD RX 580", "amd-rx580"),
    ("AMD RX 6900 XT", "amd-rx6900xt"),
    ("NVIDIA GTX 1070", "nvidia-gtx1070"),
    ("NVIDIA RTX 3070", "nvidia-rtx3070"),
    ("NVIDIA RTX 2080 SUPER", "nvidia-rtx2080super"),
    ("Qualcomm Adreno 680", "qualcomm-adreno680"),
]


@pytest.fixture(scope="module")
def matrix() -> model.Matrix:
    return model.load()


def test_the_shipped_matrix_is_valid(matrix: model.Matrix) -> None:
    assert model.problems(matrix) == []


def test_axes_are_the_supported_ranges(matrix: model.Matrix) -> None:
    assert matrix.axes["python"] == ["3.10", "3.11", "3.12", "3.13", "3.14"]
    assert matrix.axes["torch"] == ["2.11", "2.12", "2.13", "2.14"]
    assert set(matrix.axes["os"]) == {"linux", "windows", "macos", "wsl"}
    assert set(matrix.axes["adapter"]) == {"software", "nvidia", "amd", "intel", "apple", "qualcomm"}


def test_every_rfc_gpu_has_a_self_hosted_cell_labelled_for_it(matrix: model.Matrix) -> None:
    for name, label in RFC_HARDWARE:
        cells = [c for c in matrix.cells if label in c.labels]
        assert cells, f"no cell's runner labels include {label} (the RFC's {name})"
        for cell in cells:
            assert not cell.hosted and "self-hosted" in cell.labels
            words = set(cell.hardware.lower().replace("radeon", "").replace("geforce", "").split())
            assert set(name.lower().split()) <= words | {"intel", "amd", "nvidia", "qualcomm"}, (
                name,
                cell.hardware,
            )


def test_retired_pythons_are_documented_with_a_reason(matrix: model.Matrix) -> None:
    retired = {version for entry in matrix.retired for version in entry["python"]}
    assert retired == {"3.7", "3.8", "3.9"}
    assert all("wgpu" in e["why"] or "torch" in e["why"] for e in matrix.retired)


def test_a_python_both_retired_and_supported_is_reported(matrix: model.Matrix) -> None:
    revived = dataclasses.replace(matrix, retired=[*matrix.retired, {"python": ["3.10"], "why": "wgpu"}])
    assert "python 3.10 is both retired and in axes.python: drop one" in model.problems(revived)


def test_python_3_10_has_a_hosted_cell_on_linux_and_windows(matrix: model.Matrix) -> None:
    # The wheel-carried wgpu-native is all a 3.10 install has (no `wgpu` package there): CI must load it.
    hosted = {c.os for c in matrix.hosted if c.python == "3.10"}
    assert {"linux", "windows"} <= hosted


def test_removing_the_only_cell_of_a_value_is_reported(matrix: model.Matrix) -> None:
    without = dataclasses.replace(matrix, cells=[c for c in matrix.cells if c.adapter != "qualcomm"])
    assert any("adapter qualcomm has no cell" in p for p in model.problems(without))


def test_a_cell_without_a_reason_or_with_wrong_labels_is_reported(matrix: model.Matrix) -> None:
    cell = matrix.cells[0]
    broken = [
        dataclasses.replace(cell, id="a", why="because"),
        dataclasses.replace(cell, id="b", hosted=True, runner=["self-hosted", "linux"]),
        dataclasses.replace(cell, id="c", hosted=False, runner="ubuntu-24.04"),
        dataclasses.replace(cell, id="d", python="3.9"),
    ]
    found = model.problems(dataclasses.replace(matrix, cells=[*matrix.cells, *broken]))
    assert any(p.startswith("cell a: `why`") for p in found)
    assert any(p.startswith("cell b: hosted cell with self-hosted") for p in found)
    assert any(p.startswith("cell c: a non-hosted cell") for p in found)
    assert any(p.startswith("cell d: python '3.9' is not in axes") for p in found)


def test_duplicate_cell_ids_are_reported(matrix: model.Matrix) -> None:
    doubled = dataclasses.replace(matrix, cells=[*matrix.cells, matrix.cells[0]])
    assert any("appears more than once" in p for p in model.problems(doubled))


def test_default_torch_and_wgpu_agree_with_tox_and_setup(matrix: model.Matrix) -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    deps = tox["testenv"]["deps"]
    default = re.search(r"torch==\{env:TORCH_VERSION:([\d.]+)\}", deps)
    assert default and default[1] == matrix.torch_releases[matrix.default_torch]
    assert f'wgpu=={matrix.wgpu}; python_version >= "3.11"' in deps
    assert (
        f'WGPU_PIN = "wgpu=={matrix.wgpu}"'
        in (ROOT / "backend" / "torch_dml" / "_wgpu_library.py").read_text()
    )
    assert f"\"wgpu=={matrix.wgpu}; python_version >= '3.11'\"" in (ROOT / "pyproject.toml").read_text()


def test_a_gpu_check_cell_has_no_runner_and_others_need_one(matrix: model.Matrix) -> None:
    by_hand = matrix.by_gpu_check
    assert [c.id for c in by_hand] == ["linux-nvidia-h100-py312-torch2.11", "linux-nvidia-h200-py312-torch2.11"]
    for lent in by_hand:
        assert lent.labels == [] and not lent.hosted
        assert lent.id not in {c.id for c in [*matrix.hosted, *matrix.self_hosted]}
    cell = by_hand[0]
    broken = [
        dataclasses.replace(cell, id="a", runner=["self-hosted", "h100"]),
        dataclasses.replace(cell, id="b", run_by="cron"),
        dataclasses.replace(cell, id="c", run_by=model.RUN_BY_WORKFLOW),
    ]
    found = model.problems(dataclasses.replace(matrix, cells=[*matrix.cells, *broken]))
    assert any(p.startswith("cell a: run_by gpu-check has no CI runner") for p in found)
    assert any(p.startswith("cell b: run_by 'cron' is neither") for p in found)
    assert any(p.startswith("cell c: a workflow cell needs a `runner`") for p in found)
