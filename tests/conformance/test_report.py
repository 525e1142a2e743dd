"""Statuses, expectations and report rendering, from synthetic results."""

import json

import pytest

from conformance import expectations, report, statuses


def row(op, dtype, status, message=""):
    return {"op": op, "variant": "forward", "dtype": dtype, "status": status, "samples": 2, "sample_statuses": {},
            "max_abs_error": 0.0, "max_rel_error": 0.0, "message": message, "overloads": [f"{op}.out"], "time_s": 0.1}


def test_worst_status_wins():
    assert statuses.worst([statuses.PASS, statuses.FALLBACK]) == statuses.FALLBACK
    assert statuses.worst([statuses.PASS, statuses.ERROR, statuses.FAIL]) == statuses.ERROR
    assert statuses.worst([]) == statuses.SKIP


def test_expectations_turn_failures_into_xfail_and_passes_into_xpass(tmp_path):
    (tmp_path / "lavapipe.yaml").write_text(
        "expected_failures:\n- op: exp\n  dtypes: [float64]\n  reason: f64 exp is wrong on lavapipe\n")
    expected = expectations.load("lavapipe", tmp_path)
    assert expectations.apply(statuses.FAIL, "exp", "float64", expected)[0] == statuses.XFAIL
    assert expectations.apply(statuses.PASS, "exp", "float64", expected)[0] == statuses.XPASS
    assert expectations.apply(statuses.FAIL, "exp", "float32", expected)[0] == statuses.FAIL
    (tmp_path / "bad.yaml").write_text("expected_failures:\n- op: exp\n")
    with pytest.raises(ValueError, match="no reason"):
        expectations.load("bad", tmp_path)


def test_update_expectations_round_trips(tmp_path):
    path = tmp_path / "other.yaml"
    expectations.write(path, "other", [("mm", "int8", "wrong sign")])
    loaded = expectations.load("other", tmp_path)
    assert loaded[0].op == "mm" and loaded[0].dtypes == ("int8",) and loaded[0].reason == "wrong sign"


def test_report_totals_coverage_and_rendering(tmp_path):
    rows = [row("add", "float32", statuses.PASS), row("add", "int8", statuses.FALLBACK),
            row("exp", "float32", statuses.FAIL, "values differ")]
    overloads = [{"name": "add.out", "dispatch": "native", "exercised": True},
                 {"name": "mm.out", "dispatch": "native", "exercised": False}]
    meta = {"generated": "2026-11-22T00:00:00+00:00", "profile": "quick", "wall_time_s": 1.0,
            "backend": {"module": "torch_dml", "device": "dml", "torch": "2.13.0", "adapter_class": "lavapipe",
                        "adapter": {"name": "llvmpipe"}}}
    data = report.build(meta, rows, overloads, {"aten::add.out": 3})
    assert data["totals"][statuses.PASS] == 1 and data["totals"][statuses.FAIL] == 1
    assert data["coverage"]["native_pass_pct"] == pytest.approx(33.3)
    assert data["coverage"]["registered_exercised_pct"] == 50.0
    report.render(data, tmp_path)
    assert json.loads((tmp_path / "report.json").read_text())["schema_version"] == 1
    markdown = (tmp_path / "report.md").read_text()
    assert "| exp | float32 | FAIL |" in markdown and "`aten::add.out` | 3" in markdown
    html = (tmp_path / "index.html").read_text()
    assert 'data-status="FALLBACK"' in html and "status-filter" in html


def test_diff_against_baseline():
    before = {"results": [row("add", "float32", statuses.FALLBACK), row("exp", "float32", statuses.PASS)]}
    after = {"results": [row("add", "float32", statuses.PASS), row("exp", "float32", statuses.FAIL)]}
    changes = report.diff(after, before)
    assert changes["improvements"][0]["op"] == "add" and changes["regressions"][0]["op"] == "exp"
