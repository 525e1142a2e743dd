"""docs/data/cells/: one full report per real cell, each matching its matrix.yaml cell, with its origin in
sources.yaml and README.md; and `python -m matrix publish`, which puts them there."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from conformance import report
from matrix import merge, model, publish
from matrix.__main__ import main

SOURCES = yaml.safe_load((publish.CELLS / "sources.yaml").read_text())
COMMITTED = sorted(publish.CELLS.glob("*.report.json.gz"))


def test_every_committed_report_is_a_full_run_of_its_cell_with_its_origin() -> None:
    matrix = model.load()
    readme = (publish.CELLS / "README.md").read_text()
    assert COMMITTED
    for path in COMMITTED:
        cell_id = path.name.removesuffix(".report.json.gz")
        data = report.read(path)
        assert publish.problems(matrix, cell_id, data) == [], path.name
        assert data["profile"] == "full", path.name
        origin = SOURCES[cell_id]
        assert origin["commit"] and origin["command"] and origin["profile"] == "full", cell_id
        assert f"`{cell_id}`" in readme
    assert set(SOURCES) == {p.name.removesuffix(".report.json.gz") for p in COMMITTED}


def test_every_gpu_check_cell_has_a_committed_report() -> None:
    """A cell no workflow runs reaches the dashboard only through this folder."""
    committed = {p.name.removesuffix(".report.json.gz") for p in COMMITTED}
    assert {c.id for c in model.load().by_gpu_check} <= committed


def _report(adapter_class: str, torch: str, profile: str = "full") -> dict:
    rows = [
        {"op": "add", "variant": "forward", "dtype": "float32", "status": "PASS", "samples": 1,
         "sample_statuses": {}, "max_abs_error": 0.0, "max_rel_error": 0.0, "message": "", "overloads": [],
         "time_s": 0.0}
    ]  # fmt: skip
    meta = {
        "generated": "2026-11-23T07:39:53+00:00",
        "profile": profile,
        "wall_time_s": 1.0,
        "backend": {"torch": torch, "adapter_class": adapter_class, "adapter": {"name": "x", "driver": "d"}},
        "suite": {"max_samples": 4},
    }
    return report.build(meta, rows, [], {})


def test_publish_gzips_a_report_and_records_where_it_came_from(tmp_path: Path) -> None:
    plain = tmp_path / "report.json"
    plain.write_text(json.dumps(_report("lavapipe", "2.13.0+cpu")))
    cell = "linux-lavapipe-py311-torch2.13"
    argv = ["publish", cell, str(plain), "--commit", "abc1234", "--to", str(tmp_path / "cells")]
    assert main(argv) == 0
    written = tmp_path / "cells" / f"{cell}.report.json.gz"
    assert json.loads(gzip.decompress(written.read_bytes())) == json.loads(plain.read_text())
    first = written.read_bytes()
    assert main(argv) == 0 and written.read_bytes() == first  # same input, same bytes: no spurious diffs
    origin = merge.read_sources(tmp_path / "cells")[cell]
    assert origin == {
        "commit": "abc1234",
        "date": "2026-11-23",
        "profile": "full",
        "machine": "x (d), torch 2.13.0+cpu",
        "command": "python -m conformance run",
    }
    (loaded,) = merge.collect([str(tmp_path / "cells")])
    assert loaded.name == cell and merge.commit(loaded) == "abc1234"


@pytest.mark.parametrize(
    ("cell", "data", "why"),
    [
        ("linux-lavapipe-py311-torch2.13", _report("nvidia", "2.13.0"), "ran on a nvidia adapter"),
        ("linux-lavapipe-py311-torch2.13", _report("lavapipe", "2.11.0"), "ran torch 2.11.0"),
        ("linux-lavapipe-py311-torch2.13", _report("lavapipe", "2.13.0", "quick"), "quick-profile"),
        ("linux-lavapipe-py399-torch2.13", _report("lavapipe", "2.13.0"), "no cell"),
        (
            "linux-lavapipe-py311-torch2.13",
            {**_report("lavapipe", "2.13.0"), "partial": {"tests_run": 5, "tests_total": 9, "reason": "x"}},
            "a partial report (5 of 9 tests run",
        ),
    ],
)
def test_publish_refuses_a_report_that_is_not_the_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str, data: dict, why: str
) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    assert main(["publish", cell, str(path), "--commit", "abc", "--to", str(tmp_path / "cells")]) == 1
    assert why in capsys.readouterr().err
    assert not (tmp_path / "cells").exists()


def test_publish_needs_a_commit(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(_report("lavapipe", "2.13.0")))
    with pytest.raises(ValueError, match="--commit"):
        publish.publish(model.load(), "linux-lavapipe-py311-torch2.13", path, "", "x", "", tmp_path / "cells")
