"""Report building, the schema, the baseline diff and rendering, from synthetic results."""

import json

import jsonschema
import pytest
from report_rows import make_report, row

from conformance import SCHEMA_VERSION, report, statuses


@pytest.fixture
def data():
    return make_report([
        row("add", "float32", statuses.PASS),
        row("add", "int8", statuses.FALLBACK, fallbacks={"aten::add.out": 3}),
        row("add", "float32", statuses.PASS, variant="backward"),
        row("exp", "float32", statuses.FAIL, "values differ beyond tolerance", family="unary"),
        row("exp", "float64", statuses.SKIP, "the adapter has no shader-f64", family="unary"),
        row("cumsum", "float32", statuses.FALLBACK, family="other", overloads=["cumsum"],
            fallbacks={"aten::cumsum.out": 2}),
    ])


def test_worst_status_wins():
    assert statuses.worst([statuses.PASS, statuses.FALLBACK]) == statuses.FALLBACK
    assert statuses.worst([statuses.PASS, statuses.ERROR, statuses.FAIL]) == statuses.ERROR
    assert statuses.worst([]) == statuses.SKIP


def test_totals_coverage_and_untested(data):
    assert data["totals"][statuses.PASS] == 2 and data["totals"][statuses.FAIL] == 1
    assert data["totals"][statuses.UNTESTED] == 1  # mm.out: registered, reached by nothing
    assert data["coverage"]["native_pass_pct"] == pytest.approx(40.0)  # 2 of 5 tested cases
    assert data["coverage"]["correct_pct"] == pytest.approx(80.0)
    assert data["coverage"]["registered_exercised_pct"] == 50.0
    assert data["coverage"]["native_pass_pct_by_variant"] == {"backward": 100.0, "forward": pytest.approx(25.0)}
    assert data["families"] == ["binary", "other", "unary"]


def test_overload_table_counts_cases_and_passes(data):
    by_name = {o["name"]: o for o in data["overloads"]}
    assert by_name["add.out"] == {"name": "add.out", "dispatch": "native", "exercised": True, "registered": True,
                                  "cases": 3, "passing": 2}
    assert by_name["exp.out"]["dispatch"] == "fallback" and not by_name["exp.out"]["registered"]
    assert not by_name["mm.out"]["exercised"]
    assert data["fallbacks"] == {"aten::add.out": 3, "aten::cumsum.out": 2}
    # reached below the dispatch mode, through the fallback: still exercised
    assert by_name["cumsum.out"]["exercised"] and by_name["cumsum.out"]["cases"] == 1


def test_report_matches_its_schema(data, tmp_path):
    schema = json.loads(report.SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    data["diff"] = report.diff(data, data)
    jsonschema.validate(data, schema)
    broken = json.loads(json.dumps(data))
    broken["results"][0]["status"] = "GREAT"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    del broken["totals"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_rendering_from_the_json(data, tmp_path):
    report.render(data, tmp_path)
    assert json.loads((tmp_path / "report.json").read_text())["schema_version"] == SCHEMA_VERSION
    markdown = (tmp_path / "report.md").read_text()
    assert "| exp | forward | float32 | FAIL |" in markdown and "`aten::add.out` | 3" in markdown
    assert "| add | forward | float32 |" not in markdown  # passing cases are not listed
    html = (tmp_path / "index.html").read_text()
    assert 'data-status="FALLBACK"' in html and 'id="family-filter"' in html and "<option>unary</option>" in html
    assert html.count('<tr data-op="') == 4  # add forward, add backward, exp forward, cumsum forward
    assert 'id="op-exp"' in html and "values differ beyond tolerance" in html
    assert "<code>mm.out</code>" in html  # the UNTESTED list


def test_rendering_escapes_messages(tmp_path):
    data = make_report([row("add", "float32", statuses.ERROR, "<script>alert(1)</script>")])
    report.render(data, tmp_path)
    assert "<script>alert(1)" not in (tmp_path / "index.html").read_text()


def test_diff_against_baseline():
    before = make_report([row("add", "float32", statuses.FALLBACK), row("exp", "float32", statuses.PASS),
                          row("mm", "float32", statuses.PASS), row("neg", "float32", statuses.SKIP)])
    after = make_report([row("add", "float32", statuses.PASS), row("exp", "float32", statuses.FAIL),
                         row("neg", "float32", statuses.PASS), row("sub", "float32", statuses.PASS)])
    changes = report.diff(after, before)
    assert [c["op"] for c in changes["improvements"]] == ["add"]
    assert [c["op"] for c in changes["regressions"]] == ["exp"]
    assert [c["op"] for c in changes["changed"]] == ["neg"]
    # mm.out: registered, reached by no sample any more, so a new UNTESTED row
    assert [(c["op"], c["after"]) for c in changes["new"]] == [("mm.out", "UNTESTED"), ("sub", "PASS")]
    assert [c["op"] for c in changes["gone"]] == ["mm"]
