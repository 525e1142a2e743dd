"""The elementwise family against the CPU, in strict mode (a pass through the CPU fallback fails):
every row of backend/ops.yaml, every dtype it takes, broadcasting, CPU scalars, type promotion,
strided inputs, 0-dim and empty tensors, in-place aliasing, out= (with resizing), and tensors larger
than one storage binding."""

from __future__ import annotations

import math
import random
from pathlib import Path

import mpmath
import pytest
import torch
import torch.nn.functional as F
import torch_dml
import yaml
from conftest import DTYPES

pytestmark = pytest.mark.usefixtures("strict")

ROWS = yaml.safe_load((Path(__file__).resolve().parent.parent / "backend" / "ops.yaml").read_text())
F64 = torch_dml.has_float64_support(0)
FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if F64 else [])
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def tolerance(dtype: torch.dtype) -> dict[str, float]:
    if dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 1.6e-2, "atol": 1e-2}
    if dtype == torch.float32:
        return {"rtol": 2e-5, "atol": 2e-5}
    return {"rtol": 1e-7, "atol": 1e-7}


def close(actual: torch.Tensor, expected: torch.Tensor, **tol: float) -> None:
    assert actual.device.type == "dml"
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **(tol or tolerance(expected.dtype)))
    else:
        assert torch.equal(actual.cpu(), expected), (actual.cpu(), expected)


def values(shape, dtype, low=-4.0, high=4.0, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    lo = 0 if dtype == torch.uint8 else int(low) * 4
    return torch.randint(lo, int(high) * 4 + 1, shape, generator=g).to(dtype)


# ---- unary ---------------------------------------------------------------------------------------
# op -> (function, domain low, high, dtype classes beyond float); the domain keeps results finite and
# away from branch points so relative tolerances mean something.
UNARY = {
    "abs": (torch.abs, -4, 4, "int"), "neg": (torch.neg, -4, 4, "int"), "sign": (torch.sign, -4, 4, "int bool"),
    "sgn": (torch.sgn, -4, 4, "int bool"), "reciprocal": (torch.reciprocal, 0.5, 4, "int"),
    "sqrt": (torch.sqrt, 0, 9, "int"), "rsqrt": (torch.rsqrt, 0.25, 9, ""), "exp": (torch.exp, -5, 5, "int"),
    "exp2": (torch.exp2, -5, 5, ""), "expm1": (torch.expm1, -3, 3, ""), "log": (torch.log, 0.01, 50, "int"),
    "log2": (torch.log2, 0.01, 50, ""), "log10": (torch.log10, 0.01, 50, ""), "log1p": (torch.log1p, -0.9, 50, ""),
    "sin": (torch.sin, -6, 6, "int"), "cos": (torch.cos, -6, 6, ""), "tan": (torch.tan, -1.2, 1.2, ""),
    "asin": (torch.asin, -0.95, 0.95, ""), "acos": (torch.acos, -0.95, 0.95, ""), "atan": (torch.atan, -5, 5, ""),
    "sinh": (torch.sinh, -4, 4, ""), "cosh": (torch.cosh, -4, 4, ""), "tanh": (torch.tanh, -20, 20, "int"),
    "asinh": (torch.asinh, -5, 5, ""), "acosh": (torch.acosh, 1.1, 9, ""), "atanh": (torch.atanh, -0.9, 0.9, ""),
    "sigmoid": (torch.sigmoid, -9, 9, "int"), "logit": (torch.logit, 0.05, 0.95, ""),
    "erf": (torch.erf, -3, 3, "int"), "erfc": (torch.erfc, -3, 3, ""), "erfinv": (torch.erfinv, -0.95, 0.95, ""),
    "floor": (torch.floor, -9, 9, "int"), "ceil": (torch.ceil, -9, 9, "int"), "trunc": (torch.trunc, -9, 9, "int"),
    "round": (torch.round, -9, 9, "int"), "frac": (torch.frac, -9, 9, ""), "relu": (torch.relu, -4, 4, "int"),
    "gelu": (F.gelu, -5, 5, ""), "silu": (F.silu, -8, 8, ""), "mish": (F.mish, -8, 8, ""),
    "hardsigmoid": (F.hardsigmoid, -5, 5, ""), "hardswish": (F.hardswish, -5, 5, ""),
    "hardtanh": (F.hardtanh, -3, 3, ""), "elu": (F.elu, -4, 4, ""), "leaky_relu": (F.leaky_relu, -4, 4, ""),
    "softplus": (F.softplus, -30, 30, ""), "nan_to_num": (torch.nan_to_num, -4, 4, "int bool"),
    "isnan": (torch.isnan, -4, 4, "int bool"), "isinf": (torch.isinf, -4, 4, "int bool"),
    "isposinf": (torch.isposinf, -4, 4, "int"), "isneginf": (torch.isneginf, -4, 4, "int"),
    "signbit": (torch.signbit, -4, 4, "int"), "logical_not": (torch.logical_not, -2, 2, "int bool"),
    "bitwise_not": (torch.bitwise_not, -9, 9, "int bool"), "angle": (torch.angle, -4, 4, "int"),
}
EXTRA_UNARY = {  # rows tested with parameters of their own below
    "round_decimals", "threshold",
}


def unary_cases():
    for name, (fn, low, high, extra) in UNARY.items():
        dtypes = [] if name == "bitwise_not" else list(FLOATS)
        dtypes += INTS if "int" in extra else []
        dtypes += [torch.bool] if "bool" in extra else []
        for dtype in dtypes:
            yield pytest.param(name, fn, low, high, dtype, id=f"{name}-{str(dtype)[6:]}")


def low_precision_tolerance(name: str, dtype: torch.dtype) -> dict[str, float]:
    tol = tolerance(dtype)
    if dtype == torch.float32 and name in ("erfinv", "tan", "sinh", "cosh", "acosh", "exp", "exp2", "expm1"):
        tol = {"rtol": 1e-4, "atol": 1e-5}  # lavapipe's exp/log/tan are accurate to a few ulp only
    return tol


def test_every_floating_row_has_a_float64_kernel():
    # float64 is native wherever the adapter has shader-f64: no row may leave it to the fallback.
    missing = [row["name"] for row in ROWS if "float" in row.get("dtypes", []) and "f64" not in row["dtypes"]]
    assert not missing


@pytest.mark.parametrize("name,fn,low,high,dtype", list(unary_cases()))
def test_unary(name, fn, low, high, dtype):
    x = values((3, 67), dtype, low, high)
    expected = fn(x)
    actual = fn(x.to("dml"))
    tol = low_precision_tolerance(name, expected.dtype) if expected.dtype.is_floating_point else {}
    close(actual, expected, **tol)


@pytest.mark.parametrize("name", ["abs", "neg", "sqrt", "exp", "sigmoid", "floor", "tanh"])
def test_unary_inplace_out_and_strided(name):
    fn = UNARY[name][0]
    x = values((8, 6), torch.float32, 0.1, 4).t()  # non-contiguous
    d = x.to("dml")
    close(fn(d), fn(x))
    inplace = getattr(torch, name + "_")
    y = x.clone()
    e = d.clone()
    inplace(y)
    inplace(e)
    close(e, y)
    out = torch.empty(0, device="dml")  # resized by the op
    getattr(torch, name)(d, out=out)
    close(out, fn(x))


def test_unary_special_values():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0])
    d = x.to("dml")
    for fn in (torch.abs, torch.neg, torch.sign, torch.isnan, torch.isinf, torch.isposinf, torch.isneginf,
               torch.signbit, torch.relu, torch.floor, torch.tanh, torch.sigmoid, torch.exp, torch.sqrt,
               torch.nan_to_num, torch.logical_not, torch.expm1, torch.log1p, torch.erf):
        close(fn(d), fn(x), rtol=1e-5, atol=1e-6)


