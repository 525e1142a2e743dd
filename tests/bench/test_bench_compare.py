"""The regression check: the noise rule, what counts as a regression, baselines by adapter and profile,
and the command's exit status."""

import json
from pathlib import Path

import pytest
from bench_results import result, row

from benchmarks import compare
from benchmarks.__main__ import main


def verdicts(base: dict, new: dict) -> dict[str, str]:
    return {line["name"]: line["verdict"] for line in compare.compare(base, new)["rows"]}


def test_slower_only_beyond_the_floor_when_runs_are_quiet():
    base = result(row("a", 1.0), row("b", 1.0), row("c", 1.0))
    new = result(row("a", 1.04), row("b", 1.06), row("c", 0.9))
    assert verdicts(base, new) == {"a": "same", "b": "slower", "c": "faster"}


def test_a_slower_median_alone_is_load_not_a_regression():
    base = result(row("a", 1.0))
    disturbed = row("a", 1.5, min_s=1.02)  # the fastest repeat as fast as before: other processes' load
    assert verdicts(base, result(disturbed)) == {"a": "same"}
    assert verdicts(result(disturbed), base) == {"a": "same"}
    assert verdicts(base, result(row("a", 1.5, min_s=1.3))) == {"a": "slower"}


@pytest.mark.parametrize("noisy", ["base", "new"])
def test_noise_measured_in_either_run_widens_the_tolerance(noisy):
    base = result(row("a", 1.0, spread=0.30 if noisy == "base" else 0.01))
    new_spread = 0.30 if noisy == "new" else 0.01
    assert verdicts(base, result(row("a", 1.25, spread=new_spread))) == {"a": "same"}
    line = compare.compare(base, result(row("a", 1.35, spread=new_spread)))["rows"][0]
    assert line["verdict"] == "slower" and line["tolerance"] == 0.30 and line["change"] == 0.35


def test_errors_and_new_fallbacks_are_regressions_whatever_the_time():
    base = result(row("broke", 1.0), row("fell", 1.0), row("fixed", 1.0, status="error"),
                  row("native", 1.0, status="fallback"))
    new = result(row("broke", 1.0, status="error"), row("fell", 0.5, status="fallback"), row("fixed", 1.0),
                 row("native", 1.0))
    check = compare.compare(base, new)
    assert verdicts(base, new) == {"broke": "broken", "fell": "now fallback", "fixed": "fixed", "native": "same"}
    assert check["regressions"] == 2
    assert {line["name"]: line.get("note") for line in check["rows"]}["native"] == "now native"


def test_rows_are_matched_by_calls_per_sync_and_only_dml_is_checked():
    base = result(row("add", 1.0), row("add", 0.1, calls_per_sync=20), row("add", 1.0, device="cpu"),
                  row("gone", 1.0))
    new = result(row("add", 1.0), row("add", 0.2, calls_per_sync=20), row("add", 9.0, device="cpu"),
                 row("fresh", 1.0))
    lines = {(line["name"], line["calls_per_sync"]): line["verdict"] for line in compare.compare(base, new)["rows"]}
    assert lines == {("add", 1): "same", ("add", 20): "slower", ("fresh", 1): "new", ("gone", 1): "missing"}


def test_different_adapters_or_profiles_are_warned_about():
    check = compare.compare(result(row("a", 1.0)), result(row("a", 1.0), adapter="NVIDIA H100 80GB HBM3 (Vulkan)",
                                                           profile="full"))
    assert len(check["warnings"]) == 2 and "H100" in check["warnings"][0]


def test_baseline_named_by_adapter_and_profile(tmp_path):
    run = result(row("a", 1.0))
    assert compare.baseline_name(run) == "llvmpipe-llvm-17-0-6-256-bits-vulkan-quick.json"
    assert compare.baseline_name(result(adapter="NVIDIA H100 80GB HBM3 (Vulkan)", profile="full")) == \
        "nvidia-h100-80gb-hbm3-vulkan-full.json"
    assert compare.find_baseline(run, tmp_path) is None
    (tmp_path / compare.baseline_name(run)).write_text("{}")
    assert compare.find_baseline(run, tmp_path) == tmp_path / compare.baseline_name(run)


def test_stored_baselines_are_named_for_what_they_hold():
    for path in compare.BASELINES.glob("*.json"):
        stored = json.loads(path.read_text())
        assert compare.baseline_name(stored) == path.name
        assert any(r["device"] == "dml" and r["status"] != "error" for r in stored["rows"])


def write(path: Path, run: dict) -> str:
    path.write_text(json.dumps(run))
    return str(path)


def test_compare_command_fails_only_when_asked(tmp_path, capsys):
    base = write(tmp_path / "base.json", result(row("a", 1.0), row("b", 1.0)))
    slower = write(tmp_path / "slower.json", result(row("a", 2.0), row("b", 1.0)))
    assert main(["compare", base, slower]) == 0
    text = capsys.readouterr().out
    assert "1 regressions, 1 rows within the noise" in text and "| slower | elementwise | a |" in text
    assert main(["compare", base, slower, "--fail-on-regression"]) == 1
    assert main(["compare", base, base, "--fail-on-regression"]) == 0


def test_run_stores_a_first_baseline_then_checks_against_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(compare, "BASELINES", tmp_path / "baselines")
    (tmp_path / "baselines").mkdir()
    quick = ["run", "--quick", "--devices", "dml", "--suites", "overhead", "--repeats", "1", "--no-device-time",
             "--baseline", "auto", "--fail-on-regression"]
    assert main([*quick, "--out", str(tmp_path / "first")]) == 0
    written = list((tmp_path / "first" / "baseline").glob("*.json"))
    assert len(written) == 1 and f"commit it as benchmarks/baselines/{written[0].name}" in capsys.readouterr().out
    # A baseline a thousand times faster than this run can be, even on a lavapipe whose first copies are
    # ten times slower than its next ones: every timed row is a regression.
    stored = json.loads(written[0].read_text())
    for line in stored["rows"]:
        for timed in ("median_s", "min_s"):
            line[timed] = line.get(timed, 1.0) / 1000
    (tmp_path / "baselines" / written[0].name).write_text(json.dumps(stored))
    assert main([*quick, "--out", str(tmp_path / "second")]) == 1
    check = json.loads((tmp_path / "second" / "results.json").read_text())["regression_check"]
    assert check["regressions"] == len(stored["rows"]) and check["path"].endswith(written[0].name)
    assert "## Against the baseline" in (tmp_path / "second" / "results.md").read_text()
