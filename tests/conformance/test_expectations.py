"""Expectation files: xfail/skip entries with reasons, strict XPASS, variants, --update-expectations."""

import pytest
from report_rows import row

from conformance import expectations, statuses


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "lavapipe.yaml").write_text(
        "expected_failures:\n"
        "- op: exp\n  dtypes: [float64]\n  reason: f64 exp is wrong on lavapipe\n  issue: https://example.org/1\n"
        "- op: mm\n  variants: [backward]\n  reason: grads of mm are off\n"
        "skips:\n- op: sort\n  dtypes: [int8]\n  reason: hangs the adapter\n")
    (tmp_path / "common.yaml").write_text("skips:\n- op: bernoulli\n  reason: random\n")
    return tmp_path


def test_failures_become_xfail_and_passes_xpass(folder):
    expected = expectations.load("lavapipe", folder)
    assert expectations.apply(statuses.FAIL, "exp", "float64", expected) == (statuses.XFAIL,
                                                                              "f64 exp is wrong on lavapipe")
    assert expectations.apply(statuses.ERROR, "exp", "float64", expected)[0] == statuses.XFAIL
    status, reason = expectations.apply(statuses.PASS, "exp", "float64", expected)
    assert status == statuses.XPASS and "expected to fail" in reason
    assert expectations.apply(statuses.FALLBACK, "exp", "float64", expected)[0] == statuses.XPASS
    assert expectations.apply(statuses.FAIL, "exp", "float32", expected)[0] == statuses.FAIL
    assert expectations.apply(statuses.SKIP, "exp", "float64", expected)[0] == statuses.SKIP


def test_variants_and_issue_links(folder):
    expected = expectations.load("lavapipe", folder)
    assert expectations.apply(statuses.FAIL, "mm", "float32", expected, "backward")[0] == statuses.XFAIL
    assert expectations.apply(statuses.FAIL, "mm", "float32", expected, "forward")[0] == statuses.FAIL
    assert next(e for e in expected if e.op == "exp").issue == "https://example.org/1"


def test_skips_from_the_class_file_and_common(folder):
    expected = expectations.load("lavapipe", folder)
    assert expectations.skip_reason("sort", "int8", "forward", expected) == "hangs the adapter"
    assert expectations.skip_reason("sort", "int16", "forward", expected) == ""
    assert expectations.skip_reason("bernoulli", "float32", "out", expected) == "random"
    assert expectations.skip_reason("bernoulli", "float32", "out", expectations.load("nvidia", folder)) == "random"


def test_entries_need_a_reason_and_an_op(tmp_path):
    (tmp_path / "bad.yaml").write_text("expected_failures:\n- op: exp\n")
    with pytest.raises(ValueError, match="no reason"):
        expectations.load("bad", tmp_path)
    (tmp_path / "worse.yaml").write_text("skips:\n- reason: why\n")
    with pytest.raises(ValueError, match="names no op"):
        expectations.load("worse", tmp_path)


def test_shipped_files_load():
    for path in expectations.HERE.glob("*.yaml"):
        expectations.load(path.stem)
    assert expectations.skip_reason("bernoulli", "float32", "forward", expectations.load("lavapipe"))


def test_update_keeps_matching_entries_drops_passing_ones_and_adds_new(folder):
    path = folder / "lavapipe.yaml"
    rows = [row("exp", "float64", statuses.XFAIL, "values differ", family="unary"),  # still failing: kept
            row("div", "int8", statuses.ERROR, "RuntimeError: boom", variant="out"),  # new
            row("add", "float32", statuses.PASS)]
    # mm backward no longer fails: its entry goes (it would be XPASS)
    expectations.update(path, "lavapipe", rows)
    reloaded = expectations.load("lavapipe", path.parent)
    xfails = [e for e in reloaded if e.kind == "xfail"]
    assert [(e.op, e.reason, e.issue) for e in xfails] == [
        ("exp", "f64 exp is wrong on lavapipe", "https://example.org/1"), ("div", "RuntimeError: boom", "")]
    assert xfails[1].variants == ("out",) and xfails[1].dtypes == ("int8",)
    assert expectations.skip_reason("sort", "int8", "forward", reloaded) == "hangs the adapter"
    assert expectations.apply(statuses.ERROR, "div", "int8", reloaded, "out")[0] == statuses.XFAIL
