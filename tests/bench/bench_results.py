"""Results shaped like `python -m benchmarks` writes them, built by hand for the pure-Python tests."""

from __future__ import annotations

from typing import Any


def row(name: str, median_s: float, spread: float = 0.01, status: str = "ok", device: str = "dml",
        calls_per_sync: int = 1, **extra: Any) -> dict[str, Any]:
    line = {"suite": "elementwise", "name": name, "size": "1024", "unit": "GB/s", "device": device,
            "calls_per_sync": calls_per_sync, "status": status, "value": 1.0 / median_s, "median_s": median_s,
            "min_s": median_s, "max_s": median_s * (1 + spread), "spread": spread, "repeats": 3,
            "fallback_ops": ["aten::renorm.out"] if status == "fallback" else []}
    if status == "error":
        line = {k: line[k] for k in ("suite", "name", "size", "unit", "device", "calls_per_sync", "status")}
        line["error"] = "RuntimeError: no kernel"
    return {**line, **extra}


def result(*rows: dict[str, Any], adapter: str = "llvmpipe (LLVM 17.0.6, 256 bits) (Vulkan)",
           profile: str = "quick") -> dict[str, Any]:
    return {"generated": "2026-11-27T20:00:00+00:00", "profile": profile, "commit": "abc1234",
            "devices": {"dml": f"dml: {adapter}"}, "rows": list(rows), "wall_time_s": 1.0,
            "versions": {"torch": "2.13.0", "wgpu": "0.32.0"}}
