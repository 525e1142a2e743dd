"""The pytest plugin behind the generated modules (generate.py): loads the backend before anything imports
torch.testing._internal, runs each (op, variant, dtype) case, maps its status onto a pytest outcome, and
collects one result row per test on the controller (rows travel from pytest-xdist workers as
user_properties) into a JSON-lines file that `python -m conformance run` turns into the report.

Outcomes: PASS and FALLBACK pass; SKIP skips with its reason; XFAIL is xfailed; FAIL, ERROR and XPASS
(strict: an expected failure that passed) fail.

With --conformance-progress the controller draws progress.py's view in place of pytest's dots and writes
the number of collected tests beside the results (`<results>.collected.json`), so that a report rebuilt
from an unfinished results file can say how much of the run it holds.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from conformance import backend as backend_info
from conformance import expectations, statuses, tolerances
from conformance.progress import Progress

PROPERTY = "conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance")
    group.addoption("--conformance-backend", default=os.environ.get("CONFORMANCE_BACKEND", "torch_dml"),
                    help="the backend's import module (env CONFORMANCE_BACKEND)")
    group.addoption("--conformance-device", default=os.environ.get("CONFORMANCE_DEVICE", "dml"),
                    help="its device name (env CONFORMANCE_DEVICE)")
    group.addoption("--conformance-max-samples", type=int, default=6, help="samples per case")
    group.addoption("--conformance-ops", default="", help="comma-separated OpInfo names or full names")
    group.addoption("--conformance-dtypes", default="", help="comma-separated dtypes")
    group.addoption("--conformance-variants", default="", help="comma-separated: forward,inplace,out,backward")
    group.addoption("--conformance-results", default="", help="write one JSON row per test here (JSON lines)")
    group.addoption("--conformance-adapter-class", default="",
                    help="expectations file to apply (default: the adapter's class)")
    group.addoption("--conformance-expectations", default=os.environ.get("CONFORMANCE_EXPECTATIONS", ""),
                    help="folder of expectation files (default: conformance/expectations)")
    group.addoption("--conformance-progress", default="off", choices=("off", "auto", "tty", "lines"),
                    help="the live view instead of pytest's dots: tty (redrawn in place), lines (plain, for "
                         "logs), auto (tty when stdout is a terminal)")
    group.addoption("--conformance-progress-every", type=float, default=30.0,
                    help="seconds between the plain progress lines (lines mode)")


def _split(value: str) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()}


def _finite(value: Any) -> Any:
    """JSON has no inf/nan: an error that large is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


class Session:
    """Per process: the backend, its runner, op_db by full name, expectations and tolerances."""

    def __init__(self, config: pytest.Config) -> None:
        self.module = config.getoption("conformance_backend")
        self.device = config.getoption("conformance_device")
        self.max_samples = config.getoption("conformance_max_samples")
        self.adapter_class = config.getoption("conformance_adapter_class")
        self.backend = backend_info.load(self.module, self.device)  # before torch.testing._internal
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        if workers > 1:  # one intra-op thread pool per worker would oversubscribe the cores
            import torch

            torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))
        self.adapter_class = self.adapter_class or backend_info.describe(self.module, self.device)["adapter_class"]
        # Data errors stop the session here, before any test runs.
        folder = config.getoption("conformance_expectations")
        self.expected = expectations.load(self.adapter_class, Path(folder) if folder else expectations.HERE)
        self.tolerances = tolerances.load()
        self._runner: Any = None
        self._ops: dict[str, Any] = {}

    def runner(self) -> Any:
        if self._runner is None:
            from torch.testing._internal.common_methods_invocations import op_db

            from conformance.runner import Runner

            self._ops = {getattr(op, "full_name", op.name): op for op in reversed(op_db)}
            self._runner = Runner(self.backend, self.device, self.max_samples, backend_info.has_float64(self.backend))
        return self._runner

    def run(self, op_name: str, variant: str, dtype_name: str) -> dict[str, Any]:
        import torch

        from conformance.runner import CellResult

        runner = self.runner()
        skip = expectations.skip_reason(op_name, dtype_name, variant, self.expected)
        if skip:
            row = CellResult(op_name, variant, dtype_name, statuses.SKIP, message=skip).as_dict()
            row["expectation"] = skip
            return row
        tolerance = tolerances.lookup(op_name, variant, dtype_name, self.tolerances)
        cell = runner.run_case(self._ops[op_name], variant, getattr(torch, dtype_name),
                               (tolerance.rtol, tolerance.atol) if tolerance else None)
        if tolerance:
            cell.tolerance = tolerance.as_dict()
        row = cell.as_dict()
        row["status"], row["expectation"] = expectations.apply(cell.status, op_name, dtype_name, self.expected,
                                                               variant)
        return row


