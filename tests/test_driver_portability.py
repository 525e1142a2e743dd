"""Kernels that give the same answer on every driver.

WGSL and Vulkan leave some things to the driver: signed `%` of negative operands (SPIR-V's OpSRem /
OpSMod), the precision of `/` (2.5 ulp) and of builtins such as `tan`, whether `a * b + c` is fused
(float64 `fma` included: lavapipe does not fuse it), whether float expressions are refolded
algebraically (NVIDIA's are, in some kernels), whether subnormals are flushed, the NaN result of
`max`-shaped selects, the subgroup size. lavapipe happens to take the exact choice in most of these
and an NVIDIA H100 does not
(../shared/gpu-runs/2026-11-23-nvidia-h100-vulkan). These tests check the kernels by design: the WGSL
a driver is handed holds none of the undefined constructs, the integer-arithmetic replacements are
exact (lavapipe's exact division is the reference), and what lavapipe can be made to vary (its
subgroup size) is varied.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch_dml
import yaml

F64 = torch_dml.has_float64_support(0)
INTS = [torch.int8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if F64 else [])


def function_bodies(source: str) -> dict[str, str]:
    """WGSL functions by name: their signature and body (a top-level `fn` runs to the next one)."""
    starts = [m.start() for m in re.finditer(r"^fn |^@compute", source, re.MULTILINE)] + [len(source)]
    bodies = {}
    for begin, end in itertools.pairwise(starts):
        match = re.match(r"(?:@compute[^\n]*\n)?fn (\w+)", source[begin:end])
        if match:
            bodies[match.group(1)] = source[begin:end]
    return bodies


def signed_remainders(source: str) -> list[str]:
    """Functions that apply `%` where an operand can be signed: any `%` in the per-element value()
    function or in a function with an i32/i64 parameter or result (index arithmetic elsewhere is u32)."""
    found = []
    for name, body in function_bodies(source).items():
        signature = body.split("{", 1)[0]
        signed = name == "value" or re.search(r"\bi(32|64)\b", signature)
        if signed and re.search(r"[^%]%[^%=]", body.split("{", 1)[1]):
            found.append(name)
    return found


def test_integer_kernels_hand_the_driver_no_signed_remainder(strict):
    # NVIDIA returned the unsigned remainder of the bit patterns for `%` on negative operands.
    for dtype in INTS:
        a = torch.tensor([-7, 7, -8, 5, 0], dtype=dtype, device="dml")
        b = torch.tensor([3, -3, -3, -2, 4], dtype=dtype, device="dml")
        torch.remainder(a, b), torch.fmod(a, b), torch.floor_divide(a, b)
        torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc")
    names = [n for n in torch_dml._C._compiled_kernels(0) if n.startswith("ew/")]
    checked = [n for n in names if re.search(r"/(remainder|fmod|floor_divide|div_floor|div_trunc)/i(32|64)>", n)]
    assert len(checked) >= 5 * 2, names
    offenders = {n: signed_remainders(torch_dml._C._compiled_kernel_source(0, n)) for n in checked}
    assert not any(offenders.values()), offenders


def test_the_remainder_lint_finds_a_signed_remainder():
    # The check above must be able to fail: this is the shape of the kernels NVIDIA got wrong.
    source = "fn remainder_(x: i32, y: i32) -> i32 {\n  var m = x % y;\n  return m;\n}\n" \
             "fn index0(i: u32) -> u32 {\n  return i % 7u;\n}\n"
    assert signed_remainders(source) == ["remainder_"]


F64_PRODUCT = re.compile(r"([\w.]+) \* f64\(([^()]+)\)|f64\(([^()]+)\) \* ([\w.]+)")


def split_constant_products(source: str) -> list[str]:
    """Functions with a statement that multiplies one value by two float64 constants, k * hi and
    k * lo of a constant split in two (Cody and Waite's reduction): a compiler may refold
    (x - k * hi) - k * lo into x - k * (hi + lo), which is the constant's rounding error times k off."""
    found = []
    for name, body in function_bodies(source).items():
        for statement in body.split(";"):
            constants: dict[str, set[str]] = {}
            for m in F64_PRODUCT.finditer(statement):
                constants.setdefault(m.group(1) or m.group(4), set()).add(m.group(2) or m.group(3))
            if any(len(c) > 1 for c in constants.values()):
                found.append(name)
                break
    return found


F64_EXP_LOG_OPS = ["exp", "expm1", "exp2", "sinh", "cosh", "tanh", "sigmoid", "erf", "erfc", "erfinv", "log", "log2",
                   "log10", "log1p", "asinh", "acosh", "atanh", "sin", "cos", "tan"]


@pytest.mark.skipif(not F64, reason="the adapter has no shader-f64")
def test_float64_kernels_hand_the_driver_no_split_constant_products(strict):
    # NVIDIA's compiler refolded exp's (x - k hi) - k lo into x - k (hi + lo) in the sinh, cosh and
    # erfc kernels: erfc 177 ulp off, sinh/cosh 2.3e-14 relative at 700 (lavapipe does not refold,
    # and it does not fuse float64 fma either, so an explicit fma is no fix). Such reductions are
    # integer arithmetic now; this keeps split constants out of every float64 kernel of the family.
    x = torch.tensor([0.5, 1.5, 700.0], dtype=torch.float64, device="dml")
    for name in F64_EXP_LOG_OPS:
        getattr(torch, name)(x.clamp(-0.9, 0.9) if name in ("erfinv", "atanh") else x)
    names = [n for n in torch_dml._C._compiled_kernels(0) if n.startswith("ew/") and "/f64>" in n]
    checked = {n for n in names if n.split("/")[1] in F64_EXP_LOG_OPS}
    assert len(checked) >= len(F64_EXP_LOG_OPS), names
    offenders = {n: split_constant_products(torch_dml._C._compiled_kernel_source(0, n)) for n in checked}
    assert not any(offenders.values()), offenders


def test_the_split_constant_lint_finds_cody_and_waite():
    # The check above must be able to fail: exp's reduction as NVIDIA refolded it.
    source = ("fn exp_d(x: f64) -> f64 {\n  let k = round_d(x * f64(1.4426950408889634));\n"
              "  let r = (x - k * f64(0.6931471803691238)) - k * f64(1.9082149292705877e-10);\n  return r;\n}\n"
              "fn log_d(x: f64) -> f64 {\n  let q = log_parts_d(x);\n"
              "  return q.x * f64(0.6931471803691238) + (q.y + f64(1.9082149292705877e-10) * q.x);\n}\n"
              "fn fine_d(x: f64, y: f64) -> f64 {\n  return x * f64(0.5) + y * f64(0.25);\n}\n")
    assert split_constant_products(source) == ["exp_d", "log_d"]


# `x * 0` written to keep NaN and -0 (softshrink's middle, as the CPU computes it): a shader compiler may
# fold it to 0, and lavapipe's did, so a row must spell such a zero out (copysign_, isnan_).
ZERO_PRODUCT = re.compile(r"\*\s*T\(0(?:\.0)?\)|T\(0(?:\.0)?\)\s*\*")


def zero_products(rows: list[dict]) -> list[str]:
    def float_expr(row: dict) -> str:
        expr = row["expr"]
        return expr.get("float", "") if isinstance(expr, dict) else expr
    return [row["name"] for row in rows if ZERO_PRODUCT.search(float_expr(row))]


def test_no_row_multiplies_by_a_literal_zero():
    rows = yaml.safe_load((Path(__file__).resolve().parent.parent / "backend" / "ops.yaml").read_text())
    assert zero_products(rows) == []


def test_the_zero_product_lint_finds_softshrinks_first_form():
    rows = [{"name": "softshrink", "expr": "select(select(a * T(0), a + s0, flt_(a, -s0)), a - s0, flt_(s0, a))"},
            {"name": "scaled", "expr": {"float": "T(0.0) * a", "int": "a"}}, {"name": "fine", "expr": "a * T(0.5)"}]
    assert zero_products(rows) == ["softshrink", "scaled"]


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_division_of_negative_operands(dtype, strict):
    info = torch.iinfo(dtype)
    g = torch.Generator().manual_seed(3)
    a = torch.randint(-100, 100, (4000,), generator=g).to(dtype)
    b = torch.randint(-13, 14, (4000,), generator=g).to(dtype)
    b[b == 0] = 5
    a[:4] = torch.tensor([info.min, info.max, info.min + 1, -1], dtype=dtype)
    da, db = a.to("dml"), b.to("dml")
    assert torch.equal(torch.remainder(da, db).cpu(), torch.remainder(a, b))
    assert torch.equal(torch.fmod(da, db).cpu(), torch.fmod(a, b))
    assert torch.equal(torch.floor_divide(da, db).cpu(), torch.floor_divide(a, b))
    assert torch.equal(torch.div(da, db, rounding_mode="trunc").cpu(), torch.div(a, b, rounding_mode="trunc"))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_division_by_zero_is_the_same_on_every_adapter(dtype, strict):
    # The CPU raises ZeroDivisionError; CUDA and dml return values. dml's are fixed (CUDA's): a
    # quotient of -1, a remainder equal to the dividend (docs/adapters.md).
    a = torch.tensor([-7, 0, 9, torch.iinfo(dtype).min], dtype=dtype, device="dml")
    zero = torch.zeros(4, dtype=dtype, device="dml")
    minus_one = torch.full((4,), -1, dtype=dtype)
    assert torch.equal(torch.floor_divide(a, zero).cpu(), minus_one)
    assert torch.equal(torch.div(a, zero, rounding_mode="trunc").cpu(), minus_one)
    assert torch.equal(torch.div(a, zero, rounding_mode="floor").cpu(), minus_one)
    assert torch.equal(torch.fmod(a, zero).cpu(), a.cpu())
    assert torch.equal(torch.remainder(a, zero).cpu(), a.cpu())
    # The one overflowing quotient wraps, as two's complement does on the CPU.
    m = torch.tensor([torch.iinfo(dtype).min], dtype=dtype)
    assert torch.equal(torch.div(m.to("dml"), torch.tensor([-1], dtype=dtype, device="dml"), rounding_mode="trunc")
                       .cpu(), m)


def f32_from_bits(bits: list[int]) -> torch.Tensor:
    return torch.tensor(struct.unpack(f"{len(bits)}f", struct.pack(f"{len(bits)}I", *bits)))


def awkward_f32(count: int, seed: int) -> torch.Tensor:
    """Any finite float32 bit pattern: subnormals, huge and tiny exponents, both signs."""
    g = torch.Generator().manual_seed(seed)
    bits = torch.randint(0, 2**32 - 1, (count,), generator=g, dtype=torch.int64)
    exponent = (bits >> 23) & 0xFF
    bits = torch.where(exponent == 0xFF, bits ^ (1 << 30), bits)  # no inf/NaN
    return f32_from_bits(bits.tolist())


def test_float32_trunc_division_is_correctly_rounded_from_the_bits(strict):
    # trunc(a / b) needs the correctly rounded quotient (6 / 3 at 2.5 ulp can be 1.9999999); the
    # quotient comes from integer long division, so it must equal the CPU's IEEE one for any pair,
    # subnormals and overflow included.
    a, b = awkward_f32(20000, 1), awkward_f32(20000, 2)
    b[b == 0] = 1.5
    a[:6] = torch.tensor([6.0, 1e-45, 3e38, -7.0, 1.0, 0.0])
    b[:6] = torch.tensor([3.0, 3.0, 1e-38, 0.5, 3.0, -2.0])
    got = torch.div(a.to("dml"), b.to("dml"), rounding_mode="trunc").cpu()
    assert torch.equal(got, torch.div(a, b, rounding_mode="trunc"))
    got = torch.div(a.to("dml"), b.to("dml"), rounding_mode="floor").cpu()
    assert torch.equal(got, torch.div(a, b, rounding_mode="floor"))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_fmod_and_remainder_with_subnormals(dtype, strict):
    # bfloat16's and float32's subnormals are float32 subnormals: a driver that flushes them made
    # bfloat16 fmod/remainder wrong on NVIDIA. The integer fmod never flushes.
    tiny = torch.finfo(dtype).tiny
    x = torch.tensor([tiny * 0.75, -tiny * 0.5, 3.0, -3.0, tiny * 5.5, 1e3, tiny], dtype=torch.float64)
    y = torch.tensor([tiny * 0.25, tiny * 0.375, tiny * 0.5, 1e-3, -tiny * 2, tiny * 3, -1.0], dtype=torch.float64)
    x, y = x.to(dtype), y.to(dtype)
    dx, dy = x.to("dml"), y.to("dml")
    assert torch.equal(torch.fmod(dx, dy).cpu(), torch.fmod(x, y))
    assert torch.equal(torch.remainder(dx, dy).cpu(), torch.remainder(x, y))


def special_pairs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Every pair of subnormals (of the dtype and, below float32, of float32), normals, signed zeros,
    infinities and NaN, as float64 values the dtype holds exactly."""
    info = torch.finfo(dtype)
    sub = info.smallest_normal * info.eps
    base = [sub, 3 * sub, sub * 2 ** 5 + sub, info.smallest_normal - sub, info.smallest_normal,
            info.smallest_normal * 1.5, info.smallest_normal * 2 + sub * 2, 1.0, 3.0, 0.5 + info.eps, 1e3, info.max]
    if dtype == torch.bfloat16:
        base += [2.0 ** -130, 2.0 ** -126 + 2.0 ** -133]
    values = torch.tensor(base + [-v for v in base] + [0.0, -0.0, math.inf, -math.inf, math.nan], dtype=torch.float64)
    values = values.to(dtype)
    x, y = torch.cartesian_prod(values, values).unbind(1)
    return x.contiguous(), y.contiguous()


def same_values(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Equal with the sign of zero, or both NaN."""
    both_nan = got.isnan() & want.isnan()
    return both_nan | ((got == want) & (got.signbit() == want.signbit()))


# Ops by torch function name and keyword arguments (they travel to a subprocess as such).
FLOAT_PAIR_OPS = {
    "fmod": ("fmod", {}), "remainder": ("remainder", {}), "floor_divide": ("floor_divide", {}),
    "div_floor": ("div", {"rounding_mode": "floor"}), "div_trunc": ("div", {"rounding_mode": "trunc"}),
    "nextafter": ("nextafter", {}), "copysign": ("copysign", {}),
    **{name: (name, {}) for name in ("eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "fmax", "fmin")},
    "clamp": ("clamp", {}), "clamp_min": ("clamp_min", {}), "heaviside": ("heaviside", {}),
    "relu_backward": ("ops.aten.threshold_backward", {"threshold": 0.0}),
    "hardtanh_backward": ("ops.aten.hardtanh_backward", {"min_val": -1e-40, "max_val": 1e-40}),
}
# The CPU's sign of an equal pair of zeros differs between its scalar and vector paths for these.
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin", "clamp", "clamp_min"}
FLOAT_UNARY_OPS = {name: (name, {}) for name in ("sign", "sgn", "abs", "neg", "signbit", "floor", "ceil", "trunc",
                                                    "round", "frac", "relu")}
FLOAT_UNARY_OPS |= {"clamp_scalar": ("clamp", {"min": -1e-40, "max": 3e-40}), "clamp_min_scalar": ("clamp_min", {"min": 1e-40}),
                    "threshold": ("threshold", {"threshold": 1e-40, "value": 5.0}), "angle": ("angle", {})}


def pair_ops(dtype: torch.dtype) -> dict[str, tuple[str, dict]]:
    # nextafter of float16 and bfloat16 runs on the CPU (tests/test_elementwise.py checks it there).
    wide = dtype in (torch.float32, torch.float64)
    return {name: op for name, op in FLOAT_PAIR_OPS.items() if wide or name != "nextafter"}


def apply(op: tuple[str, dict], *args: torch.Tensor) -> torch.Tensor:
    return functools.reduce(getattr, op[0].split("."), torch)(*args, **op[1])


def scalar_reference(op: tuple[str, dict], *args: torch.Tensor) -> torch.Tensor:
    """The CPU's result element by element: its vectorised fmod (Sleef's, also under remainder) returns
    NaN where the quotient overflows (fmod(1, 1e-45)), the scalar path C's exact fmod."""
    return torch.cat([apply(op, *(a[i:i + 1] for a in args)) for i in range(args[0].numel())])


def mismatches(got: torch.Tensor, want: torch.Tensor, op: tuple[str, dict] = ("", {})) -> torch.Tensor:
    if op[0] in ZERO_SIGN_FREE:
        return ~((got.isnan() & want.isnan()) | (got == want))
    return ~same_values(got, want) if want.is_floating_point() else got != want


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_exact_float_ops_with_subnormals_signed_zeros_and_specials(dtype, strict):
    # What the CPU gives exactly (fmod, remainder, floor and trunc division, nextafter, sign...) must
    # not depend on the driver keeping subnormals: each of these works on the bits.
    x, y = special_pairs(dtype)
    dx, dy = x.to("dml"), y.to("dml")
    for name, op in pair_ops(dtype).items():
        want, got = scalar_reference(op, x, y), apply(op, dx, dy).cpu()
        bad = mismatches(got, want, op)
        assert not bad.any(), (name, x[bad][:6], y[bad][:6], got[bad][:6], want[bad][:6])
    for name, op in FLOAT_UNARY_OPS.items():
        want, got = scalar_reference(op, x), apply(op, dx).cpu()
        bad = mismatches(got, want, op)
        assert not bad.any(), (name, x[bad][:6], got[bad][:6], want[bad][:6])


# Not exact on the CPU either: within a few ulp of libm for subnormal inputs (the result rounded to
# the dtype), from ops that take their subnormal argument apart on the bits.
APPROX_OPS = {"log": ("log", {}), "log2": ("log2", {}), "log10": ("log10", {}), "log1p": ("log1p", {}),
              "pow_0.3": ("pow", {"exponent": 0.3}), "pow_-0.3": ("pow", {"exponent": -0.3}),
              "pow_2.5": ("pow", {"exponent": 2.5}), "pow_-1": ("pow", {"exponent": -1.0}),
              "pow_1": ("pow", {"exponent": 1.0})}


def subnormal_inputs(dtype: torch.dtype) -> torch.Tensor:
    info = torch.finfo(dtype)
    sub = info.smallest_normal * info.eps
    values = [sub, 3 * sub, 33 * sub, info.smallest_normal - sub, info.smallest_normal, 0.75]
    if dtype == torch.bfloat16:
        values += [2.0 ** -130, 2.0 ** -126 + 2.0 ** -133]
    return torch.tensor(values + [-v for v in values], dtype=torch.float64).to(dtype)


def libm(name: str, value: float) -> float:
    try:
        if name.startswith("pow_"):
            exponent = float(name[4:])
            return math.nan if value < 0 and exponent != int(exponent) else math.pow(value, exponent)
        return getattr(math, name)(value)
    except ValueError:
        return math.nan
    except OverflowError:
        return math.copysign(math.inf, value)


def approx_mismatches(name: str, x: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    want = torch.tensor([libm(name, v) for v in x.double().tolist()], dtype=torch.float64).to(x.dtype).double()
    got = got.double()
    # float64 pow (and float32 pow on an adapter without float64) goes through exp2(y log2 x) and loses
    # about |y log2 x| (up to 149 and 1074 here) ulp.
    wide = {torch.float32: 1e-4, torch.float64: 1e-12} if name.startswith("pow") else {torch.float32: 5e-6,
                                                                                         torch.float64: 1e-13}
    rtol = wide.get(x.dtype, torch.finfo(x.dtype).eps)
    close = (got - want).abs() <= rtol * want.abs()
    return ~((got.isnan() & want.isnan()) | (got == want) | close)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_log_and_pow_of_subnormals(dtype, strict):
    # lavapipe's float32 log2 gave -127 for every subnormal (log 15% off, pow(1e-45, 0.3) 97 times
    # too big), and a driver that flushes them reads -inf: log2_sub_ normalises them on the bits.
    x = subnormal_inputs(dtype)
    for name, op in APPROX_OPS.items():
        got = apply(op, x.to("dml")).cpu()
        bad = approx_mismatches(name, x, got)
        assert not bad.any(), (name, x[bad], got[bad])


# lavapipe runs shaders on threads that inherit the x86 floating point mode (MXCSR) of the thread that
# creates the device: with flush-to-zero and denormals-are-zero set then, it flushes float32 (and
# float64) subnormals in arithmetic, inputs and results, as NVIDIA does with float32.
FLUSHING_SCRIPT = textwrap.dedent("""
    import functools
    import sys
    import torch
    assert torch.set_flush_denormal(True)
    import torch_dml
    (torch.ones(1, device="dml") * 2).cpu()
    torch.set_flush_denormal(False)
    tiny = torch.tensor([1e-40, 3e-40])
    flushing = (tiny.to("dml") * torch.ones(2, device="dml")).cpu()
    results = {}
    with torch_dml.strict():
        for key, ((name, kwargs), args) in torch.load(sys.argv[1]).items():
            op = functools.reduce(getattr, name.split("."), torch)
            results[key] = op(*(a.to("dml") for a in args), **kwargs).cpu()
    torch.save({"flushing": flushing, "results": results}, sys.argv[2])
""")

def on_a_flushing_driver(cases: dict, tmp_path) -> dict:
    """Each case's result on lavapipe made to flush subnormals, in a fresh process (FLUSHING_SCRIPT);
    fails when lavapipe kept them, since the test would then check nothing."""
    torch.save(cases, tmp_path / "cases.pt")
    run = subprocess.run([sys.executable, "-c", FLUSHING_SCRIPT, str(tmp_path / "cases.pt"), str(tmp_path / "out.pt")],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    out = torch.load(tmp_path / "out.pt")
    assert torch.equal(out["flushing"], torch.zeros(2)), "lavapipe kept subnormals: the test would check nothing"
    return out["results"]


def test_exact_float_ops_on_a_driver_that_flushes_subnormals(tmp_path):
    if "llvmpipe" not in torch_dml.device_name(0):
        pytest.skip("only lavapipe can be made to flush subnormals")
    cases = {}
    for dtype in FLOATS:
        x, y = special_pairs(dtype)
        cases |= {f"{name}/{dtype}": (op, (x, y)) for name, op in pair_ops(dtype).items()}
        cases |= {f"{name}/{dtype}": (op, (x,)) for name, op in FLOAT_UNARY_OPS.items()}
        cases |= {f"approx/{name}/{dtype}": (op, (subnormal_inputs(dtype),)) for name, op in APPROX_OPS.items()}
    a, b = awkward_f32(20000, 1), awkward_f32(20000, 2)
    b[b == 0] = 1.5
    cases |= {f"{name}/awkward": (FLOAT_PAIR_OPS[name], (a, b))
              for name in ("fmod", "remainder", "div_floor", "div_trunc", "nextafter")}
    results = on_a_flushing_driver(cases, tmp_path)
    for key, (op, args) in cases.items():
        if key.startswith("approx/"):
            bad = approx_mismatches(key.split("/")[1], args[0], results[key])
            assert not bad.any(), (key, args[0][bad], results[key][bad])
            continue
        want, got = scalar_reference(op, *args), results[key]
        bad = mismatches(got, want, op)
        assert not bad.any(), (key, [t[bad][:6] for t in args], got[bad][:6], want[bad][:6])


def test_square_roots_of_negative_subnormals_are_nan_on_a_flushing_driver(tmp_path):
    # A driver that flushes reads -1e-45 as -0, whose square root is -0: the sign comes from the bits.
    if "llvmpipe" not in torch_dml.device_name(0):
        pytest.skip("only lavapipe can be made to flush subnormals")
    cases = {}
    for dtype in (torch.float32, torch.bfloat16):
        tiny = torch.finfo(dtype).tiny
        x = torch.tensor([-tiny / 4, -tiny / 2, -0.0, 0.0, 4.0], dtype=dtype)
        cases |= {f"{name}/{dtype}": ((name, {}), (x,)) for name in ("sqrt", "rsqrt")}
    results = on_a_flushing_driver(cases, tmp_path)
    for key, ((name, _), (x,)) in cases.items():
        got = results[key]
        assert got[:2].isnan().all(), (key, got)
        torch.testing.assert_close(got[2:], getattr(torch, name)(x)[2:], rtol=1e-2, atol=0)


def test_max_pool2d_orders_subnormals_on_a_flushing_driver(tmp_path):
    # A driver that flushes compares 1e-45 < 3e-45 as 0 < 0: the window's maximum comes from the bits.
    if "llvmpipe" not in torch_dml.device_name(0):
        pytest.skip("only lavapipe can be made to flush subnormals")
    x = torch.tensor([[[[1e-45, 3e-45, -1e-45, -3e-45], [2e-45, -0.0, -4e-45, -2e-45]]]])
    cases = {"max_pool2d": (("nn.functional.max_pool2d", {"kernel_size": 2}), (x,))}
    results = on_a_flushing_driver(cases, tmp_path)
    want = torch.nn.functional.max_pool2d(x, 2)
    assert torch.equal(results["max_pool2d"].view(torch.int32), want.view(torch.int32)), results


def test_var_of_a_constant_row_is_exactly_zero(strict):
    # The mean of 0.1 x n is not 0.1 once the sum rounds (and a driver may divide 2.5 ulp off):
    # deviations from it were not 0. var works on deviations from the row's first value.
    for n in (7, 1000, 50000, 300001):
        row = torch.full((n,), 0.1, device="dml")
        assert row.var().item() == 0.0, n
        assert row.view(1, n).std(1).item() == 0.0, n
    rows = torch.full((3, 70000), -2.7, device="dml")
    assert torch.count_nonzero(rows.var(1)).item() == 0


def test_float32_tan_within_a_few_ulp(strict):
    # NVIDIA's builtin tan was 1.5e-4 relative off; tan_ reduces by pi/2 itself up to |x| = 8192.
    x = torch.cat([torch.linspace(-8192, 8192, 20001), torch.linspace(-1.6, 1.6, 4001),
                   torch.tensor([1e-30, -1e-6, 1.5707963, 1.5707964, 4.712389])])
    got = torch.tan(x.to("dml")).cpu().double()
    want = torch.tan(x.double())
    ulp = torch.finfo(torch.float32).eps * want.abs().clamp_min(torch.finfo(torch.float32).tiny)
    assert ((got - want).abs() / ulp).max().item() <= 4


def test_relu_keeps_nan(strict):
    # `a < 0 ? 0 : a` reads as max(a, 0) to a shader compiler, and max's NaN is the driver's choice.
    x = torch.tensor([float("nan"), -1.0, 2.0, -float("nan")])
    for dtype in FLOATS:
        got = torch.relu(x.to(dtype).to("dml")).cpu()
        assert torch.equal(got.isnan(), torch.tensor([True, False, False, True])), dtype


SUBGROUP_SCRIPT = textwrap.dedent("""
    import torch, torch_dml
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 250003, generator=g) - 0.25
    x[1, 77777] = float("nan")
    x[2, 123] = -50.0
    d = x.to("dml")
    w = x.double()
    torch.testing.assert_close(d.sum(1).cpu().double(), w.sum(1), rtol=1e-5, atol=1e-3, equal_nan=True)
    torch.testing.assert_close(d.var(1).cpu().double(), w.var(1), rtol=1e-5, atol=0, equal_nan=True)
    torch.testing.assert_close(d[0].sum().cpu().double(), w[0].sum(), rtol=1e-5, atol=1e-3)
    assert torch.equal(d.amax(1).cpu(), x.amax(1), ) or torch.equal(d.amax(1).cpu().isnan(), x.amax(1).isnan())
    assert torch.equal(d.argmax(1).cpu(), x.argmax(1)) and d[2].argmin().item() == 123
    assert torch.equal(d.amin(1).cpu().isnan(), torch.tensor([False, True, False]))
    print("ok", torch_dml._C._compiled_kernels(0))
""")


def test_reductions_do_not_depend_on_the_subgroup_size():
    # lavapipe's subgroup size follows LP_NATIVE_VECTOR_WIDTH (bits / 32: 4 or 8 lanes here); NVIDIA's
    # is 32. The reductions must be right for any size the adapter picks.
    if not torch_dml._C._has_feature(0, "subgroup"):
        pytest.skip("the adapter has no subgroup operations")
    if "llvmpipe" not in torch_dml.device_name(0):
        pytest.skip("only lavapipe's subgroup size can be chosen")
    for width in ("128", "256"):
        env = dict(os.environ, LP_NATIVE_VECTOR_WIDTH=width)
        run = subprocess.run([sys.executable, "-c", SUBGROUP_SCRIPT], env=env, capture_output=True, text=True,
                             timeout=300, check=False)
        assert run.returncode == 0, (width, run.stderr)
        assert run.stdout.startswith("ok") and "/sg" in run.stdout, (width, run.stdout)
