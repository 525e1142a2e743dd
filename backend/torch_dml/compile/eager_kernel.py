"""Writes one Inductor loop node (a ``SchedulerNode``: pointwise, or a reduction) as a Python function of
dml eager ops over the whole iteration space at once, for the few loop nodes Inductor makes itself in a
graph whose ATen ops all fall back (layout copies, scatter re-expansions, input re-stridings).

The iteration space is a broadcast grid: iteration variable ``i`` is an ``arange`` along dimension ``i``.
A read or write whose offset is affine in the variables becomes an ``as_strided`` view of the buffer (one
copy kernel, no index tensor); any other offset (floor division, modulo, an index read from a tensor)
is computed as an int64 tensor and gathered or scattered. Each Inductor op becomes the torch op of the
same meaning, so the numbers are those of dml's eager kernels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import sympy
import torch
from torch.utils._sympy import functions as symfn

from torch_dml.compile import eager_ops

# Inductor op name -> torch function, where the name alone does not say it.
_TORCH_NAMES = {
    "truediv": "torch.true_divide",
    "int_truediv": "torch.true_divide",
    "truncdiv": "eager_ops.truncdiv",
    "floordiv": "eager_ops.floordiv",
    "mod": "torch.fmod",
    "remainder": "torch.remainder",
    "and_": "torch.bitwise_and",
    "or_": "torch.bitwise_or",
    "xor": "torch.bitwise_xor",
    "lshift": "torch.bitwise_left_shift",
    "rshift": "torch.bitwise_right_shift",
    "invert": "torch.bitwise_not",
    "identity": "",
    "libdevice_abs": "torch.abs",
    "libdevice_exp": "torch.exp",
    "libdevice_sqrt": "torch.sqrt",
    "libdevice_log": "torch.log",
    "libdevice_cos": "torch.cos",
    "libdevice_sin": "torch.sin",
    "round": "torch.round",
}
# Inductor ops that only check or annotate; they compute nothing the eager kernels need.
_NO_OPS = {"check_bounds", "device_assert_async"}


class UnsupportedLoop(NotImplementedError):
    pass


def _unsupported(what: str) -> UnsupportedLoop:
    return UnsupportedLoop(
        f"torch.compile on dml: Inductor produced a loop kernel that uses {what}, which dml's eager-op "
        "kernels do not implement; compile this model with torch.compile(model, backend='aot_eager') "
        "and report the model at the torch-dml issue tracker")


class _Writer:
    """The ops handler Inductor's loop body is run under: each op appends a line and returns the name
    of the temporary that holds its result."""

    def __init__(self, ranges: Sequence[sympy.Expr], reduction_ranges: Sequence[sympy.Expr]) -> None:
        self.ranges = list(ranges)
        self.reduction_ranges = list(reduction_ranges)
        self.variables = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(ranges))]
        self.variables += [sympy.Symbol(f"r{i}", integer=True, nonnegative=True) for i in range(len(reduction_ranges))]
        self.lines: list[str] = []
        self.buffers: dict[str, str] = {}       # Inductor buffer name -> parameter name
        self.sizes: set[sympy.Symbol] = set()    # shape symbols the kernel takes as arguments
        self.indirect: set[sympy.Symbol] = set()
        self.counter = itertools.count()
        self.masked_depth = 0

    # -- helpers ---------------------------------------------------------------------------------------

    def temporary(self, expression: str) -> str:
        name = f"t{next(self.counter)}"
        self.lines.append(f"{name} = {expression}")
        return name

    def buffer(self, name: str) -> str:
        return self.buffers.setdefault(name, f"in_{len(self.buffers)}_{name}")

    def expr(self, e: sympy.Expr | int) -> str:
        return self._render(sympy.sympify(e))

    def _render(self, e: sympy.Expr) -> str:
        if isinstance(e, sympy.Integer):
            return str(int(e))
        if isinstance(e, sympy.Symbol):
            if e not in self.variables and e not in self.indirect:
                self.sizes.add(e)
            return e.name
        args = [self._render(a) for a in e.args]
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + " * ".join(args) + ")"
        if isinstance(e, (symfn.FloorDiv, symfn.CleanDiv)):
            return f"({args[0]} // {args[1]})"
        if isinstance(e, symfn.ModularIndexing):
            return f"(({args[0]} // {args[1]}) % {args[2]})"
        if isinstance(e, (symfn.PythonMod, sympy.Mod)):
            return f"({args[0]} % {args[1]})"
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) >= 0:
            return f"({args[0]} ** {int(e.exp)})"
        if isinstance(e, symfn.PowByNatural):
            return f"({args[0]} ** {args[1]})"
        if isinstance(e, (sympy.Min, symfn.Min)):
            return "eager_ops.minimum(" + ", ".join(args) + ")"
        if isinstance(e, (sympy.Max, symfn.Max)):
            return "eager_ops.maximum(" + ", ".join(args) + ")"
        if isinstance(e, symfn.Identity):
            return args[0]
        raise _unsupported(f"the index expression {type(e).__name__} ({e})")

    def shape(self, dims: int | None = None) -> str:
        sizes = self.ranges + self.reduction_ranges if dims is None else self.ranges + [sympy.Integer(1)] * dims
        return _tuple(self.expr(s) for s in sizes)

    def affine(self, index: sympy.Expr) -> tuple[str, str] | None:
        """The strides and offset of an affine, non-negative-stride index, or None."""
        index = sympy.expand(index)
        if index.free_symbols & self.indirect:
            return None
        strides = []
        rest = index
        for variable in self.variables:
            coefficient = sympy.diff(index, variable)
            if coefficient.free_symbols & (set(self.variables) | self.indirect) or coefficient.has(sympy.Derivative):
                return None
            if coefficient.is_number and coefficient < 0:
                return None
            strides.append(coefficient)
            rest = rest - coefficient * variable
        rest = sympy.expand(rest)
        if rest.free_symbols & set(self.variables):
            return None
        return _tuple(self.expr(s) for s in strides), self.expr(rest)

    # -- ops -------------------------------------------------------------------------------------------

    def load(self, name: str, index: sympy.Expr) -> str:
        buffer = self.buffer(name)
        strided = None if self.masked_depth else self.affine(index)
        if strided is not None:
            strides, offset = strided
            return self.temporary(f"eager_ops.load_strided({buffer}, {self.shape()}, {strides}, {offset})")
        clamp = bool(self.masked_depth)
        return self.temporary(f"eager_ops.load_gather({buffer}, {self.expr(index)}, {clamp})")

    def _store(self, name: str, index: sympy.Expr, value: str, shape: str, accumulate: bool) -> None:
        buffer = self.buffer(name)
        strided = None if accumulate else self.affine(index)
        if strided is not None:
            strides, offset = strided
            self.lines.append(f"eager_ops.store_strided({buffer}, {shape}, {strides}, {offset}, {value})")
        else:
            self.lines.append(f"eager_ops.store_scatter({buffer}, {shape}, {self.expr(index)}, {value}, {accumulate})")

    def store(self, name: str, index: sympy.Expr, value: str, mode: str | None = None) -> None:
        if mode not in (None, "atomic_add"):
            raise _unsupported(f"a store with mode {mode!r}")
        self._store(name, index, value, self.shape(), mode == "atomic_add")

    def store_reduction(self, name: str, index: sympy.Expr, value: str) -> None:
        self._store(name, index, value, self.shape(len(self.reduction_ranges)), False)

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str,
                  value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        if isinstance(value, tuple):
            raise _unsupported(f"a {reduction_type!r} reduction of several values")
        call = f"eager_ops.reduce({reduction_type!r}, {value}, {len(self.reduction_ranges)}, {dtype})"
        if reduction_type == "welford_reduce":
            names = tuple(f"t{next(self.counter)}" for _ in range(3))
            self.lines.append(f"{', '.join(names)} = {call}")
            return names
        return self.temporary(call)

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> str:
        return self.temporary(f"torch.as_tensor({self.expr(expr)}, device=device).to({dtype})")

    def constant(self, value: Any, dtype: torch.dtype) -> str:
        return self.temporary(f"eager_ops.constant({_literal(value)}, {dtype}, device)")

    def to_dtype(self, x: str, dtype: torch.dtype, src_dtype: torch.dtype | None = None,
                 use_compute_types: bool = True) -> str:
        return self.temporary(f"{x}.to({dtype})")

    def to_dtype_bitcast(self, x: str, dtype: torch.dtype, src_dtype: torch.dtype) -> str:
        return self.temporary(f"{x}.view({dtype})")

    def masked(self, mask: str, body: Callable[[], Any], other: Any) -> str:
        self.masked_depth += 1
        try:
            result = body()
        finally:
            self.masked_depth -= 1
        return self.temporary(f"torch.where({mask}, {result}, {_literal(other)})")

    def where(self, condition: str, a: str, b: str) -> str:
        return self.temporary(f"torch.where({condition}, {a}, {b})")

    def indirect_indexing(self, x: str, size: sympy.Expr, check: bool = True, wrap_neg: bool = True) -> sympy.Symbol:
        name = self.temporary(f"{x}.long()")
        if wrap_neg:
            self.lines.append(f"{name} = torch.where({name} < 0, {name} + {self.expr(size)}, {name})")
        symbol = sympy.Symbol(name, integer=True)
        self.indirect.add(symbol)
        return symbol

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _NO_OPS:
            return lambda *args, **kwargs: None
        function = _TORCH_NAMES.get(name)
        if function is None and not name.startswith("_") and callable(getattr(eager_ops, name, None)):
            function = f"eager_ops.{name}"
        if function is None:
            for namespace in (torch, torch.special):
                if callable(getattr(namespace, name, None)):
                    function = f"{namespace.__name__}.{name}"
                    break
            else:
                raise _unsupported(f"the op {name!r}")

        def op(*args: Any) -> str:
            rendered = ", ".join(a if isinstance(a, str) else _literal(a) for a in args)
            return self.temporary(f"{function}({rendered})" if function else rendered)

        return op


def _tuple(items: Any) -> str:
    return "(" + "".join(f"{item}, " for item in items) + ")"


def _literal(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, torch.dtype):
        return str(value)
    return repr(value)


def write(name: str, body: Callable[..., Any], ranges: Sequence[sympy.Expr],
          reduction_ranges: Sequence[sympy.Expr]) -> tuple[str, list[str], list[str]]:
    """The source of function ``name`` computing one loop body, the Inductor buffer names it takes (in
    order) and the shape symbols after them."""
    from torch._inductor.virtualized import V

    writer = _Writer(ranges, reduction_ranges)
    n = len(ranges)
    with V.set_ops_handler(writer):
        body(writer.variables[:n], writer.variables[n:])
    rank = len(writer.variables)
    prologue = [f"{v.name} = eager_ops.index({writer.expr(size)}, {i}, {rank}, device)"
                for i, (v, size) in enumerate(zip(writer.variables, writer.ranges + writer.reduction_ranges))]
    buffers = list(writer.buffers)
    sizes = sorted(s.name for s in writer.sizes)
    params = [writer.buffers[b] for b in buffers] + sizes
    first = writer.buffers[buffers[0]]
    source = "\n".join(
        [f"def {name}({', '.join(params)}):", f"    device = {first}.device"]
        + [f"    {line}" for line in prologue + writer.lines])
    return source, buffers, sizes


def define(source: str, name: str) -> Callable[..., None]:
    """Turns a written kernel's source into its function (called from the compiled module's header)."""
    namespace: dict[str, Any] = {"torch": torch, "eager_ops": eager_ops}
    exec(compile(source, f"<dml eager kernel {name}>", "exec"), namespace)  # noqa: S102 (source we wrote)
    return namespace[name]