def test_round_decimals_threshold_and_parameters():
    x = values((5, 40), torch.float32, -50, 50)
    d = x.to("dml")
    for decimals in (0, 2, -1):
        close(torch.round(d, decimals=decimals), torch.round(x, decimals=decimals), rtol=1e-6, atol=1e-5)
    close(F.threshold(d, 1.5, -7.0), F.threshold(x, 1.5, -7.0))
    close(F.elu(d, alpha=0.7), F.elu(x, alpha=0.7))
    close(F.leaky_relu(d, 0.2), F.leaky_relu(x, 0.2))
    close(F.softplus(d, beta=2.0, threshold=10.0), F.softplus(x, beta=2.0, threshold=10.0))
    close(F.hardtanh(d, -2.0, 3.0), F.hardtanh(x, -2.0, 3.0))
    close(F.gelu(d, approximate="tanh"), F.gelu(x, approximate="tanh"))
    close(torch.logit(d.sigmoid(), eps=0.1), torch.logit(x.sigmoid(), eps=0.1))
    y = torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0])
    close(torch.nan_to_num(y.to("dml"), nan=1.0, posinf=2.0, neginf=-3.0), torch.nan_to_num(y, 1.0, 2.0, -3.0))
    h = y.half()
    close(torch.nan_to_num(h.to("dml")), torch.nan_to_num(h))


# ---- binary --------------------------------------------------------------------------------------
BINARY = {
    "add": (torch.add, "float int bool"), "sub": (torch.sub, "float int"), "mul": (torch.mul, "float int bool"),
    "div": (torch.div, "float int"), "floor_divide": (torch.floor_divide, "float int"),
    "remainder": (torch.remainder, "float int"), "fmod": (torch.fmod, "float int"), "pow": (torch.pow, "float"),
    "atan2": (torch.atan2, "float int"), "hypot": (torch.hypot, "float"), "copysign": (torch.copysign, "float int"),
    "maximum": (torch.maximum, "float int bool"), "minimum": (torch.minimum, "float int bool"),
    "fmax": (torch.fmax, "float int bool"), "fmin": (torch.fmin, "float int bool"), "xlogy": (torch.xlogy, "float"),
    "heaviside": (torch.heaviside, "float int bool"), "nextafter": (torch.nextafter, "f32 f64"),
    "logaddexp": (torch.logaddexp, "float"), "logaddexp2": (torch.logaddexp2, "float"),
    "bitwise_and": (torch.bitwise_and, "int bool"), "bitwise_or": (torch.bitwise_or, "int bool"),
    "bitwise_xor": (torch.bitwise_xor, "int bool"), "bitwise_left_shift": (torch.bitwise_left_shift, "int"),
    "bitwise_right_shift": (torch.bitwise_right_shift, "int"), "logical_and": (torch.logical_and, "float int bool"),
    "logical_or": (torch.logical_or, "float int bool"), "logical_xor": (torch.logical_xor, "float int bool"),
    "eq": (torch.eq, "float int bool"), "ne": (torch.ne, "float int bool"), "lt": (torch.lt, "float int bool"),
    "le": (torch.le, "float int bool"), "gt": (torch.gt, "float int bool"), "ge": (torch.ge, "float int bool"),
}
BACKWARD = {
    "threshold_backward": lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.5),
    "gelu_backward": lambda g, x: torch.ops.aten.gelu_backward(g, x),
    "sigmoid_backward": lambda g, x: torch.ops.aten.sigmoid_backward(g, x.sigmoid()),
    "tanh_backward": lambda g, x: torch.ops.aten.tanh_backward(g, x.tanh()),
    "hardtanh_backward": lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -1.0, 1.0),
    "leaky_relu_backward": lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.1, False),
    "softplus_backward": lambda g, x: torch.ops.aten.softplus_backward(g, x, 1.0, 20.0),
    "hardsigmoid_backward": lambda g, x: torch.ops.aten.hardsigmoid_backward(g, x),
    "hardswish_backward": lambda g, x: torch.ops.aten.hardswish_backward(g, x),
    "logit_backward": lambda g, x: torch.ops.aten.logit_backward(g, (x / 3).sigmoid(), 0.05),
    "logit_backward, no eps": lambda g, x: torch.ops.aten.logit_backward(g, x / 3),  # NaN outside [0, 1]
    "elu_backward": lambda g, x: torch.ops.aten.elu_backward(g, 0.7, 1.1, 0.9, False, x),
    "elu_backward, of the result": lambda g, x: torch.ops.aten.elu_backward(g, 0.7, 1.1, 0.9, True, F.elu(x, 0.7)),
}


