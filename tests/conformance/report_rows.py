"""Synthetic report rows and reports for the suite's own tests."""

from typing import Any

from conformance import report


def row(op: str, dtype: str, status: str, message: str = "", variant: str = "forward", family: str = "binary",
        **extra: Any) -> dict[str, Any]:
    return {"op": op, "variant": variant, "dtype": dtype, "status": status, "samples": 2, "sample_statuses": {status: 2},
            "max_abs_error": 0.5 if status == "FAIL" else 0.0, "max_rel_error": None if status == "FAIL" else 0.0,
            "message": message, "overloads": [f"{op}.out"], "time_s": 0.1, "family": family,
            "test_id": f"test_{op}[{variant}-{dtype}]", "expectation": "", "fallbacks": {}, "tolerance": None,
            "sample_results": [], **extra}


def make_report(rows: list[dict[str, Any]], registered: tuple[str, ...] = ("aten::add.out", "aten::mm.out"),
                profile: str = "quick") -> dict[str, Any]:
    meta = {"generated": "2026-11-22T00:00:00+00:00", "profile": profile, "wall_time_s": 1.0,
            "backend": {"module": "torch_dml", "device": "dml", "torch": "2.13.0", "adapter_class": "lavapipe",
                        "adapter": {"name": "llvmpipe", "features": []}, "env": {}}}
    kinds = {"add.out": "native", "mm.out": "native", "exp.out": "fallback"}
    overloads = report.overload_table(rows, list(registered), lambda name: kinds.get(name, "composite"))
    fallbacks: dict[str, int] = {}
    for r in rows:
        for name, n in r["fallbacks"].items():
            fallbacks[name] = fallbacks.get(name, 0) + n
    untested = [{**row(o["name"], "-", "UNTESTED", family=""), "overloads": [o["name"]]}
                for o in overloads if o["registered"] and not o["exercised"]]
    return report.build(meta, rows + untested, overloads, fallbacks)
