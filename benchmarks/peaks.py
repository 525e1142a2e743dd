"""Nominal peak figures of known adapters, so a row can say what share of the hardware it reaches.

Each figure is the vendor's datasheet number (or the architecture whitepaper's where the datasheet omits
it), never a measured one: bandwidth rows are measured against "memory" (or "host link" for copies
between host and device), GEMM rows against their dtype's FLOP/s *without* tensor cores, since that is
what a WGSL kernel without cooperative-matrix operations can reach (the tensor-core figure is kept beside
it for reference). An adapter not in the table gets no ratio: the report says so instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BANDWIDTH = {"memory", "host link"}  # GB/s; every other figure is TFLOP/s of a dtype


@dataclass(frozen=True)
class Peaks:
    label: str
    figures: dict[str, float]          # "memory"/"host link" in GB/s; "float32", "float16"... in TFLOP/s
    tensor_tflops: dict[str, float] = field(default_factory=dict)  # dense, for reference only
    source: str = ""


# PCIe 5.0 x16 and 4.0 x16 per direction, nominal.
_PCIE5, _PCIE4 = 64.0, 32.0

# Hopper (GH100 in SXM5 form: H100 SXM and H200 share clocks and SM count; they differ in memory).
_HOPPER_SXM = {"float32": 66.9, "float16": 133.8, "bfloat16": 133.8}
_HOPPER_SXM_TENSOR = {"tf32": 494.7, "float16": 989.4, "bfloat16": 989.4}
_AMPERE_A100 = {"float32": 19.5, "float16": 78.0, "bfloat16": 39.0}
_AMPERE_A100_TENSOR = {"tf32": 156.0, "float16": 312.0, "bfloat16": 312.0}

# Most specific pattern first: the first that matches the adapter name (case-insensitive) wins.
TABLE: list[tuple[str, Peaks]] = [
    (r"H100 NVL", Peaks("NVIDIA H100 NVL", {"memory": 3900.0, "host link": _PCIE5, "float32": 60.0},
                        source="H100 NVL datasheet")),
    (r"H100 PCIe", Peaks("NVIDIA H100 PCIe", {"memory": 2000.0, "host link": _PCIE5, "float32": 51.2,
                                              "float16": 102.4, "bfloat16": 102.4},
                         {"tf32": 378.0, "float16": 756.0, "bfloat16": 756.0}, "NVIDIA H100 whitepaper")),
    (r"H100 (80GB HBM3|SXM)", Peaks("NVIDIA H100 SXM", {"memory": 3350.0, "host link": _PCIE5, **_HOPPER_SXM},
                                    _HOPPER_SXM_TENSOR, "NVIDIA H100 whitepaper, H100 SXM datasheet")),
    (r"H200 NVL", Peaks("NVIDIA H200 NVL", {"memory": 4800.0, "host link": _PCIE5, "float32": 60.0},
                        source="H200 datasheet")),
    (r"H200", Peaks("NVIDIA H200 SXM", {"memory": 4800.0, "host link": _PCIE5, **_HOPPER_SXM},
                    _HOPPER_SXM_TENSOR, "H200 datasheet (memory); compute as H100 SXM")),
    (r"A100.*80GB.*PCIe|A100.*PCIe.*80GB", Peaks("NVIDIA A100 80GB PCIe",
                                                 {"memory": 1935.0, "host link": _PCIE4, **_AMPERE_A100},
                                                 _AMPERE_A100_TENSOR, "NVIDIA A100 datasheet")),
    (r"A100.*SXM4?-80GB", Peaks("NVIDIA A100 SXM 80GB", {"memory": 2039.0, "host link": _PCIE4, **_AMPERE_A100},
                                _AMPERE_A100_TENSOR, "NVIDIA A100 datasheet")),
    (r"A100", Peaks("NVIDIA A100 40GB", {"memory": 1555.0, "host link": _PCIE4, **_AMPERE_A100},
                    _AMPERE_A100_TENSOR, "NVIDIA A100 datasheet")),
]


def lookup(adapter_name: str) -> Peaks | None:
    for pattern, peaks in TABLE:
        if re.search(pattern, adapter_name, re.IGNORECASE):
            return peaks
    return None


def figure_for(unit: str, peak: str) -> str | None:
    """Which nominal figure a row with this unit is measured against (`peak` is the case's own choice,
    empty for the default: memory bandwidth for GB/s, float32 for TFLOP/s). None: latency rows."""
    if unit == "GB/s":
        return peak if peak in BANDWIDTH else "memory"
    if unit == "TFLOP/s":
        return peak if peak and peak not in BANDWIDTH else "float32"
    return None


def share(peaks: Peaks | None, unit: str, peak: str, value: float | None) -> tuple[float | None, str | None]:
    """`value` as a fraction of the adapter's nominal figure, and that figure's name; no fraction when the
    adapter, the figure or the value is unknown. A GEMM faster than the dtype's peak without tensor cores
    used them (cuBLAS in half precision), so it is held to the tensor-core figure instead."""
    key = figure_for(unit, peak)
    if peaks is None or key is None or value is None or key not in peaks.figures:
        return None, key
    if value > peaks.figures[key] and key in peaks.tensor_tflops:
        return value / peaks.tensor_tflops[key], f"{key} tensor cores"
    return value / peaks.figures[key], key


def describe(peaks: Peaks | None, adapter_name: str) -> str:
    if peaks is None:
        return f"no nominal peak figures for {adapter_name!r}: no share-of-peak ratios"
    bandwidth = ", ".join(f"{k} {v:g} GB/s" for k, v in peaks.figures.items() if k in BANDWIDTH)
    flops = ", ".join(f"{k} {v:g}" for k, v in peaks.figures.items() if k not in BANDWIDTH)
    return f"{peaks.label}: {bandwidth}; TFLOP/s without tensor cores: {flops} ({peaks.source})"