class Fixture:
    def __init__(self, session: Session, request: pytest.FixtureRequest) -> None:
        self.session = session
        self.request = request

    def check(self, op_name: str, variant: str, dtype_name: str) -> None:
        node = self.request.node
        row = _finite(self.session.run(op_name, variant, dtype_name))
        marker = node.get_closest_marker("conformance")
        row["family"] = marker.kwargs.get("family", "") if marker else ""
        row["test_id"] = node.name
        node.user_properties.append((PROPERTY, row))
        status, message = row["status"], row["message"] or row.get("expectation", "")
        if status == statuses.SKIP:
            pytest.skip(message)
        if status == statuses.XFAIL:
            pytest.xfail(f"{row['expectation']} [{row['message']}]")
        if status == statuses.XPASS:
            pytest.fail(f"XPASS (strict): {message}", pytrace=False)
        if status in (statuses.FAIL, statuses.ERROR):
            pytest.fail(f"{status}: {message}", pytrace=False)


_SESSION_KEY = pytest.StashKey[Session]()
_ROWS_KEY = pytest.StashKey[dict[str, dict[str, Any]]]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance(op, base, family): one OpInfo of the conformance suite")
    config.stash[_SESSION_KEY] = Session(config)
    config.stash[_ROWS_KEY] = {}


@pytest.fixture
def conformance(request: pytest.FixtureRequest) -> Fixture:
    return Fixture(request.config.stash[_SESSION_KEY], request)