def binary_inputs(name, dtype):
    a = values((4, 33), dtype, -4, 4, seed=1)
    b = values((4, 33), dtype, -4, 4, seed=2)
    if name in ("div", "floor_divide", "remainder", "fmod") and not dtype.is_floating_point:
        b = torch.where(b == 0, torch.ones_like(b), b)
    if name == "pow":
        a = a.abs() + 0.5
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        b = b.abs() % 9
    if name == "xlogy":
        b = b.abs() + 0.1
    return a, b


def binary_cases():
    for name, (fn, classes) in BINARY.items():
        dtypes = [torch.float32] if "f32" in classes.split() else []
        dtypes += [torch.float64] if "f64" in classes.split() and F64 else []
        dtypes += FLOATS if "float" in classes.split() else []
        dtypes += INTS if "int" in classes else []
        dtypes += [torch.bool] if "bool" in classes else []
        for dtype in dtypes:
            yield pytest.param(name, fn, dtype, id=f"{name}-{str(dtype)[6:]}")


@pytest.mark.parametrize("name,fn,dtype", list(binary_cases()))
def test_binary(name, fn, dtype):
    a, b = binary_inputs(name, dtype)
    expected = fn(a, b)
    tol = {"rtol": 1e-4, "atol": 1e-5} if expected.dtype == torch.float32 and name in ("pow", "logaddexp2") else {}
    close(fn(a.to("dml"), b.to("dml")), expected, **tol)


@pytest.mark.parametrize("name", list(BACKWARD))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_activation_backward(name, dtype):
    g = values((6, 40), dtype, -2, 2, seed=3)
    x = values((6, 40), dtype, -4, 4, seed=4)
    fn = BACKWARD[name]
    close(fn(g.to("dml"), x.to("dml")), fn(g, x))


def test_alpha_scalars_and_promotion():
    a = values((3, 5), torch.float32, seed=5)
    i = values((3, 5), torch.int32, seed=6)
    h = values((3, 5), torch.float16, seed=7)
    da, di, dh = a.to("dml"), i.to("dml"), h.to("dml")
    close(torch.add(da, da, alpha=2.5), torch.add(a, a, alpha=2.5))
    close(torch.sub(di, di * 3, alpha=2), torch.sub(i, i * 3, alpha=2))
    close(da + 3, a + 3)
    close(di + 3, i + 3)
    close(di * 2.5, i * 2.5)          # int tensor * float scalar -> float32
    close(di / 2, i / 2)              # true division promotes
    close(di + da, i + a)             # int32 + float32 -> float32
    close(dh + da, h + a)             # float16 + float32 -> float32
    close(dh * 1e-3, h * 1e-3)        # a double scalar does not promote float16
    close(da + torch.tensor(2.0), a + torch.tensor(2.0))  # 0-dim CPU tensor: a scalar operand
    close(2 ** da, 2 ** a)            # pow.Scalar
    close(da ** 2, a ** 2)
    close(di ** 3, i ** 3)
    close(torch.div(da, 0.7, rounding_mode="floor"), torch.div(a, 0.7, rounding_mode="floor"))
    close(torch.div(di, 4, rounding_mode="trunc"), torch.div(i, 4, rounding_mode="trunc"))
    close(torch.div(di, -4, rounding_mode="floor"), torch.div(i, -4, rounding_mode="floor"))
    close(da > 0.5, a > 0.5)
    close(di == 3, i == 3)


def test_broadcast_strided_zero_dim_and_empty():
    a = values((4, 1, 5), torch.float32, seed=8)
    b = values((3, 1), torch.float32, seed=9)
    close(a.to("dml") * b.to("dml"), a * b)
    x = values((6, 8), torch.float32, seed=10)
    y = values((8, 6), torch.float32, seed=11)
    close(x.to("dml").t()[::2] + y.to("dml")[::2], x.t()[::2] + y[::2])   # transposed and stepped views
    s = torch.tensor(3.5)
    close(s.to("dml") * x.to("dml"), s * x)                                # 0-dim dml tensor broadcasts
    close(s.to("dml") + s.to("dml"), s + s)                                # 0-dim result
    e = torch.empty(0, 3)
    close(e.to("dml") + 1, e + 1)
    packed = values((5, 7), torch.int8, seed=12)
    close(packed.to("dml").t() + 1, packed.t() + 1)                        # strided packed operand
    out = torch.zeros(7, 10, dtype=torch.int8)
    d_out = out.to("dml")
    torch.add(packed.t(), 1, out=out[:, ::2])
    torch.add(packed.to("dml").t(), 1, out=d_out[:, ::2])                   # strided packed output
    close(d_out, out)


def test_inplace_aliasing_and_out():
    x = values((5, 6), torch.float32, seed=13)
    d = x.to("dml")
    y = x.clone()
    d.add_(d)
    y.add_(y)
    close(d, y)
    d.mul_(d[0].clone())  # broadcast operand
    y.mul_(y[0].clone())
    close(d, y)
    with pytest.raises(RuntimeError, match="single memory location"):
        d[1:].add_(d[:-1])  # partial overlap: refused as on the CPU
    out = torch.empty(2, device="dml")
    torch.sub(d, 1.0, out=out)  # out resized from (2,)
    close(out, y - 1)
    torch.mul(d, d, out=d)      # out is an input
    y = y * y
    close(d, y)
    b = torch.zeros(9, dtype=torch.bool)
    db = b.to("dml")
    db[1:8].logical_or_(torch.tensor([True, False] * 3 + [True]).to("dml"))
    b[1:8].logical_or_(torch.tensor([True, False] * 3 + [True]))
    close(db, b)
    with pytest.raises(RuntimeError, match="can't be cast|result type"):
        torch.add(d, d, out=torch.empty(30, dtype=torch.int32, device="dml"))


