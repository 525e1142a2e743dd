"""The live view of a conformance run (conformance/progress.py): its formatting, the estimate of the time
left, the redrawn block on a terminal and the plain lines elsewhere, driven with a fake clock."""

from collections import Counter

import pytest

from conformance import progress, statuses
from conformance.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ids(family: str, op: str, count: int) -> list[str]:
    return [f"test_{family}.py::test_{op}[forward-dtype{i}]" for i in range(count)]


def row(op: str, status: str, message: str, dtype: str = "float32") -> dict:
    return {"op": op, "variant": "forward", "dtype": dtype, "status": status, "message": message}


def test_durations_bars_and_counts():
    assert [progress.duration(s) for s in (0, 42.4, 65, 3600 + 125)] == ["0s", "42s", "1m05s", "1h02m"]
    assert progress.bar(0, 10, 10) == "[..........]"
    assert progress.bar(5, 10, 10) == "[#####.....]"
    assert progress.bar(10, 10, 10) == "[##########]"
    assert progress.counts(Counter({"PASS": 3, "FAIL": 1, "SKIP": 0})) == "FAIL 1 PASS 3"  # worst first, no zeros


def test_remaining_time_needs_enough_tests_and_follows_the_rate():
    assert progress.remaining(3, 100, 60.0) is None  # too few tests to tell a rate
    assert progress.remaining(50, 100, 1.0) is None  # too short a time
    assert progress.remaining(11, 111, 20.0) == pytest.approx(200.0)  # 10 tests in 20 s since the first
    assert progress.remaining(100, 100, 5.0) == 0.0


def test_overall_line_puts_the_estimate_before_the_counts():
    line = progress.overall(12, 111, Counter({statuses.PASS: 11, statuses.FAIL: 1}), 95.0, 22.0, bar_width=10)
    assert line == "conformance [#.........] 12/111 10%  elapsed 1m35s, ETA 3m18s  FAIL 1 PASS 11"
    assert "ETA --" in progress.overall(1, 111, Counter(), 3.0, 0.0)


def test_a_failure_is_one_line_naming_op_variant_and_dtype():
    message = "values differ beyond tolerance\n  max abs error 0.5 at index (3, 4)\n" + "x" * 300
    line = progress.failure(row("nn.functional.gelu", statuses.FAIL, message, "bfloat16"), limit=100)
    assert line.startswith("FAIL nn.functional.gelu forward bfloat16: values differ beyond tolerance max abs")
    assert "\n" not in line and len(line) == 100 and line.endswith("...")
    assert progress.failure({**row("add", statuses.XPASS, ""), "expectation": "expected to fail (#12)"}) == \
        "XPASS add forward float32: expected to fail (#12)"


def test_family_of_a_generated_test_id():
    assert progress.family_of("test_binary.py::test_add[forward-float32]") == "binary"
    assert progress.family_of("generated/test_nn.py::test_nn_functional_relu[out-int8]") == "nn"


def run_view(tty: bool) -> tuple[list[str], Clock]:
    """40 binary tests then 20 unary ones, a second each; one FAIL and one ERROR on the way."""
    out: list[str] = []
    clock = Clock()
    view = Progress(out.append, tty=tty, every=10.0, width=70, clock=clock)
    view.start(ids("binary", "add", 40) + ids("unary", "neg", 20))
    view.start(ids("binary", "add", 40))  # the second xdist worker's collection: ignored
    for i, nodeid in enumerate(ids("binary", "add", 40) + ids("unary", "neg", 20)):
        clock.now += 1.0
        status = {7: statuses.FAIL, 45: statuses.ERROR}.get(i, statuses.PASS)
        op = "add" if i < 40 else "neg"
        view.finish_test(nodeid, status, row(op, status, f"reason {i}", f"dtype{i % 40}"), seconds=0.5)
    view.finish_test(ids("unary", "neg", 20)[0], statuses.PASS)  # a second report of a finished test
    view.finish(0)
    return out, clock


def test_plain_lines_off_a_terminal():
    out, _ = run_view(tty=False)
    text = "".join(out)
    assert "\x1b" not in text and "\r" not in text  # nothing a CI log would show as garbage
    lines = text.splitlines()
    assert lines[0] == "conformance: 60 tests in 2 op families"
    assert "FAIL add forward dtype7: reason 7" in lines
    assert "ERROR neg forward dtype5: reason 45" in lines
    assert "done binary: 40 tests, 20s of test time (FAIL 1)" in lines
    assert "done unary: 20 tests, 10s of test time (ERROR 1)" in lines
    periodic = [line for line in lines if line.startswith("conformance [")]
    assert len(periodic) == 6  # one every 10 s of a 60 s run
    assert periodic[-1].startswith("conformance [########################] 60/60 100%  elapsed 1m00s, ETA 0s")
    assert lines[-1] == "conformance: ran 60 of 60 tests in 1m00s: ERROR 1 FAIL 1 PASS 58"


def test_a_terminal_gets_a_block_redrawn_in_place():
    out, _ = run_view(tty=True)
    clears = [chunk for chunk in out if chunk.startswith("\x1b[")]
    assert clears and set(clears) <= {progress.CLEAR_BLOCK.format(n=n) for n in (1, 2, 3)}
    text = "".join(out)
    # Failures and finished families stay on screen, above the block.
    assert "FAIL add forward dtype7: reason 7\n" in text and "done binary: 40 tests" in text
    assert "  binary       [" in text and "  unary        [" in text  # the family in flight has its bar
    assert all(len(line) <= 70 for chunk in out if not chunk.startswith("\x1b[") for line in chunk.splitlines())
    assert text.endswith("conformance: ran 60 of 60 tests in 1m00s: ERROR 1 FAIL 1 PASS 58\n")


def test_an_interrupted_run_says_so():
    out: list[str] = []
    clock = Clock()
    view = Progress(out.append, tty=False, clock=clock)
    view.start(ids("binary", "add", 10))
    clock.now += 3.0
    view.finish_test(ids("binary", "add", 10)[0], statuses.PASS)
    view.finish(2)  # pytest's exit status for an interrupted session
    assert out[-1] == "conformance: interrupted after 1 of 10 tests in 3s: PASS 1\n"
