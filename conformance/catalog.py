"""What the suite tests: every OpInfo in op_db, the variants it has (forward, inplace, out, backward) and the
dtypes it supports on the CPU, joined with the aten overloads the backend registers. Pure data: no device."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import torch

# A name prefix says more about an op than its OpInfo class (nn.functional.relu is a UnaryUfuncInfo).
PREFIX_FAMILIES = [("nn.functional.", "nn"), ("linalg.", "linalg"), ("fft.", "spectral"), ("special.", "special"),
                   ("masked.", "masked"), ("sparse.", "sparse"), ("_refs.", "refs")]
CLASS_FAMILIES = {"UnaryUfuncInfo": "unary", "BinaryUfuncInfo": "binary", "ReductionOpInfo": "reduction",
                  "SpectralFuncInfo": "spectral", "ShapeFuncInfo": "shape", "ForeachFuncInfo": "foreach"}
DIFFERENTIABLE = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128)


@dataclass
class OpEntry:
    name: str  # OpInfo full name: "div.floor_rounding"
    base: str  # OpInfo name: "div"
    family: str
    function: str  # the generated test function: "test_div_floor_rounding"
    aten_name: str
    params: list[tuple[str, str]] = field(default_factory=list)  # (variant, dtype)
    registered: list[str] = field(default_factory=list)  # registered overloads named like the op


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def family(op: Any) -> str:
    name = getattr(op, "full_name", op.name)
    for prefix, found in PREFIX_FAMILIES:
        if name.startswith(prefix):
            return found
    return CLASS_FAMILIES.get(type(op).__name__, "other")


def variants(op: Any) -> list[str]:
    found = ["forward"]
    if op.inplace_variant is not None:
        found.append("inplace")
    if op.supports_out:
        found.append("out")
    if op.supports_autograd:
        found.append("backward")
    return found


def params(op: Any) -> list[tuple[str, str]]:
    """(variant, dtype) pairs: every CPU dtype for forward/inplace/out; differentiable ones for backward."""
    dtypes = sorted(op.supported_dtypes("cpu"), key=dtype_name)
    backward = set(op.supported_backward_dtypes("cpu")) if op.supports_autograd else set()
    found = []
    for variant in variants(op):
        for dtype in dtypes:
            if variant == "backward" and (dtype not in backward or dtype not in DIFFERENTIABLE):
                continue
            found.append((variant, dtype_name(dtype)))
    return found


def function_name(full_name: str) -> str:
    return "test_" + re.sub(r"\W", "_", full_name)


def build(op_db: list[Any], registered: list[str]) -> list[OpEntry]:
    """One entry per OpInfo full name (op_db lists a few twice), in op_db's order."""
    by_base: dict[str, list[str]] = {}
    for overload in registered:
        by_base.setdefault(overload.removeprefix("aten::").split(".")[0], []).append(overload)
    entries: dict[str, OpEntry] = {}
    functions: set[str] = set()
    for op in op_db:
        full = getattr(op, "full_name", op.name)
        if full in entries:
            continue
        function = function_name(full)
        while function in functions:
            function += "_"
        functions.add(function)
        aten = op.aten_name or op.name
        entries[full] = OpEntry(full, op.name, family(op), function, aten, params(op),
                                sorted(by_base.get(aten.split(".")[-1], [])))
    return list(entries.values())