def test_nan_semantics():
    nan = float("nan")
    a = torch.tensor([nan, 1.0, nan, -2.0, 0.0, 3.0])
    b = torch.tensor([1.0, nan, nan, -3.0, -0.0, 3.0])
    da, db = a.to("dml"), b.to("dml")
    for fn in (torch.maximum, torch.minimum, torch.fmax, torch.fmin, torch.eq, torch.ne, torch.lt, torch.le,
               torch.gt, torch.ge, torch.copysign, torch.hypot, torch.logaddexp, torch.atan2):
        close(fn(da, db), fn(a, b))
    inf = float("inf")
    y = torch.tensor([0.0, 0.0, -0.0, -0.0, inf, inf, -inf, 1.0])
    x = torch.tensor([0.0, -0.0, 0.0, -0.0, inf, -inf, inf, 0.0])
    close(torch.atan2(y.to("dml"), x.to("dml")), torch.atan2(y, x))  # points WGSL's atan2 leaves undefined
    close(torch.clamp(da, -1.0, 2.0), torch.clamp(a, -1.0, 2.0))


# ---- ternary and glue -----------------------------------------------------------------------------
def test_bool_tensor_bounds_of_clamp_min_and_clamp_max():
    a, b = torch.tensor([True, False, True, False]), torch.tensor([True, True, False, False])
    assert torch.equal(torch.clamp_min(a.to("dml"), b.to("dml")).cpu(), torch.clamp_min(a, b))
    assert torch.equal(torch.clamp_max(a.to("dml"), b.to("dml")).cpu(), torch.clamp_max(a, b))


@pytest.mark.parametrize("dtype", [t for t in DTYPES if t != torch.bool], ids=str)
def test_clamp_where_masked_fill(dtype):
    x = values((6, 7), dtype, -8, 8, seed=14)
    d = x.to("dml")
    close(torch.clamp(d, -3, 5), torch.clamp(x, -3, 5))
    close(torch.clamp(d, min=2), torch.clamp(x, min=2))
    close(torch.clamp(d, max=2), torch.clamp(x, max=2))
    close(d.clamp_min(1), x.clamp_min(1))
    close(d.clamp_max(1), x.clamp_max(1))
    lo, hi = values((6, 1), dtype, -8, 0, seed=15), values((1, 7), dtype, 0, 8, seed=16)
    close(torch.clamp(d, lo.to("dml"), hi.to("dml")), torch.clamp(x, lo, hi))
    lo0, hi0 = torch.tensor(-2, dtype=dtype), torch.tensor(3, dtype=dtype)  # two 0-dim CPU bounds
    close(torch.clamp(d, lo0, hi0), torch.clamp(x, lo0, hi0))
    y = x.clone()
    e = d.clone()
    y.clamp_(-1, 1)
    e.clamp_(-1, 1)
    close(e, y)
    cond = values((6, 7), torch.bool, seed=17)
    other = values((6, 7), dtype, seed=18)
    close(torch.where(cond.to("dml"), d, other.to("dml")), torch.where(cond, x, other))
    close(torch.where(cond.to("dml"), d, 0), torch.where(cond, x, 0))
    y = x.clone()
    e = d.clone()
    y.masked_fill_(cond, 3)
    e.masked_fill_(cond.to("dml"), 3)
    close(e, y)
    row_mask = cond[0]
    close(d.masked_fill(row_mask.to("dml"), torch.tensor(2).to("dml")), x.masked_fill(row_mask, torch.tensor(2)))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_lerp_addcmul_addcdiv(dtype):
    a, b, c = (values((5, 9), dtype, -3, 3, seed=s) for s in (19, 20, 21))
    c = c.abs() + 0.5
    da, db, dc = a.to("dml"), b.to("dml"), c.to("dml")
    close(torch.lerp(da, db, 0.3), torch.lerp(a, b, 0.3))
    close(torch.lerp(da, db, dc / 4), torch.lerp(a, b, c / 4))
    close(torch.addcmul(da, db, dc, value=0.5), torch.addcmul(a, b, c, value=0.5))
    close(torch.addcdiv(da, db, dc, value=-2), torch.addcdiv(a, b, c, value=-2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                                   torch.int16, torch.uint8] + ([torch.float64] if F64 else []), ids=str)
def test_arange(dtype):
    for args in ((10,), (2, 50, 3), (20, 1, -2)):
        close(torch.arange(*args, dtype=dtype, device="dml"), torch.arange(*args, dtype=dtype))
    if dtype.is_floating_point:
        for args in ((0, 1, 0.1), (-1.5, 2.25, 0.25), (5, -5, -0.7)):
            close(torch.arange(*args, dtype=dtype, device="dml"), torch.arange(*args, dtype=dtype))
    out = torch.empty(3, dtype=dtype, device="dml")
    torch.arange(7, out=out)  # resized
    close(out, torch.arange(7, dtype=dtype))
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0, device="dml")


def test_larger_than_one_binding():
    # 48M float32 elements = 192 MiB, beyond lavapipe's 128 MiB storage binding.
    n = 48 * 1024 * 1024
    x = torch.arange(n, dtype=torch.float32) % 1000
    d = x.to("dml")
    r = (d * 2 + 1).cpu()
    assert torch.equal(r, x * 2 + 1)


def test_every_overload_in_the_table_is_registered():
    for row in ROWS:
        for overload in row.get("overloads", []):
            name = "aten::" + overload
            assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"), overload


