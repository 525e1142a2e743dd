"""Per (op, variant, dtype) tolerance overrides, from tolerances.yaml: every entry carries its reason.
Cases without an entry use compare.DEFAULT_TOLERANCES for their dtype."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PATH = Path(__file__).parent / "tolerances.yaml"


@dataclass(frozen=True)
class Tolerance:
    ops: tuple[str, ...]
    dtypes: tuple[str, ...]
    variants: tuple[str, ...]
    rtol: float
    atol: float
    reason: str

    def matches(self, op: str, variant: str, dtype: str) -> bool:
        return (op in self.ops and ("*" in self.dtypes or dtype in self.dtypes)
                and ("*" in self.variants or variant in self.variants))

    def as_dict(self) -> dict[str, Any]:
        return {"rtol": self.rtol, "atol": self.atol, "reason": self.reason}


def load(path: Path = PATH) -> list[Tolerance]:
    if not path.exists():
        return []
    entries = (yaml.safe_load(path.read_text()) or {}).get("tolerances") or []
    found = []
    for entry in entries:
        # `op: name`, or `ops: [names]` for one reason shared by several ops.
        ops = tuple(entry["ops"]) if "ops" in entry else (entry["op"],)
        if not entry.get("reason"):
            raise ValueError(f"{path}: tolerance for {', '.join(ops)} has no reason")
        if "atol" not in entry or "rtol" not in entry:
            raise ValueError(f"{path}: tolerance for {', '.join(ops)} needs both atol and rtol")
        found.append(Tolerance(ops, tuple(entry.get("dtypes", ["*"])), tuple(entry.get("variants", ["*"])),
                               float(entry["rtol"]), float(entry["atol"]), entry["reason"]))
    return found


def lookup(op: str, variant: str, dtype: str, table: list[Tolerance]) -> Tolerance | None:
    """The first matching entry (the file lists specific entries before general ones)."""
    return next((t for t in table if t.matches(op, variant, dtype)), None)
