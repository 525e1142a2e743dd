"""Comparing a device result with the CPU result: structure, dtype, shape, then values with dtype-aware
tolerances (torch.testing's defaults, loosened where an op's data says so)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

# (rtol, atol) per dtype: torch.testing's defaults, with 16-bit floats loosened because the backend
# computes them in float32 and rounds once, where the CPU may round per step.
DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.float32: (1.3e-5, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-5, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


@dataclass
class Comparison:
    equal: bool
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    message: str = ""


def _flatten(value: object) -> list[object]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flatten(item)]
    if hasattr(value, "_fields") or (hasattr(value, "__iter__") and not isinstance(value, (torch.Tensor, str))):
        return [leaf for item in value for leaf in _flatten(item)]  # type: ignore[union-attr]
    return [value]


def compare(actual: object, expected: object, tolerance: tuple[float, float] | None = None,
            device: str | None = None) -> Comparison:
    """`tolerance` is (rtol, atol) for every floating leaf (default: DEFAULT_TOLERANCES by dtype); `device`,
    when given, is the device type every actual tensor must be on."""
    actual_leaves, expected_leaves = _flatten(actual), _flatten(expected)
    if len(actual_leaves) != len(expected_leaves):
        return Comparison(False, message=f"{len(actual_leaves)} outputs, expected {len(expected_leaves)}")
    worst_abs = worst_rel = 0.0
    for a, e in zip(actual_leaves, expected_leaves):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return Comparison(False, message=f"got {type(a).__name__}, expected a tensor")
            if a.dtype != e.dtype:
                return Comparison(False, message=f"dtype {a.dtype}, expected {e.dtype}")
            if a.shape != e.shape:
                return Comparison(False, message=f"shape {tuple(a.shape)}, expected {tuple(e.shape)}")
            if device is not None and a.device.type != device:
                return Comparison(False, message=f"the result is on {a.device}, expected {device}")
            a = a.cpu()
            if e.numel() == 0:
                continue
            rtol, atol = tolerance or DEFAULT_TOLERANCES.get(e.dtype, (0.0, 0.0))
            if e.is_floating_point() or e.is_complex():
                # In float64/complex128: isnan/isinf have no float8 kernels, and the errors need the range.
                wide = torch.complex128 if e.is_complex() else torch.float64
                a, e = a.to(wide), e.to(wide)
                diff = (a - e).abs()
                both_nan = a.isnan() & e.isnan()
                same_inf = (a == e) & e.isinf()
                diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
                scale = e.abs()
                worst_abs = max(worst_abs, float(diff.max()))
                rel = diff / scale.clamp_min(1e-30)
                worst_rel = max(worst_rel, float(torch.where(diff > 0, rel, torch.zeros_like(rel)).max()))
                inf_mismatch = (a.isinf() | e.isinf()) & (a != e)
                if (bool((diff > atol + rtol * scale).any()) or bool((a.isnan() != e.isnan()).any())
                        or bool(inf_mismatch.any())):
                    return Comparison(False, worst_abs, worst_rel, "values differ beyond tolerance")
            elif not torch.equal(a, e):
                diff = (a.to(torch.float64) - e.to(torch.float64)).abs()
                return Comparison(False, float(diff.max()), 0.0, "values differ")
        elif isinstance(e, (int, float, bool, complex)):
            if isinstance(a, torch.Tensor):
                a = a.item()
            both_nan = isinstance(e, float) and isinstance(a, float) and math.isnan(e) and math.isnan(a)
            if a != e and not both_nan:
                if isinstance(e, (int, float)) and isinstance(a, (int, float)):
                    rtol, atol = tolerance or (1.3e-6, 1e-5)
                    if abs(a - e) <= atol + rtol * abs(e):
                        continue
                return Comparison(False, message=f"{a!r} != {e!r}")
        elif e is None and a is not None:
            return Comparison(False, message=f"got {type(a).__name__}, expected None")
        elif isinstance(e, (str, torch.dtype)) and a != e:
            return Comparison(False, message=f"{a!r} != {e!r}")
    return Comparison(True, worst_abs, worst_rel)