def test_every_row_is_tested():
    tested = set(UNARY) | set(BINARY) | set(BACKWARD) | EXTRA_UNARY
    tested |= {"native_dropout_backward", "arange"}  # tests/test_loss.py: dropout's backward, native
    tested |= {"lerp", "lerp_scalar", "addcmul", "addcdiv", "where", "clamp", "clamp_min", "clamp_max",
               "clamp_scalar", "clamp_min_scalar", "clamp_max_scalar",
               "div_trunc", "div_floor", "pow_scalar"}
    # tests/test_activation_ops.py and tests/test_loss.py, against the CPU in strict mode.
    tested |= {"rsub", "log_sigmoid", "log_sigmoid_backward", "glu", "glu_backward_first", "glu_backward_second",
               "prelu", "prelu_backward_input", "prelu_backward_weight", "smooth_l1", "smooth_l1_backward", "huber",
               "huber_backward", "binary_cross_entropy", "binary_cross_entropy_backward", "binary_cross_entropy_domain"}
    tested |= {"hardshrink", "softshrink", "shrink_backward"}  # tests/test_composed_ops.py
    missing = [row["name"] for row in ROWS if row["name"] not in tested]
    assert not missing, f"rows of ops.yaml without a test here: {missing}"


def test_strict_mode_catches_a_dtype_without_kernel():
    # A complex tensor has no elementwise kernel: exp must reach the fallback, which strict mode refuses.
    z = torch.ones(3, dtype=torch.complex64)
    with pytest.raises(NotImplementedError, match="exp"):
        torch.exp(z.to("dml"))


def test_complex_inputs_reach_the_fallback_untouched():
    # abs / angle of a complex tensor return a real tensor: ATen's CPU kernels build their own iterators for
    # that, so the native wrappers must hand such calls over before building theirs.
    z = torch.tensor([3 + 4j, -1 - 1j, 0j], dtype=torch.complex64)
    torch_dml.reset_fallback_counts()
    with torch_dml.strict(False):
        close(torch.abs(z.to("dml")), torch.abs(z))
        close(torch.angle(z.to("dml")), torch.angle(z))
        close(z.to("dml") * 2, z * 2)
    assert torch_dml.fallback_counts()


# ---- the vec4 path ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["aligned", "aligned offset", "odd offset", "tail", "broadcast", "int inputs"])
def test_dense_32bit_operands_vec4_and_fallback_layouts(case):
    base_a, base_b = values((4104,), torch.float32, seed=1), values((4104,), torch.float32, seed=2)
    slices = {"aligned": (slice(0, 4096), slice(0, 4096)), "aligned offset": (slice(8, 4104), slice(4, 4100)),
              "odd offset": (slice(1, 4097), slice(3, 4099)), "tail": (slice(0, 4099), slice(0, 4099))}
    if case in slices:
        sa, sb = slices[case]
        a, b, da, db = base_a[sa], base_b[sb], base_a.to("dml")[sa], base_b.to("dml")[sb]
    elif case == "broadcast":
        a, b = base_a[:4096].view(64, 64), base_b[:64]
        da, db = a.to("dml"), b.to("dml")
    else:
        a, b = values((4096,), torch.int32, seed=3), values((4096,), torch.int32, seed=4)
        da, db = a.to("dml"), b.to("dml")
    close(torch.atan2(da, db), torch.atan2(a, b))
    close(da * db - 1, a * b - 1)


def test_vec4_path_mixed_dtypes_and_in_place_aliasing():
    a = values((1024,), torch.int32, seed=5)
    b = values((1024,), torch.float32, seed=6)
    da, db = a.to("dml"), b.to("dml")
    close(da + db, a + b)        # int32 and float32 operands, float32 result
    close(da * 3, a * 3)          # CPU scalar as a uniform
    db.mul_(db)                  # output aliases both inputs
    b.mul_(b)
    close(db, b)
    out = torch.empty(1024, device="dml")
    torch.add(db, db, alpha=0.5, out=out)
    close(out, torch.add(b, b, alpha=0.5))


def test_which_layouts_take_the_vec4_kernel():
    # In a fresh process, so the kernels compiled are exactly those these ops need.
    from helpers import run_python
    result = run_python("""
import torch, torch_dml
def kernels(fn):
    before = set(torch_dml._C._compiled_kernels(0))
    fn()
    torch_dml.synchronize()
    return sorted(n for n in set(torch_dml._C._compiled_kernels(0)) - before if n.startswith("ew/"))
x = torch.rand(4104, device="dml")
i = torch.arange(4096, device="dml", dtype=torch.int32)
print(kernels(lambda: x[4:4100] + x[8:]))
print(kernels(lambda: x[1:4097] - x[:4096]))
print(kernels(lambda: x[:4097] * x[:4097]))
print(kernels(lambda: x[:4096] * i))
h = x.half()
print(kernels(lambda: h[4:4100] + h[:4096]))
print(kernels(lambda: h[2:4098] - h[:4096]))
print(kernels(lambda: torch.lt(x[:4096], h[:4096])))
""")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()[-7:]
    assert lines == [
        "['ew/add/f32>f32,f32,f32/r1/plain/v4']",    # aligned, nonzero offsets
        "['ew/sub/f32>f32,f32,f32/r1/plain']",       # misaligned offset
        "['ew/mul/f32>f32,f32,f32/r1/plain']",       # 4097 elements: no whole groups of four
        "['ew/mul/f32>f32,f32,i32/r1/plain/v4']",    # int32 operand converted per lane
        "['ew/add/f32>f16,f16,f16/r1/word/v4']",     # 16-bit: two words per thread
        "['ew/sub/f32>f16,f16,f16/r1/word']",        # offset 2: words shared with neighbours
        "['ew/lt/f32>bool,f32,f16/r1/word/v4']",     # bool result: one word per thread
    ], lines


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int16, torch.uint8, torch.int8, torch.bool],
                         ids=str)