def selected(item: pytest.Item, ops: set[str], dtypes: set[str], variants: set[str]) -> bool:
    marker = item.get_closest_marker("conformance")
    callspec = getattr(item, "callspec", None)
    if marker is None or callspec is None:
        return True
    if ops and marker.kwargs["op"] not in ops and marker.kwargs["base"] not in ops:
        return False
    if dtypes and callspec.params["dtype"] not in dtypes:
        return False
    return not variants or callspec.params["variant"] in variants


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ops, dtypes = _split(config.getoption("conformance_ops")), _split(config.getoption("conformance_dtypes"))
    variants = _split(config.getoption("conformance_variants"))
    if not (ops or dtypes or variants):
        return
    keep = [item for item in items if selected(item, ops, dtypes, variants)]
    dropped = [item for item in items if not selected(item, ops, dtypes, variants)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def _row_from_nodeid(nodeid: str, message: str) -> dict[str, Any] | None:
    """A test that left no row (its worker crashed): an ERROR row from its id `...::test_x[variant-dtype]`."""
    name = nodeid.rsplit("::", 1)[-1]
    if "[" not in name:
        return None
    function, _, param = name[:-1].partition("[")
    variant, _, dtype = param.partition("-")
    return {"function": function, "variant": variant, "dtype": dtype, "status": statuses.ERROR,
            "message": message[:300], "test_id": name}


def _finished(report: pytest.TestReport) -> bool:
    """The report that ends a test: its call, or a setup that did not pass, or xdist's report for the test
    a crashed worker was running (phase '???')."""
    return report.when == "call" or (report.when != "teardown" and not report.passed)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _CONFIG:
        return
    config = _CONFIG[0]
    rows = config.stash[_ROWS_KEY]
    row = next((value for key, value in report.user_properties if key == PROPERTY), None)
    if row is None and report.failed and report.nodeid not in rows:
        row = _row_from_nodeid(report.nodeid, str(report.longrepr).strip().splitlines()[-1] if report.longrepr
                               else "the test failed without a result")
    progress = config.stash.get(_PROGRESS_KEY, None)
    if progress is not None and _finished(report):
        status = row["status"] if row else (statuses.ERROR if report.failed else statuses.SKIP)
        if row is not None and "op" not in row:  # a crashed test's row names its function, not its op
            row = {**row, "op": row["function"].removeprefix("test_")}
        progress.finish_test(report.nodeid, status, row, report.duration)
    if row is None or report.nodeid in rows:
        return
    rows[report.nodeid] = row
    stream = config.stash.get(_STREAM_KEY, None)
    if stream is not None:  # written as they come, so an interrupted run keeps what it did
        stream.write(json.dumps(row) + "\n")
        stream.flush()


_CONFIG: list[pytest.Config] = []
_STREAM_KEY = pytest.StashKey[Any]()
_PROGRESS_KEY = pytest.StashKey[Progress]()


def _progress(config: pytest.Config) -> Progress | None:
    mode = config.getoption("conformance_progress")
    if mode == "off" or hasattr(config, "workerinput"):
        return None
    if mode == "auto":
        mode = "tty" if sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb" else "lines"
    writer = config.get_terminal_writer()

    last = [""]

    def write(text: str) -> None:
        # xdist rewrites "bringing up nodes..." in place, leaving no newline; after the view's own
        # cursor movement (an escape sequence) the line is clean though the writer counts it.
        if writer.width_of_current_line and not (text.startswith("\x1b") or last[0].startswith("\x1b")):
            text = "\n" + text
        writer.write(text, flush=True)
        last[0] = text

    return Progress(write, tty=mode == "tty", every=config.getoption("conformance_progress_every"),
                    width=max(40, min(writer.fullwidth - 1, 200)))


def _collected(config: pytest.Config, nodeids: list[str]) -> None:
    """The run's size: to the view, and beside the results for a report of an unfinished run."""
    progress = config.stash.get(_PROGRESS_KEY, None)
    if progress is not None:
        progress.start(nodeids)
    path = config.getoption("conformance_results")
    if path and not config.stash.get(_COLLECTED_KEY, False):
        config.stash[_COLLECTED_KEY] = True
        collected_path(Path(path)).write_text(json.dumps({"tests": len(nodeids)}))


_COLLECTED_KEY = pytest.StashKey[bool]()


def collected_path(results: Path) -> Path:
    return results.with_suffix(".collected.json")


def pytest_collection_finish(session: pytest.Session) -> None:
    # Without xdist; the workers' collections reach the controller through the hook below.
    if not hasattr(session.config, "workerinput") and not session.config.pluginmanager.has_plugin("dsession"):
        _collected(session.config, [item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    if _CONFIG:
        _collected(_CONFIG[0], ids)


@pytest.hookimpl(wrapper=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Generator[None, Any, Any]:
    """No dots or letters while the view is drawn: they would break its lines."""
    result = yield
    if result and config.stash.get(_PROGRESS_KEY, None) is not None:
        category, _, _ = result
        return category, "", ""
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    _CONFIG[:] = [config]
    path = config.getoption("conformance_results")
    if path and not hasattr(config, "workerinput"):  # the controller (or the only process) writes the rows
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        config.stash[_STREAM_KEY] = open(path, "w")  # noqa: SIM115 -- closed at session finish
        collected_path(Path(path)).unlink(missing_ok=True)
    progress = _progress(config)
    if progress is not None:
        config.stash[_PROGRESS_KEY] = progress


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    stream = session.config.stash.get(_STREAM_KEY, None)
    if stream is not None:
        stream.close()
    progress = session.config.stash.get(_PROGRESS_KEY, None)
    if progress is not None:
        progress.finish(int(exitstatus))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    rows = config.stash.get(_ROWS_KEY, {})
    if rows and config.stash.get(_PROGRESS_KEY, None) is None:  # the view's closing line has the counts
        counted: dict[str, int] = {}
        for row in rows.values():
            counted[row["status"]] = counted.get(row["status"], 0) + 1
        line = ", ".join(f"{s} {counted[s]}" for s in statuses.SEVERITY if s in counted)
        terminalreporter.write_line(f"conformance: {line}")
