"""The live view of a conformance run, drawn by the pytest controller (plugin.py) from the test reports
that reach it (from every pytest-xdist worker): an overall bar with counts and an estimate of the time
left, a bar per op family in flight, and each failing case named as it finishes.

On a terminal the view is a block redrawn in place; elsewhere (a CI log, a file) it degrades to plain
lines: one every `every` seconds, one per finished family and one per failure, with no control
characters. The formatting functions are pure so that tests can pin them down.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from conformance import statuses

FAILING = (statuses.FAIL, statuses.ERROR, statuses.XPASS)
# Shown in the counts, worst first; PASS last so that the line reads as "what needs a look".
COUNTED = (statuses.ERROR, statuses.FAIL, statuses.XPASS, statuses.FALLBACK, statuses.XFAIL, statuses.SKIP,
           statuses.PASS)
# Too few finished tests say nothing about the rate (the first ones wait for op_db to load).
ETA_MIN_TESTS, ETA_MIN_SECONDS = 10, 5.0
MAX_FAMILY_LINES = 4
REDRAW_SECONDS = 0.25
CLEAR_BLOCK = "\x1b[{n}A\r\x1b[J"  # up n lines, to column 0, erase to the end of the screen


def duration(seconds: float) -> str:
    """42s, 3m05s, 1h02m."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def remaining(done: int, total: int, running: float) -> float | None:
    """Seconds left at the mean rate since the first test finished (`running` seconds ago: the time
    before it, workers importing torch and op_db, says nothing about the rate), None while too little
    has run to tell."""
    if done >= total:
        return 0.0
    if done < ETA_MIN_TESTS or running < ETA_MIN_SECONDS:
        return None
    return running / (done - 1) * (total - done)


def bar(done: int, total: int, width: int = 24) -> str:
    filled = width if total <= 0 else min(width, done * width // total)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def counts(found: Counter[str]) -> str:
    return " ".join(f"{status} {found[status]}" for status in COUNTED if found[status])


def overall(done: int, total: int, found: Counter[str], elapsed: float, running: float,
            bar_width: int = 24) -> str:
    """`conformance [####....] 120/480 25%  elapsed 30s, ETA 1m30s  FAIL 2 PASS 118`: the counts last, so
    that a narrow terminal cuts them rather than the estimate."""
    left = remaining(done, total, running)
    pct = 100 * done // total if total else 100
    parts = [f"conformance {bar(done, total, bar_width)} {done}/{total} {pct}%",
             f"elapsed {duration(elapsed)}, " + ("ETA --" if left is None else f"ETA {duration(left)}"), counts(found)]
    return "  ".join(part for part in parts if part)


def one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def failure(row: dict[str, Any], limit: int = 160) -> str:
    """`FAIL  add forward float32: values differ ...`, the reason cut to one line."""
    reason = row.get("message") or row.get("expectation") or "no message"
    head = f"{row['status']:<5} {row['op']} {row['variant']} {row['dtype']}"
    return one_line(f"{head}: {reason}", limit)


def family_of(nodeid: str) -> str:
    """The op family of a generated test id (`.../test_binary.py::test_add[forward-float32]` -> binary)."""
    return PurePosixPath(nodeid.split("::", 1)[0]).stem.removeprefix("test_")


@dataclass
class Family:
    total: int
    done: int = 0
    seconds: float = 0.0  # summed over its tests, whichever worker ran them
    found: Counter[str] = field(default_factory=Counter)


class Progress:
    """Counts finished tests by family and status and writes the view through `write` (a terminal
    writer's write, or a list's append in tests). `tty` picks the redrawn block over plain lines."""

    def __init__(self, write: Callable[[str], None], tty: bool, every: float = 30.0, width: int = 100,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.write, self.tty, self.every, self.width, self.clock = write, tty, every, width, clock
        self.families: dict[str, Family] = {}
        self.found: Counter[str] = Counter()
        self.finished: set[str] = set()
        self.started: float | None = None
        self.first_finished: float | None = None
        self._drawn = 0  # lines of the block on screen (tty)
        self._last_output = 0.0

    @property
    def total(self) -> int:
        return sum(f.total for f in self.families.values())

    @property
    def done(self) -> int:
        return len(self.finished)

    def start(self, nodeids: Iterable[str]) -> None:
        """The collected tests; the first call wins (each xdist worker reports the same collection)."""
        if self.started is not None:
            return
        for nodeid in nodeids:
            self.families.setdefault(family_of(nodeid), Family(0)).total += 1
        self.started = self._last_output = self.clock()
        self._emit(f"conformance: {self.total} tests in {len(self.families)} op families")

    def finish_test(self, nodeid: str, status: str, row: dict[str, Any] | None = None,
                    seconds: float = 0.0) -> None:
        """One test's end: `status` is its conformance status, `row` its result (named when it fails),
        `seconds` the time its worker spent on it."""
        if nodeid in self.finished or self.started is None:
            return
        self.finished.add(nodeid)
        self.first_finished = self.first_finished if self.first_finished is not None else self.clock()
        self.found[status] += 1
        family = self.families.setdefault(family_of(nodeid), Family(1))
        family.done += 1
        family.seconds += seconds
        family.found[status] += 1
        lines = [failure(row, self.width if self.tty else 400)] if row is not None and status in FAILING else []
        if family.done == family.total:
            bad = counts(Counter({s: n for s, n in family.found.items() if s in FAILING}))
            lines.append(f"done {family_of(nodeid)}: {family.total} tests, {duration(family.seconds)} of test time"
                         + (f" ({bad})" if bad else ""))
        self._update(lines)

    def finish(self, exit_status: int | None = None) -> None:
        """The closing line; the block is replaced by it."""
        if self.started is None:
            return
        elapsed = self.clock() - self.started
        state = "interrupted after" if exit_status == 2 else "ran"
        self._clear_block()
        self._emit(f"conformance: {state} {self.done} of {self.total} tests in {duration(elapsed)}"
                   + (f": {counts(self.found)}" if self.found else ""))

    def block(self) -> list[str]:
        """The overall line and the families in flight (started, not done)."""
        now = self.clock()
        elapsed, running = now - (self.started or now), now - (self.first_finished or now)
        lines = [overall(self.done, self.total, self.found, elapsed, running)]
        active = [(name, f) for name, f in self.families.items() if 0 < f.done < f.total]
        for name, family in active[:MAX_FAMILY_LINES]:
            lines.append(f"  {name:<12} {bar(family.done, family.total, 16)} {family.done}/{family.total}"
                         + (f"  {counts(family.found)}" if family.found else ""))
        return [line[:self.width] for line in lines] if self.tty else lines

    def _update(self, lines: list[str]) -> None:
        now = self.clock()
        if self.tty:
            if lines or now - self._last_output >= REDRAW_SECONDS or self.done == self.total:
                self._clear_block()
                for line in lines:
                    self.write(line[:self.width] + "\n")
                drawn = self.block()
                self.write("".join(line + "\n" for line in drawn))
                self._drawn, self._last_output = len(drawn), now
            return
        for line in lines:
            self.write(line + "\n")
        if now - self._last_output >= self.every:
            self.write(self.block()[0] + "\n")
            self._last_output = now

    def _clear_block(self) -> None:
        if self.tty and self._drawn:
            self.write(CLEAR_BLOCK.format(n=self._drawn))
        self._drawn = 0

    def _emit(self, line: str) -> None:
        self.write(line + "\n")