def test_packed_dtypes_four_per_thread_leave_neighbours_alone(dtype):
    base = values((64,), dtype, seed=30)
    other = values((64,), dtype, seed=31)
    d, o = base.to("dml"), other.to("dml")
    # In place on an aligned slice: the words it owns are whole; the elements around it keep their values.
    expected = base.clone()
    view, dview = expected[8:24], d[8:24]
    if dtype == torch.bool:
        view.logical_xor_(other[:16])
        dview.logical_xor_(o[:16])
    else:
        view.mul_(other[:16])
        dview.mul_(o[:16])
    close(d, expected)
    close(torch.where(o[:32] != o[32:], d[:32], d[32:]), torch.where(other[:32] != other[32:], expected[:32], expected[32:]))
    close(d[4:36] == o[8:40], expected[4:36] == other[8:40])


# ---- transcendentals near 0, at the edges of their range, and float64 ------------------------------
EDGE = [0.0, -0.0, 1e-30, 1e-12, 1e-6, -1e-6, 3e-5, 1e-3, 0.3, -0.29, 0.41, -0.5, 0.9, -0.9, 1.0, 2.5, -3.7, 20.0,
        21.0, -50.0, 88.0, 89.0, 100.0, 700.0, 710.0, -745.0, -746.0, 1e9, 1e300, float("inf"), float("-inf"),
        float("nan")]
EDGE_OPS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid", "sinh", "cosh", "tanh", "asinh",
            "acosh", "atanh", "atan"]


@pytest.mark.parametrize("dtype", [torch.float32] + ([torch.float64] if F64 else []), ids=str)
@pytest.mark.parametrize("name", EDGE_OPS)
def test_transcendentals_keep_relative_precision_near_zero_and_at_the_edges(name, dtype):
    # Relative error, so tiny arguments count (cancellation in (1 + x) - 1 or (e^x - e^-x) / 2 gave
    # percent-level errors there); infinities, NaN and signed zeros must match exactly.
    x = torch.tensor(EDGE, dtype=torch.float64).to(dtype)
    if name == "acosh":
        x = x.abs() + 1
    if name in ("sinh", "cosh"):
        x = x[x.abs() != 710]  # e^710 / 2 is finite; the CPU reference overflows computing e^710 first
    got = getattr(torch, name)(x.to("dml")).cpu()
    want = getattr(torch, name)(x.double()).to(dtype)
    finite = torch.isfinite(want) & (want != 0)
    assert torch.equal(torch.isnan(got), torch.isnan(want)), (x, got, want)
    assert torch.equal(got[~finite & ~torch.isnan(want)], want[~finite & ~torch.isnan(want)]), (x, got, want)
    rel = ((got[finite].double() - want[finite].double()).abs() / want[finite].double().abs()).max().item()
    # float32 builtins may err by (3 + 2|x|) ulp (WGSL's exp bound); ours stay within a few ulp.
    assert rel < (2e-5 if dtype == torch.float32 else 1e-14), (name, rel)


@pytest.mark.skipif(not F64, reason="the adapter has no shader-f64")
def test_float64_scalars_reach_the_kernel_exactly():
    # A scalar sent as two float32 halves (48 bits) moved 1/3 off itself: x <= 1/3 failed at x = 1/3.
    x = torch.tensor([1 / 3, 0.34, 0.2, -1 / 3, 1e-300, 1e300], dtype=torch.float64)
    d = x.to("dml")
    assert torch.equal(F.threshold(d, 1 / 3, 1 / 7).cpu(), F.threshold(x, 1 / 3, 1 / 7))
    assert torch.equal((d * (1 / 3)).cpu(), x * (1 / 3))
    assert torch.equal(d.clamp(-1 / 3, 1 / 3).cpu(), x.clamp(-1 / 3, 1 / 3))


@pytest.mark.skipif(not F64, reason="the adapter has no shader-f64")
def test_float64_rounding_beyond_two_to_the_31():
    # lavapipe's float64 trunc and round returned their argument unchanged from 2^31 up.
    x = torch.tensor([833333333333333.375, 2.5e9 + 0.5, -3e12 - 0.25, 4.5e15 + 0.5, 4503599627370495.5, 2.0**52 + 1,
                      2.5, -2.5, 0.5, -0.3, -0.0, 1e300, math.inf, -math.inf, 1e-310], dtype=torch.float64)
    for fn in (torch.trunc, torch.round, torch.floor, torch.ceil, torch.frac):
        got, want = fn(x.to("dml")).cpu(), fn(x)  # frac(inf) is NaN
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
        assert torch.equal(got.signbit(), want.signbit()), (fn.__name__, got, want)


@pytest.mark.parametrize("dtype", [torch.float32] + ([torch.float64] if F64 else []), ids=str)
def test_fmod_is_exact_like_c(dtype):
    # x % y in WGSL is x - y * trunc(x / y): 1e-11 relative off for float64 quotients near 1e5. fmod's
    # result is always representable, and C's fmod (math.fmod) gives it exactly.
    g = torch.Generator().manual_seed(17)
    x = torch.randn(4000, generator=g, dtype=torch.float64) * 1000
    y = torch.randn(4000, generator=g, dtype=torch.float64) * 0.01
    big = torch.tensor([2.5e15, 3e38, -1e30, 7.0, 1e22], dtype=torch.float64)
    small = torch.tensor([3.0, 3.0, 0.1, -1e-30, 123456.789], dtype=torch.float64)
    x, y = torch.cat([x, big]).to(dtype), torch.cat([y, small]).to(dtype)
    got = torch.fmod(x.to("dml"), y.to("dml")).cpu()
    want = torch.tensor([math.fmod(a, b) for a, b in zip(x.tolist(), y.tolist())], dtype=dtype)
    assert torch.equal(got, want)
    assert torch.equal(torch.remainder(x.to("dml"), y.to("dml")).cpu(), torch.remainder(x, y))
    assert torch.equal(torch.div(x.to("dml"), y.to("dml"), rounding_mode="floor").cpu(),
                       torch.div(x, y, rounding_mode="floor"))


