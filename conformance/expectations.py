"""Expected failures per adapter class, one YAML file each (expectations/<class>.yaml): every entry
names the op, the dtypes ("*" for all), and why. Strict: an expected failure that passes is XPASS."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance import statuses

HERE = Path(__file__).parent / "expectations"


@dataclass(frozen=True)
class Expectation:
    op: str
    dtypes: tuple[str, ...]
    reason: str
    issue: str = ""

    def matches(self, op: str, dtype: str) -> bool:
        return self.op == op and ("*" in self.dtypes or dtype in self.dtypes)


def load(adapter_class: str, directory: Path = HERE) -> list[Expectation]:
    path = directory / f"{adapter_class}.yaml"
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text()) or {}
    result = []
    for entry in entries.get("expected_failures", []):
        if not entry.get("reason"):
            raise ValueError(f"{path}: expectation for {entry.get('op')} has no reason")
        dtypes = entry.get("dtypes", ["*"])
        result.append(Expectation(entry["op"], tuple(dtypes), entry["reason"], entry.get("issue", "")))
    return result


def apply(status: str, op: str, dtype: str, expected: list[Expectation]) -> tuple[str, str]:
    """The status after expectations, and the reason when one applied."""
    for entry in expected:
        if entry.matches(op, dtype):
            if status in (statuses.FAIL, statuses.ERROR):
                return statuses.XFAIL, entry.reason
            if status in (statuses.PASS, statuses.FALLBACK):
                return statuses.XPASS, f"expected to fail ({entry.reason}) but passed"
    return status, ""


def write(path: Path, adapter_class: str, failures: list[tuple[str, str, str]]) -> None:
    """--update-expectations: records the current FAIL/ERROR cells (op, dtype, message) as expected."""
    entries = [{"op": op, "dtypes": [dtype], "reason": message or "fails on this adapter class", "issue": ""}
               for op, dtype, message in sorted(failures)]
    header = f"# Expected failures for adapter class '{adapter_class}'. Each entry needs a reason.\n"
    path.write_text(header + yaml.safe_dump({"expected_failures": entries}, sort_keys=False, width=120))
