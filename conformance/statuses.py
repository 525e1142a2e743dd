"""The status vocabulary (ARCHITECTURE.md section 6) and how sample results combine."""

from __future__ import annotations

PASS = "PASS"
FAIL = "FAIL"  # wrong numbers
ERROR = "ERROR"  # raised on the device, not on the CPU
FALLBACK = "FALLBACK"  # right numbers, but only through the CPU fallback
XFAIL = "XFAIL"
XPASS = "XPASS"
SKIP = "SKIP"
UNTESTED = "UNTESTED"  # a registered overload no sample reached

# Worst first: an (op, dtype) cell shows its worst sample.
SEVERITY = [ERROR, FAIL, XPASS, FALLBACK, XFAIL, PASS, SKIP, UNTESTED]


def worst(statuses: list[str]) -> str:
    if not statuses:
        return SKIP
    return min(statuses, key=SEVERITY.index)