@pytest.mark.parametrize("dtype", [torch.float32] + ([torch.float64] if F64 else []), ids=str)
def test_elu_keeps_relative_precision_near_zero(dtype):
    # alpha * (exp(x) - 1) was 6x off at x = -1e-8 in float32; expm1 keeps it.
    x = torch.tensor([-1e-8, -1e-5, -0.3, -3.0, 0.5], dtype=dtype)
    got, want = F.elu(x.to("dml"), 0.7).cpu(), F.elu(x.double(), 0.7).to(dtype)
    torch.testing.assert_close(got, want, rtol=2e-6 if dtype == torch.float32 else 1e-15, atol=0)


def ulp_error(got: float, want) -> float:
    """|got - want| in units of the float64 ulp at want (want an mpmath number)."""
    nearest = float(want)
    if math.isinf(nearest) or nearest == 0:
        return 0.0 if got == nearest else math.inf
    return float(abs(mpmath.mpf(got) - want) / math.ulp(nearest))


def spread(seed: int, count: int, low: float, high: float, log: bool = False) -> list[float]:
    rng = random.Random(seed)
    if log:
        return [rng.choice((-1, 1)) * 10 ** rng.uniform(low, high) for _ in range(count)]
    return [rng.uniform(low, high) for _ in range(count)]


# Arguments near multiples of pi/2, down to the closest float64 there is (6381956970095103 * 2^797,
# 2^-61 from one), need the 2/pi bits far past double precision; the tails of erfc and erfinv need
# relative precision where 1 - erf has none left.
F64_ACCURACY = {
    "sin": (torch.sin, mpmath.sin, 2),
    "cos": (torch.cos, mpmath.cos, 2),
    "tan": (torch.tan, mpmath.tan, 4),
    "erf": (torch.erf, mpmath.erf, 3),
    "erfc": (torch.erfc, mpmath.erfc, 5),
    "erfinv": (torch.erfinv, mpmath.erfinv, 4),
}
TRIG_POINTS = (spread(1, 300, -10, 10) + spread(2, 300, -8, 308, log=True)
               + [6381956970095103 * 2.0 ** 797, 5.319372648326541e255, 1e22, math.pi / 2, math.pi, 2 * math.pi,
                  0.7853981633974483, 0.7853981633974484, 2.0 ** -27, 2.0 ** -26, 1e-310])
F64_POINTS = {
    "sin": TRIG_POINTS, "cos": TRIG_POINTS, "tan": TRIG_POINTS,
    "erf": spread(3, 400, -7, 7) + spread(4, 100, -300, 0, log=True) + [0.5, -0.5, 4.0, 6.0],
    "erfc": spread(5, 400, -7, 27.5) + [0.5, 1.0, 2.0, 4.0, 4.000000000000001, 26.5, 27.2],
    "erfinv": spread(6, 300, -1, 1) + [1 - 10 ** e for e in spread(7, 150, -16, -1)] + spread(8, 50, -300, -1, log=True)
              + [1 - 2.0 ** -53, 0.5, -0.5],
}


@pytest.mark.skipif(not F64, reason="the adapter has no shader-f64")
@pytest.mark.parametrize("name", list(F64_ACCURACY))
def test_float64_transcendentals_within_a_few_ulp(name):
    fn, reference, bound = F64_ACCURACY[name]
    points = F64_POINTS[name]
    got = fn(torch.tensor(points, dtype=torch.float64, device="dml")).cpu().tolist()
    with mpmath.workprec(300):
        errors = [(ulp_error(g, reference(mpmath.mpf(x))), x) for g, x in zip(got, points)]
    assert max(errors) <= (bound, math.inf), (name, max(errors))
    special = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan], dtype=torch.float64)
    if name == "erfinv":
        special = torch.tensor([0.0, -0.0, 1.0, -1.0, 1.5, math.nan], dtype=torch.float64)
    want = fn(special)
    got = fn(special.to("dml")).cpu()
    assert torch.equal(torch.isnan(got), torch.isnan(want)), (special, got, want)
    finite = ~torch.isnan(want)
    assert torch.equal(got[finite], want[finite]) and torch.equal(got[finite].signbit(), want[finite].signbit()), (got, want)


@pytest.mark.parametrize("dtype", [torch.float32] + ([torch.float64] if F64 else []), ids=str)
def test_atan2_pow_and_friends_at_special_points(dtype):
    inf, nan = float("inf"), float("nan")
    v = torch.tensor([1.0, -1.0, 0.0, -0.0, inf, -inf, 2.0, -2.0, 0.5, 1e-300, nan], dtype=torch.float64).to(dtype)
    rtol, atol = (1e-14, 1e-15) if dtype == torch.float64 else (2e-6, 1e-7)
    a, b = torch.meshgrid(v, v, indexing="ij")
    for fn in (torch.atan2, torch.pow, torch.hypot, torch.logaddexp, torch.logaddexp2, torch.xlogy):
        got, want = fn(a.to("dml"), b.to("dml")).cpu(), fn(a, b)
        same = (got == want) | (torch.isnan(got) & torch.isnan(want)) | ((got - want).abs() <= rtol * want.abs() + atol)
        bad = [(x, y, g, w) for x, y, g, w, ok in zip(a.flatten().tolist(), b.flatten().tolist(), got.flatten().tolist(),
                                                      want.flatten().tolist(), same.flatten().tolist()) if not ok]
        assert not bad, (fn.__name__, bad[:5])


