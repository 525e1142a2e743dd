"""Expectations per adapter class, one YAML file each (expectations/<class>.yaml), plus common.yaml for
every adapter. Each entry names an OpInfo full name, its dtypes and variants ("*" for all), why, and
optionally an issue link:

    expected_failures:   the case fails today; strict: if it passes it is XPASS
    skips:               the case is not run (random output, or it would crash the adapter)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance import statuses

HERE = Path(__file__).parent / "expectations"
COMMON = "common"


@dataclass(frozen=True)
class Expectation:
    op: str
    dtypes: tuple[str, ...]
    reason: str
    issue: str = ""
    variants: tuple[str, ...] = ("*",)
    kind: str = "xfail"  # or "skip"

    def matches(self, op: str, dtype: str, variant: str = "forward") -> bool:
        return (self.op == op and ("*" in self.dtypes or dtype in self.dtypes)
                and ("*" in self.variants or variant in self.variants))


def entries(path: Path) -> list[Expectation]:
    data = yaml.safe_load(path.read_text()) or {}
    found = []
    for key, kind in (("expected_failures", "xfail"), ("skips", "skip")):
        for entry in data.get(key) or []:
            if not entry.get("op"):
                raise ValueError(f"{path}: an entry of {key} names no op")
            if not entry.get("reason"):
                raise ValueError(f"{path}: expectation for {entry.get('op')} has no reason")
            found.append(Expectation(entry["op"], tuple(entry.get("dtypes", ["*"])), entry["reason"],
                                     entry.get("issue", "") or "", tuple(entry.get("variants", ["*"])), kind))
    return found


def load(adapter_class: str, directory: Path = HERE) -> list[Expectation]:
    """The adapter class's entries, then common.yaml's."""
    found: list[Expectation] = []
    for name in (adapter_class, COMMON):
        path = directory / f"{name}.yaml"
        if path.exists():
            found.extend(entries(path))
    return found


def skip_reason(op: str, dtype: str, variant: str, expected: list[Expectation]) -> str:
    entry = next((e for e in expected if e.kind == "skip" and e.matches(op, dtype, variant)), None)
    return entry.reason if entry else ""


def apply(status: str, op: str, dtype: str, expected: list[Expectation],
          variant: str = "forward") -> tuple[str, str]:
    """The status after expectations, and the reason when one applied."""
    for entry in expected:
        if entry.kind == "xfail" and entry.matches(op, dtype, variant):
            if status in (statuses.FAIL, statuses.ERROR):
                return statuses.XFAIL, entry.reason
            if status in (statuses.PASS, statuses.FALLBACK):
                return statuses.XPASS, f"expected to fail ({entry.reason}) but passed"
    return status, ""


def _as_yaml(entry: Expectation) -> dict[str, Any]:
    return {"op": entry.op, "variants": list(entry.variants), "dtypes": list(entry.dtypes), "reason": entry.reason,
            "issue": entry.issue}


def write(path: Path, adapter_class: str, entries_: list[Expectation]) -> None:
    header = (f"# Expectations for adapter class '{adapter_class}'. Each entry needs a reason (and may link an\n"
              "# issue). Rewritten by: python -m conformance run --update-expectations\n")
    body: dict[str, Any] = {"expected_failures": [_as_yaml(e) for e in entries_ if e.kind == "xfail"]}
    skips = [_as_yaml(e) for e in entries_ if e.kind == "skip"]
    if skips:
        body["skips"] = skips
    path.write_text(header + yaml.safe_dump(body, sort_keys=False, width=120))


def update(path: Path, adapter_class: str, rows: list[dict[str, Any]]) -> list[Expectation]:
    """--update-expectations: the FAIL/ERROR/XFAIL cases of a run become the expected failures. An existing
    entry that still matches a failing case is kept as it is (its reason and issue link); entries no failing
    case matches any more (they passed: XPASS) are dropped; skips are kept. Returns what was written."""
    old = entries(path) if path.exists() else []
    kept_xfails: list[Expectation] = []
    new: list[Expectation] = []
    failing = [r for r in rows if r["status"] in (statuses.FAIL, statuses.ERROR, statuses.XFAIL)]
    for r in sorted(failing, key=lambda r: (r["op"], r["variant"], r["dtype"])):
        match = next((e for e in old if e.kind == "xfail" and e.matches(r["op"], r["dtype"], r["variant"])), None)
        if match is not None:
            if match not in kept_xfails:
                kept_xfails.append(match)
            continue
        new.append(Expectation(r["op"], (r["dtype"],), r["message"] or "fails on this adapter class", "",
                               (r["variant"],)))
    result = kept_xfails + new + [e for e in old if e.kind == "skip"]
    write(path, adapter_class, result)
    return result
