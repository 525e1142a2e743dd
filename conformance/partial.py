"""Reports of runs that have not finished: the `partial` marker a report carries, and the loop that runs
pytest, rewrites the report every few seconds while it goes on, and stops it cleanly on Ctrl-C or
SIGTERM, so that an interrupted or crashed run still leaves a readable report of what it did.

pytest itself is stopped with SIGINT, as a terminal's Ctrl-C would: it then finishes the session (the
plugin closes the results file, xdist shuts its workers down) instead of dying mid-write.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

# pytest's exit codes for a session that ran to its end (1: some tests failed).
COMPLETE_EXIT_CODES = (0, 1)
# How long pytest gets to wrap up after SIGINT (xdist waits for its workers), then after SIGTERM.
STOP_GRACE_S, TERMINATE_GRACE_S = 30.0, 5.0
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}
RUNNING = "written while the run was still going"
# A full run's report takes ~3 s of CPU to rewrite, taken from the workers: at most 1/20 of the time.
TICK_COST_FACTOR = 20.0


class Stopped(BaseException):  # not an Exception: no `except Exception` on the way may swallow it
    def __init__(self, signum: int) -> None:
        super().__init__(SIGNAL_NAMES.get(signum, f"signal {signum}"))
        self.signum = signum


def collected_path(results: Path) -> Path:
    """Where the plugin writes how many tests the run collected (beside the results)."""
    return results.with_suffix(".collected.json")


def collected_tests(results: Path) -> int | None:
    path = collected_path(results)
    try:
        return int(json.loads(path.read_text())["tests"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def marker(tests_run: int, tests_total: int | None, reason: str) -> dict[str, Any]:
    """The report's `partial` field (schema: #/properties/partial)."""
    return {"tests_run": tests_run, "tests_total": tests_total, "reason": reason}


def final_marker(tests_run: int, tests_total: int | None, exit_code: int, stopped: str) -> dict[str, Any] | None:
    """None for a run that went to its end; otherwise why it did not."""
    if stopped:
        return marker(tests_run, tests_total, f"interrupted by {stopped}")
    if exit_code not in COMPLETE_EXIT_CODES:
        return marker(tests_run, tests_total, f"pytest exited with code {exit_code} before the end of the run")
    if tests_total is not None and tests_run < tests_total:
        return marker(tests_run, tests_total, "pytest ended without a result for every collected test")
    return None


def describe(partial: dict[str, Any]) -> str:
    total = partial["tests_total"]
    return f"partial: {partial['tests_run']} of {'?' if total is None else total} tests run ({partial['reason']})"


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


def _in_terminal_foreground() -> bool:
    """Whether a Ctrl-C typed at the terminal reaches pytest as well (same foreground process group)."""
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError, AttributeError):
        return False


def _stop(process: subprocess.Popen[bytes], reached: bool) -> int:
    """SIGINT to pytest unless the terminal's Ctrl-C reached it already (a second one would cut its own
    clean-up short), time to wrap up, then SIGTERM, then SIGKILL."""
    if not reached and process.poll() is None:
        process.send_signal(signal.SIGINT)
    for grace, harder in ((STOP_GRACE_S, process.terminate), (TERMINATE_GRACE_S, process.kill)):
        try:
            return process.wait(timeout=grace)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):  # KeyboardInterrupt: an impatient second Ctrl-C
            harder()
    return process.wait()


def supervise(command: list[str], env: dict[str, str], every: float,
              tick: Callable[[], None]) -> tuple[int, str]:
    """Runs pytest, calling `tick` as it starts and every `every` seconds while it runs. Returns its exit code and, when a
    signal stopped the run, the signal's name ('' otherwise)."""
    process = subprocess.Popen(command, env=env)
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    wait = 0.0  # the first snapshot at once: a report left by an earlier run must not pass for this one's
    try:
        while True:
            try:
                return process.wait(timeout=wait), ""
            except subprocess.TimeoutExpired:
                started = time.monotonic()
                try:
                    tick()
                except Exception as error:  # noqa: BLE001 -- the run matters more than its snapshot
                    print(f"conformance: could not rewrite the partial report: {error}", file=sys.stderr)
                wait = max(every, TICK_COST_FACTOR * (time.monotonic() - started))
    except KeyboardInterrupt:
        stopped, reached = SIGNAL_NAMES[signal.SIGINT], _in_terminal_foreground()
    except Stopped as signalled:
        stopped, reached = str(signalled), False
    finally:
        signal.signal(signal.SIGTERM, previous)
    return _stop(process, reached), stopped