def float32_ulps(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Distance in float32 steps between same-signed float32 tensors (a subnormal step is one too)."""
    return (got.view(torch.int32).long() - want.view(torch.int32).long()).abs()


@pytest.mark.skipif(not F64, reason="float32 pow is rounded once through float64 only where the adapter has it")
def test_float32_pow_is_correctly_rounded():
    # exp2(y * log2(x)) in float32 was 438 ulp off on average here, and 0 for subnormal results.
    gen = torch.Generator().manual_seed(3)
    x = torch.cat([torch.rand(20000, generator=gen) * 10 + 1e-3, torch.rand(5000, generator=gen) * 2.0 ** -126,
                   1 + (torch.rand(5000, generator=gen) - 0.5) * 1e-3])
    y = torch.cat([(torch.rand(20000, generator=gen) - 0.5) * 70, (torch.rand(5000, generator=gen) - 0.5) * 1.6,
                   (torch.rand(5000, generator=gen) - 0.5) * 2e5])
    want = torch.pow(x.double(), y.double())
    finite = want.abs() < 3.4e38
    got = torch.pow(x.to("dml"), y.to("dml")).cpu()
    # Half-way cases aside, the float64 result rounds to the float32 one.
    assert float32_ulps(got, want.float())[finite].max().item() <= 1
    assert (got[~finite] == float("inf")).all()
    # Scalar exponents take the same path; y = 2 stays an exact product.
    for e in (0.5, -1.5, 3.0, 63.0, -0.3):
        got = torch.pow(x[:20000].to("dml"), e).cpu()
        want = torch.pow(x[:20000].double(), e).float()
        assert float32_ulps(got, want).max().item() <= 1, e


@pytest.mark.skipif(not F64, reason="float32 division and sqrt are correctly rounded only where the adapter has float64")
def test_pow_with_a_scalar_exponent_takes_the_cpu_steps():
    # The CPU computes these exponents as sqrt, 1 / sqrt, 1 / x, x * x * x, 1 / (x * x), x * x, each
    # step rounded once; with division and sqrt correctly rounded, dml gives those steps' bits.
    # (torch's own float32 sqrt is not always correctly rounded: 16% of these differ in the last bit.)
    x = torch.cat([torch.rand(20000, generator=torch.Generator().manual_seed(8)) * 100,
                   torch.tensor([0.0, 1.0, 2.0, float("inf"), 1e-40, 3e38, 1e-30])])
    sqrt_rn = x.double().sqrt().float()
    steps = {0.5: sqrt_rn, -0.5: 1 / sqrt_rn, -1.0: 1 / x, 3.0: x * x * x, -2.0: 1 / (x * x), 2.0: x * x}
    for e, want in steps.items():
        got = torch.pow(x.to("dml"), e).cpu()
        assert torch.equal(got, want), (e, x[got != want][:5], got[got != want][:5], want[got != want][:5])
    assert torch.equal(torch.sqrt(x.to("dml")).cpu(), sqrt_rn)
    assert torch.equal(torch.rsqrt(x.to("dml")).cpu(), 1 / sqrt_rn)
    assert torch.equal(torch.reciprocal(x.to("dml")).cpu(), 1 / x)
    y = torch.rand(x.numel(), generator=torch.Generator().manual_seed(9)) * 1e3 - 500
    assert torch.equal((x.to("dml") / y.to("dml")).cpu(), x / y)
    # Signs and specials as the CPU gives them (pow(-0, 0.5) is sqrt(-0) = -0 there).
    z = torch.tensor([-0.0, -1.0, float("-inf"), float("nan"), -1e-40])
    for e in steps:
        got, want = torch.pow(z.to("dml"), e).cpu(), torch.pow(z, e)
        same = (got == want) & (got.signbit() == want.signbit()) | got.isnan() & want.isnan()
        assert same.all(), (e, got, want)


@pytest.mark.parametrize("dtype", [torch.float32] + ([torch.float64] if F64 else []), ids=str)
def test_pow_keeps_the_sign_of_zero_and_infinity(dtype):
    inf = float("inf")
    # pow(-0, 0.5) was sqrt(-0) = -0.
    x = torch.tensor([-0.0, -0.0, -0.0, 0.0, -inf, -inf, -inf, -inf, -1.0, -1.0, -2.0], dtype=dtype)
    y = torch.tensor([0.5, 3.0, -3.0, -2.5, 0.5, 3.0, -3.0, -2.0, inf, 3.0, 2.0], dtype=dtype)
    got, want = torch.pow(x.to("dml"), y.to("dml")).cpu(), torch.pow(x, y)
    assert torch.equal(got, want) and torch.equal(got.signbit(), want.signbit()), (got, want)


@pytest.mark.skipif(not F64, reason="float32 pow is rounded once through float64 only where the adapter has it")
@pytest.mark.parametrize("p", [0.5, 3.5, 7.0])
def test_float32_p_norm_within_a_few_ulp(p):
    x = torch.rand(4, 3000, generator=torch.Generator().manual_seed(5)) * 10
    got = torch.linalg.vector_norm(x.to("dml"), ord=p, dim=1).cpu()
    want = torch.linalg.vector_norm(x.double(), ord=p, dim=1).float()
    assert float32_ulps(got, want).max().item() <= 4, (got, want)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_nextafter_of_half_types_steps_by_their_own_ulp(dtype):
    # A float32 computation stepped by a float32 ulp and rounded back to x: these dtypes fall back.
    x = torch.tensor([1.0, -2.5, 0.0, 65504.0 if dtype == torch.float16 else 1e30, 3.0], dtype=dtype)
    y = torch.tensor([2.0, -3.0, -1.0, 0.0, 3.0], dtype=dtype)
    with torch_dml.strict(False):
        got = torch.nextafter(x.to("dml"), y.to("dml")).cpu()
    assert torch.equal(got, torch.nextafter(x, y)) and not torch.equal(got[:4], x[:4])


@pytest.mark.parametrize("value", [2**31, 3 * 10**9, 2**32 - 1, -(2**31) - 1, 2**40 + 2**31])
def test_int64_scalars_with_the_low_word_high_bit_set(value):
    # The low 32-bit word was sign-extended when the kernel rebuilt the scalar: t * 2^31 came out negated.
    t = torch.tensor([2**40 + 5, 2**33 + 7, 3 * 2**31 + 1, -7, 0])
    d = t.to("dml")
    with torch_dml.strict():
        got = [d * value, torch.remainder(d, value), d // value, d + value, d == value, d.clamp(max=value)]
    want = [t * value, torch.remainder(t, value), t // value, t + value, t == value, t.clamp(max=value)]
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w), (g, w)
