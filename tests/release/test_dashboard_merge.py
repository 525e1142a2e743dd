"""The merge tool, on small reports made here with conformance/report.py's own builder (so the format is
the suite's), for two cells that disagree on some ops."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from conformance import report, statuses
from matrix import merge, model
from matrix.__main__ import main


def row(op: str, dtype: str, status: str) -> dict[str, Any]:
    return {
        "op": op,
        "variant": "forward",
        "dtype": dtype,
        "status": status,
        "samples": 2,
        "sample_statuses": {},
        "max_abs_error": 0.0,
        "max_rel_error": 0.0,
        "message": "",
        "overloads": [f"{op}.out"],
        "time_s": 0.1,
    }


def make_report(adapter: str, adapter_class: str, rows: list[dict[str, Any]], **env: str) -> dict[str, Any]:
    meta = {
        "generated": "2026-01-01T00:00:00+00:00",
        "profile": "quick",
        "wall_time_s": 1.0,
        "backend": {
            "module": "torch_dml",
            "device": "dml",
            "torch": "2.13.0+cpu",
            "adapter_class": adapter_class,
            "adapter": {"name": adapter, "backend": "Vulkan", "features": []},
            "env": env,
        },
    }
    overloads = [{"name": "add.out", "dispatch": "native", "exercised": True}]
    return report.build(meta, rows, overloads, {"aten::exp.out": 3} if adapter_class == "nvidia" else {})


@pytest.fixture
def reports(tmp_path: Path) -> dict[str, Path]:
    """lavapipe: add passes in both dtypes, exp float64 falls back. nvidia: add float64 fails, exp is absent,
    mm only exists there."""
    software = make_report(
        "llvmpipe (LLVM 15)",
        "lavapipe",
        [
            row("add", "float32", statuses.PASS),
            row("add", "float64", statuses.PASS),
            row("exp", "float64", statuses.FALLBACK),
        ],
    )
    gpu = make_report(
        "NVIDIA GeForce RTX 3070",
        "nvidia",
        [
            row("add", "float32", statuses.PASS),
            row("add", "float64", statuses.FAIL),
            row("mm", "float32", statuses.PASS),
        ],
    )
    paths = {}
    for name, data in (
        ("linux-lavapipe-py311-torch2.13", software),
        ("linux-nvidia-rtx3070-py312-torch2.13", gpu),
    ):
        folder = tmp_path / "artifacts" / f"conformance-{name}"
        folder.mkdir(parents=True)
        (folder / "report.json").write_text(json.dumps(data))
        paths[name] = folder / "report.json"
    return paths


def test_cells_are_named_after_their_artifact_folder(reports: dict[str, Path], tmp_path: Path) -> None:
    cells = merge.collect([str(tmp_path / "artifacts")])
    assert sorted(c.name for c in cells) == sorted(reports)


def test_cell_json_and_explicit_names_win(reports: dict[str, Path]) -> None:
    path = reports["linux-lavapipe-py311-torch2.13"]
    (path.parent / "cell.json").write_text(json.dumps({"id": "from-record", "python": "3.11", "os": "linux"}))
    assert merge.collect([str(path)])[0].name == "from-record"
    assert merge.collect([f"mine={path}"])[0].name == "mine"


def test_two_reports_claiming_one_cell_are_refused(reports: dict[str, Path]) -> None:
    path = str(reports["linux-lavapipe-py311-torch2.13"])
    with pytest.raises(ValueError, match="two reports claim"):
        merge.collect([path, path])


def test_a_report_of_another_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({**make_report("x", "lavapipe", []), "schema_version": 999}))
    with pytest.raises(ValueError, match="schema"):
        merge.collect([str(path)])


def test_grid_shows_the_worst_status_per_op_and_cell(reports: dict[str, Path], tmp_path: Path) -> None:
    cells = merge.collect([str(tmp_path / "artifacts")])
    grid = merge.grid(cells)
    assert grid["add"]["linux-nvidia-rtx3070-py312-torch2.13"]["status"] == statuses.FAIL
    assert grid["add"]["linux-nvidia-rtx3070-py312-torch2.13"]["counts"] == {
        statuses.FAIL: 1,
        statuses.PASS: 1,
    }
    assert grid["add"]["linux-lavapipe-py311-torch2.13"]["status"] == statuses.PASS
    assert "linux-lavapipe-py311-torch2.13" not in grid["mm"]


def test_differences_list_only_pairs_that_differ(reports: dict[str, Path], tmp_path: Path) -> None:
    cells = merge.collect([str(tmp_path / "artifacts")])
    found = {(d["op"], d["dtype"]): d["statuses"] for d in merge.differences(cells)}
    assert set(found) == {("add", "float64"), ("exp", "float64"), ("mm", "float32")}
    assert found[("add", "float64")]["linux-nvidia-rtx3070-py312-torch2.13"] == statuses.FAIL
    assert found[("mm", "float32")]["linux-lavapipe-py311-torch2.13"] == ""  # absent there
    assert next(iter(found)) == ("add", "float64")  # the FAIL sorts first


def test_differences_put_right_and_wrong_first_and_keep_the_variant(tmp_path: Path) -> None:
    cells = [
        merge.CellReport(
            "lavapipe",
            make_report(
                "llvmpipe",
                "lavapipe",
                [
                    row("tan", "float32", statuses.PASS),
                    {**row("tan", "float32", statuses.PASS), "variant": "backward"},
                    row("mm", "float64", statuses.PASS),
                    row("cos", "float64", statuses.SKIP),
                ],
            ),
        ),
        merge.CellReport(
            "h100",
            make_report(
                "NVIDIA H100",
                "nvidia",
                [
                    {**row("tan", "float32", statuses.FAIL), "message": "values differ"},
                    {**row("tan", "float32", statuses.PASS), "variant": "backward"},
                    row("mm", "float64", statuses.FALLBACK),
                    row("cos", "float64", statuses.PASS),
                ],
            ),
        ),
    ]
    found = merge.differences(cells)
    assert [(d["op"], d["variant"], d["dtype"], d["kind"]) for d in found] == [
        ("tan", "forward", "float32", merge.RIGHT_AND_WRONG),
        ("mm", "forward", "float64", merge.NATIVE_AND_FALLBACK),
        ("cos", "forward", "float64", merge.OTHER),
    ]
    assert found[0]["statuses"] == {"lavapipe": statuses.PASS, "h100": statuses.FAIL}
    assert found[0]["messages"] == {"h100": "values differ"}


def test_committed_gzipped_reports_carry_their_cell_and_origin(tmp_path: Path) -> None:
    folder = tmp_path / "cells"
    folder.mkdir()
    full = {**make_report("NVIDIA H100", "nvidia", [row("add", "float32", statuses.PASS)]), "profile": "full"}
    cell_id = "linux-nvidia-h100-py312-torch2.11"
    (folder / f"{cell_id}.report.json.gz").write_bytes(gzip.compress(json.dumps(full).encode()))
    (folder / "sources.yaml").write_text(
        f"{cell_id}:\n  commit: ba750b6\n  command: bash .ci/gpu-check all\n"
    )
    quick = tmp_path / "artifacts" / f"conformance-{cell_id}" / "report.json"
    quick.parent.mkdir(parents=True)
    quick.write_text(json.dumps(make_report("NVIDIA H100", "nvidia", [row("add", "float32", statuses.FAIL)])))
    # The artifact's quick run of the same cell is dropped for the committed full one, whichever comes first.
    for arguments in ([str(folder), str(quick.parent.parent)], [str(quick.parent.parent), str(folder)]):
        (cell,) = merge.collect(arguments)
        assert cell.name == cell_id and cell.report["profile"] == "full" and merge.commit(cell) == "ba750b6"
    out = tmp_path / "site"
    assert main(["merge", str(folder), "-o", str(out)]) == 0
    summary = json.loads((out / "merged.json").read_text())["cells"][0]
    assert (summary["commit"], summary["python"], summary["os"]) == ("ba750b6", "3.12", "linux")
    sides = (out / "index.html").read_text().split('id="coverage-table"')[1].split("</table>")[0]
    assert "<code>ba750b6</code>" in sides and "full (" in sides
    status = (out / "matrix.html").read_text().split(f'id="cell-{cell_id}"')[1].split("</tr>")[0]
    assert "by hand" in status and "reported</a><br><small>full, ba750b6</small>" in status


def test_site_has_cells_as_columns_and_the_matrix_status(reports: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert main(["merge", str(tmp_path / "artifacts"), "-o", str(out)]) == 0
    index = (out / "index.html").read_text()
    header = index.split('id="coverage-table"')[1].split("</thead>")[0]
    assert header.index("linux-lavapipe-py311-torch2.13") < header.index(
        "linux-nvidia-rtx3070-py312-torch2.13"
    )
    assert "NVIDIA GeForce RTX 3070" in index
    counts = index.split('id="difference-counts"')[1].split("</p>")[0]
    assert "wrong on another: <b>1</b>" in counts and "other: 2" in counts
    wrong = index.split('id="differences-table"')[1].split("</table>")[0]
    assert "<td>add</td><td>forward</td><td>float64</td>" in wrong and "exp" not in wrong
    status = (out / "matrix.html").read_text()
    reported = status.split('id="cell-linux-nvidia-rtx3070-py312-torch2.13"')[1].split("</tr>")[0]
    assert "reported" in reported
    missing = status.split('id="cell-windows-intel-uhd630-py312-torch2.14"')[1].split("</tr>")[0]
    assert "no report" in missing
    assert f"2 of {len(model.load().cells)} cells" in status
    merged = json.loads((out / "merged.json").read_text())
    assert [c["name"] for c in merged["cells"]] == sorted(reports)
    assert (out / "cells" / "linux-nvidia-rtx3070-py312-torch2.13" / "index.html").exists()


def test_reports_outside_the_matrix_are_listed_separately(reports: dict[str, Path], tmp_path: Path) -> None:
    cells = merge.collect([f"local-run={reports['linux-lavapipe-py311-torch2.13']}"])
    status = merge.matrix_status(model.load(), cells)
    assert status["reported"] == 0 and [r["name"] for r in status["extra"]] == ["local-run"]


def test_nothing_to_merge_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no conformance reports"):
        merge.build_site(model.load(), [], tmp_path)


def test_a_partial_report_is_merged_and_marked(reports: dict[str, Path], tmp_path: Path) -> None:
    path = reports["linux-lavapipe-py311-torch2.13"]
    data = json.loads(path.read_text())
    data["partial"] = {"tests_run": 3, "tests_total": 120, "reason": "interrupted by SIGTERM"}
    path.write_text(json.dumps(data))
    out = tmp_path / "site"
    assert main(["merge", str(tmp_path / "artifacts"), "-o", str(out)]) == 0
    cells = {c["name"]: c for c in json.loads((out / "merged.json").read_text())["cells"]}
    assert cells["linux-lavapipe-py311-torch2.13"]["partial"]["tests_run"] == 3
    assert cells["linux-nvidia-rtx3070-py312-torch2.13"]["partial"] is None
    assert "partial: 3 of 120 tests run" in (out / "index.html").read_text()
