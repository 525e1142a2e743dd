"""Inductor's loop IR written as WGSL: one kernel per fused group of pointwise and reduction nodes, one
thread per element, or per output of a reduction (looping over its reduced elements). Inductor's
``SIMDKernel`` does the indexing (range trees, index simplification, CSE); this module says how each op,
load and store reads in WGSL.

Numbers. Each op is written with the helper the eager kernel of the same op uses (``fdiv_`` for division,
``erf_``, ``tanh_``, bit-pattern comparisons and NaN tests, ...; the C++ launch path appends the ones a
kernel reaches from kernels/wgsl/math/), so a fused chain rounds as the chain of eager ops does, op by op.
What fusion changes: an intermediate stays in a register instead of memory, so a driver may contract a
product and a sum into one fma where eager rounded twice (an ulp at most; tests allow it).

What it writes (for anything else ``supported()`` names the reason and the node runs as eager ops): loads
and stores of float32 and int32 buffers at affine, floor-divided or modular indices; float32, int32 and
bool values; the ops in ``_FLOAT_OPS``/``_TYPED_OPS``/``_ANY_OPS``; masked sub-bodies; float32
``_REDUCTIONS`` over a static shape that ``generated_reduction_shape`` accepts."""

from __future__ import annotations

import itertools
import math
import struct
from collections.abc import Callable
from typing import Any

import sympy
import torch
from torch._inductor.codegen.common import CSEVariable, DeferredLine, IndentedBuffer, OpOverrides
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel
from torch._inductor.utils import sympy_product
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy import functions as symfn
from torch.utils._sympy.printers import ExprPrinter

WORKGROUP_SIZE = 256
# Reductions: each thread loops over its output's reduced elements, so a reduction is generated only
# where there are enough outputs to fill a GPU or few enough reduced elements per output; others run as
# eager reduction kernels (which split rows across a workgroup).
MIN_REDUCTION_OUTPUTS = 256
MAX_REDUCED_PER_THREAD = 4096


def generated_reduction_shape(outputs: int, reduced: int) -> bool:
    return outputs >= MIN_REDUCTION_OUTPUTS or reduced <= MAX_REDUCED_PER_THREAD


# Reduction -> (initial value, combine) for float32 accumulators, combined in index order.
_REDUCTIONS: dict[str, tuple[float, Callable[[str, str], str]]] = {
    "sum": (0.0, lambda acc, v: f"({acc} + {v})"),
    "prod": (1.0, lambda acc, v: f"({acc} * {v})"),
    "max": (-math.inf, lambda acc, v: f"fmaximum_({acc}, {v})"),
    "min": (math.inf, lambda acc, v: f"fminimum_({acc}, {v})"),
}

# Storage bindings one kernel may have: WebGPU's default limit, which every adapter has
# (kernels/generated_kernel.cpp's kMaxGeneratedOperands; the offsets block holds 8).
MAX_OPERANDS = 8

# Kernel values: WGSL type per dtype. int64 values (index arithmetic) are computed in i32; the kernel
# only runs where every index stays below 2^31 (WgslKernel's numel check, the launch's binding check).
_VALUE_TYPES = {torch.float32: "f32", torch.int32: "i32", torch.int64: "i32", torch.bool: "bool"}
_BUFFER_TYPES = {torch.float32: "f32", torch.int32: "i32"}
_BUFFER_TYPE_DTYPES = {"f32": torch.float32, "i32": torch.int32}

# Inductor op -> WGSL of its float32 form, as the eager kernel writes it (backend/ops.yaml).
_FLOAT_OPS: dict[str, Callable[..., str]] = {
    "truediv": lambda a, b: f"fdiv_({a}, {b})",
    "reciprocal": lambda a: f"fdiv_(f32(1), {a})",
    "exp": lambda a: f"exp({a})",
    "libdevice_exp": lambda a: f"exp({a})",
    "exp2": lambda a: f"exp2({a})",
    "log": lambda a: f"log_sub_({a})",
    "libdevice_log": lambda a: f"log_sub_({a})",
    "sqrt": lambda a: f"select(fsqrt_({a}), nan_(), is_neg_({a}))",
    "libdevice_sqrt": lambda a: f"select(fsqrt_({a}), nan_(), is_neg_({a}))",
    "rsqrt": lambda a: f"fdiv_(f32(1), select(fsqrt_({a}), nan_(), is_neg_({a})))",
    "sin": lambda a: f"sin({a})",
    "cos": lambda a: f"cos({a})",
    "tanh": lambda a: f"tanh_({a})",
    "sigmoid": lambda a: f"sigmoid_({a})",
    "erf": lambda a: f"erf_({a})",
    "floor": lambda a: f"ffloor_({a})",
    "ceil": lambda a: f"fceil_({a})",
    "sign": lambda a: f"fsign_({a})",
    "relu": lambda a: f"select({a}, f32(0), is_neg_({a}) && !isnan_({a}))",
    "pow": lambda a, b: f"pow_({a}, {b})",
    "isnan": lambda a: f"isnan_({a})",
    "isinf": lambda a: f"isinf_({a})",
}
# Ops whose float32 and integer forms differ: (float form, integer form).
_TYPED_OPS: dict[str, tuple[Callable[..., str], Callable[..., str]]] = {
    "neg": (lambda a: f"fneg_({a})", lambda a: f"(-{a})"),
    "abs": (lambda a: f"fabs_({a})", lambda a: f"abs({a})"),
    "libdevice_abs": (lambda a: f"fabs_({a})", lambda a: f"abs({a})"),
    "maximum": (lambda a, b: f"fmaximum_({a}, {b})", lambda a, b: f"max({a}, {b})"),
    "minimum": (lambda a, b: f"fminimum_({a}, {b})", lambda a, b: f"min({a}, {b})"),
    "eq": (lambda a, b: f"feq_({a}, {b})", lambda a, b: f"({a} == {b})"),
    "ne": (lambda a, b: f"!feq_({a}, {b})", lambda a, b: f"({a} != {b})"),
    "lt": (lambda a, b: f"flt_({a}, {b})", lambda a, b: f"({a} < {b})"),
    "le": (lambda a, b: f"fle_({a}, {b})", lambda a, b: f"({a} <= {b})"),
    "gt": (lambda a, b: f"flt_({b}, {a})", lambda a, b: f"({a} > {b})"),
    "ge": (lambda a, b: f"fle_({b}, {a})", lambda a, b: f"({a} >= {b})"),
}
# Ops written the same for every value type.
_ANY_OPS: dict[str, Callable[..., str]] = {
    "add": lambda a, b: f"({a} + {b})",
    "sub": lambda a, b: f"({a} - {b})",
    "mul": lambda a, b: f"({a} * {b})",
    "identity": lambda a: f"{a}",
    "logical_and": lambda a, b: f"({a} && {b})",
    "logical_or": lambda a, b: f"({a} || {b})",
    "logical_not": lambda a: f"(!{a})",
    "where": lambda c, a, b: f"select({b}, {a}, {c})",
}


class Unsupported(NotImplementedError):
    pass


def _dtype_of(value: Any) -> torch.dtype | None:
    return getattr(value, "dtype", None)


def _is_float(value: Any) -> bool:
    return _dtype_of(value) in (torch.float32, None)


def literal(value: Any, dtype: torch.dtype) -> str:
    """A WGSL literal of `value` as `dtype`, exact: a float goes as its float32 bits, so no compiler
    decides how a decimal rounds, and infinities and NaN need no special syntax."""
    if dtype == torch.bool:
        return "true" if value else "false"
    if dtype in (torch.int32, torch.int64):
        number = int(value)
        if not -(2**31) <= number < 2**31:
            raise Unsupported(f"the integer constant {number}")
        return f"i32({number})"
    if dtype != torch.float32:
        raise Unsupported(f"a constant of {dtype}")
    number = float(value)
    if math.isnan(number):
        bits = 0x7FC00000
    elif abs(number) > 3.4028235677973366e38:
        bits = 0x7F800000 | (0x80000000 if number < 0 else 0)
    else:
        bits = struct.unpack("<I", struct.pack("<f", number))[0]
    return f"bitcast<f32>({bits:#010x}u)"


class WgslPrinter(ExprPrinter):
    """Index expressions in i32. Inductor's indices are non-negative where these are used, so WGSL's
    truncating division and remainder are its floor division and modulo."""

    def _print_Integer(self, expr: sympy.Expr) -> str:
        if not -(2**31) <= int(expr) < 2**31:
            raise Unsupported(f"the index constant {expr}")
        return f"i32({int(expr)})" if int(expr) < 0 else str(int(expr))

    def _print_FloorDiv(self, expr: sympy.Expr) -> str:
        x, div = (self._print(a) for a in expr.args)
        return f"(({x}) / ({div}))"

    _print_CleanDiv = _print_FloorDiv

    def _print_ModularIndexing(self, expr: sympy.Expr) -> str:
        x, div, mod = (self._print(a) for a in expr.args)
        return f"((({x}) / ({div})) % ({mod}))"

    def _print_PythonMod(self, expr: sympy.Expr) -> str:
        x, mod = (self._print(a) for a in expr.args)
        return f"(({x}) % ({mod}))"

    _print_Mod = _print_PythonMod

    def _fold(self, expr: sympy.Expr, fn: str) -> str:
        args = [self._print(a) for a in expr.args]
        result = args[0]
        for arg in args[1:]:
            result = f"{fn}({result}, {arg})"
        return result

    def _print_Min(self, expr: sympy.Expr) -> str:
        return self._fold(expr, "min")

    def _print_Max(self, expr: sympy.Expr) -> str:
        return self._fold(expr, "max")

    def _print_Pow(self, expr: sympy.Expr) -> str:
        base, exp = expr.args
        if not (exp.is_Integer and int(exp) >= 1):
            raise Unsupported(f"the index expression {expr}")
        return "(" + " * ".join([self._print(base)] * int(exp)) + ")"

    def _print_PowByNatural(self, expr: sympy.Expr) -> str:
        return self._print_Pow(sympy.Pow(*expr.args, evaluate=False))

    def _print_Identity(self, expr: sympy.Expr) -> str:
        return self._print(expr.args[0])

    def _print_Function(self, expr: sympy.Expr) -> str:
        raise Unsupported(f"the index function {type(expr).__name__}")

    def _print_Float(self, expr: sympy.Expr) -> str:
        raise Unsupported(f"the float index {expr}")

    def _print_Rational(self, expr: sympy.Expr) -> str:
        if expr.is_Integer:
            return self._print_Integer(expr)
        raise Unsupported(f"the rational index {expr}")


_printer = WgslPrinter()
_INDEX_FUNCTIONS = (sympy.Symbol, sympy.Integer, sympy.Add, sympy.Mul, sympy.Pow, symfn.FloorDiv, symfn.CleanDiv,
                    symfn.ModularIndexing, symfn.PythonMod, sympy.Mod, symfn.Min, symfn.Max, sympy.Min, sympy.Max,
                    symfn.Identity, symfn.PowByNatural)


def check_index(index: sympy.Expr) -> None:
    for node in sympy.preorder_traversal(sympy.sympify(index)):
        if not isinstance(node, _INDEX_FUNCTIONS):
            raise Unsupported(f"the index expression {type(node).__name__} ({index})")
        if isinstance(node, sympy.Symbol) and node.name.startswith("tmp"):
            raise Unsupported("an index read from a tensor")
    _printer.doprint(index)


class _Probe:
    """The ops handler ``supported()`` runs a loop body under: each value is its dtype, each op checks
    that this module writes it for that dtype."""

    def load(self, name: str, index: sympy.Expr) -> torch.dtype:
        dtype = V.graph.get_dtype(name)
        if dtype not in _BUFFER_TYPES:
            raise Unsupported(f"a load of {dtype}")
        check_index(index)
        return dtype

    def store(self, name: str, index: sympy.Expr, value: Any, mode: Any = None) -> None:
        dtype = V.graph.get_dtype(name)
        if mode is not None or dtype not in _BUFFER_TYPES:
            raise Unsupported(f"a store of {dtype} (mode {mode})")
        check_index(index)

    def constant(self, value: Any, dtype: torch.dtype) -> torch.dtype:
        literal(value, dtype)
        return dtype

    def to_dtype(self, x: Any, dtype: torch.dtype, src_dtype: Any = None, use_compute_types: bool = True) -> Any:
        source = src_dtype or x
        if dtype not in _VALUE_TYPES or (isinstance(source, torch.dtype) and source not in _VALUE_TYPES):
            raise Unsupported(f"a conversion to {dtype}")
        # int64 values are i32 here: only index arithmetic, which stays below 2^31, may make them.
        if source == torch.float32 and dtype in (torch.int32, torch.int64):
            raise Unsupported(f"a conversion of float32 to {dtype}")
        return dtype

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> torch.dtype:
        check_index(expr)
        return self.to_dtype(torch.int64, dtype)

    value_expr = index_expr

    def masked(self, mask: Any, body: Callable[[], Any], other: Any) -> Any:
        result = body()
        literal(other, result if isinstance(result, torch.dtype) else torch.float32)
        return result

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str, value: Any) -> Any:
        if reduction_type not in _REDUCTIONS or dtype != torch.float32 or value != torch.float32:
            raise Unsupported(f"a {reduction_type} reduction of {value} to {dtype}")
        return dtype

    def store_reduction(self, name: str, index: sympy.Expr, value: Any) -> None:
        self.store(name, index, value)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in _FLOAT_OPS and name not in _TYPED_OPS and name not in _ANY_OPS:
            raise Unsupported(f"the op {name!r}")

        def op(*args: Any) -> Any:
            values = [a for a in args if isinstance(a, torch.dtype)]
            if name in _FLOAT_OPS and any(v != torch.float32 for v in values):
                raise Unsupported(f"{name} of {values}")
            if name in ("eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "logical_and", "logical_or",
                        "logical_not"):
                return torch.bool
            if name == "where":
                return values[1] if len(values) > 1 else torch.float32
            return values[0] if values else torch.float32

        return op


def supported(node: Any) -> str | None:
    """None when every loop body of `node` (a scheduler node, possibly fused) can be written as WGSL;
    otherwise what cannot."""
    for snode in node.get_nodes():
        body = getattr(snode, "_body", None)
        if body is None or snode.is_template():
            return f"{snode.get_name()} is not a loop"
        ranges, reduction_ranges = snode.get_ranges()
        if reduction_ranges:
            outputs, reduced = sympy_product(ranges), sympy_product(reduction_ranges)
            if not (outputs.is_Integer and reduced.is_Integer):
                return f"{snode.get_name()} reduces over a dynamic shape"
            if not generated_reduction_shape(int(outputs), int(reduced)):
                return f"{snode.get_name()} reduces {reduced} elements into {outputs} outputs"
        operands = {dep.name for dep in snode.read_writes.reads | snode.read_writes.writes}
        if len(operands) > MAX_OPERANDS:
            return f"{snode.get_name()} binds {len(operands)} tensors"
        variables = [sympy.Symbol(f"dml_probe{i}", integer=True, nonnegative=True)
                     for i in range(len(ranges) + len(reduction_ranges))]
        try:
            with V.set_ops_handler(_Probe()):
                body(variables[:len(ranges)], variables[len(ranges):])
        except Unsupported as e:
            return f"{snode.get_name()} uses {e}"
    return None


class WgslOverrides(OpOverrides):
    """How each Inductor op reads in WGSL (the strings become CSE temporaries of the kernel)."""

    @staticmethod
    def constant(value: Any, dtype: torch.dtype) -> str:
        return literal(value, dtype)

    @staticmethod
    def to_dtype(x: Any, dtype: torch.dtype, src_dtype: torch.dtype | None = None,
                 use_compute_types: bool = True) -> str:
        source = _VALUE_TYPES[src_dtype or _dtype_of(x) or torch.float32]
        target = _VALUE_TYPES[dtype]
        if source == target:
            return f"{x}"
        if target == "bool":
            return f"(!is_zero_({x}))" if source == "f32" else f"({x} != 0)"
        if source == "bool":
            return f"select({target}(0), {target}(1), {x})"
        return f"{target}({x})"

    @staticmethod
    def index_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        kernel = V.kernel
        var = kernel.cse.generate(kernel.compute, kernel.index_to_str(kernel.prepare_indexing(expr)),
                                  dtype=torch.int32)
        return WgslOverrides.to_dtype(var, dtype, torch.int32)

    value_expr = index_expr

    @staticmethod
    def masked(mask: CSEVariable, body: Callable[[], Any], other: Any) -> str:
        kernel = V.kernel
        scoped = IndentedBuffer()
        with kernel.swap_buffers(scoped), scoped.indent():
            result = body()
        dtype = _dtype_of(result) or torch.float32
        var = kernel.cse.newvar(dtype=dtype)
        kernel.compute.writeline(f"var {var}: {_VALUE_TYPES[dtype]} = {literal(other, dtype)};")
        kernel.compute.writeline(f"if ({mask}) {{")
        kernel.compute.splice(scoped)
        with kernel.compute.indent():
            kernel.compute.writeline(f"{var} = {result};")
        kernel.compute.writeline("}")
        return var


def _define(name: str) -> None:
    if name in _FLOAT_OPS:
        write = _FLOAT_OPS[name]
    elif name in _ANY_OPS:
        write = _ANY_OPS[name]
    else:
        floating, integer = _TYPED_OPS[name]

        def write(*args: Any) -> str:
            return (floating if _is_float(args[0]) else integer)(*args)

    setattr(WgslOverrides, name, staticmethod(write))


for _name in itertools.chain(_FLOAT_OPS, _TYPED_OPS, _ANY_OPS):
    _define(_name)


class WgslKernel(SIMDKernel):
    overrides = WgslOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = "let "
    kexpr = _printer.doprint
    sexpr = _printer.doprint

    def load(self, name: str, index: sympy.Expr) -> CSEVariable:
        var = self.args.input(name)
        line = f"{var}[{self._address(var, index)}]"
        return self.cse.generate(self.loads, line, dtype=V.graph.get_dtype(name))

    def store(self, name: str, index: sympy.Expr, value: CSEVariable, mode: Any = None) -> None:
        if mode is not None:
            raise Unsupported(f"a store with mode {mode!r}")
        var = self.args.output(name)
        target = _BUFFER_TYPES[V.graph.get_dtype(name)]
        line = f"{var}[{self._address(var, index)}] = {WgslOverrides.to_dtype(value, _BUFFER_TYPE_DTYPES[target])};"
        self.stores.writeline(DeferredLine(name, line))

    def _address(self, var: str, index: sympy.Expr) -> str:
        # The operand's offset within its bound window is filled in at codegen_kernel, once the operand
        # order is known; the marker names the operand.
        return f"@OFFSET({var}) + u32({self.index_to_str(self.prepare_indexing(index))})"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.post_loop = IndentedBuffer()   # reduction results' stores, after the loop that computes them
        self.outside_loop: set[Any] = set()  # CSE values that stay valid after a reduction loop
        self.accumulators = itertools.count()

    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        line = f"let {entry.name} = {self.sexpr(self.rename_indexing(entry.expr))};"
        # A reduction variable changes each loop iteration; an output's is fixed for the thread.
        (self.indexing_code if entry.root.is_loop else self.body).writeline(line)

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str, value: Any) -> Any:
        initial, combine = _REDUCTIONS[reduction_type]
        acc = self.cse.newvar(dtype=dtype)
        self.body.writeline(f"var {acc}: f32 = {literal(initial, torch.float32)};")
        self.compute.writeline(f"{acc} = {combine(str(acc), str(value))};")
        self.outside_loop.add(acc)
        return acc

    def store_reduction(self, name: str, index: sympy.Expr, value: CSEVariable) -> None:
        var = self.args.output(name)
        self.post_loop.writeline(DeferredLine(name, f"{var}[{self._address(var, index)}] = {value};"))

    def codegen_body(self) -> None:
        loop = next((t for t in self.range_trees if t.is_loop), None)
        if loop is not None and self.inside_reduction and (self.loads or self.compute or self.stores):
            self.body.writeline(f"for (var {loop.name}: i32 = 0; {loop.name} < {self.sexpr(loop.numel)}; "
                                f"{loop.name}++) {{")
            with self.body.indent():
                self.body.splice(self.indexing_code)
                self.body.splice(self.loads)
                self.body.splice(self.compute)
                self.body.splice(self.stores)
            self.body.writeline("}")
            # Values computed inside the loop are gone after it; its index variables too.
            self.cse.invalidate(OrderedSet(self.outside_loop))
            loop.cache_clear()
        else:
            self.body.splice(self.indexing_code)
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
        self.body.splice(self.post_loop)
        for buffer in (self.indexing_code, self.loads, self.compute, self.stores, self.post_loop):
            buffer.clear()

    def operands(self) -> tuple[list[str], list[str], list[str]]:
        """Kernel-side names of the bound tensors, their graph buffers, and the graph's size symbols the
        kernel takes as scalars (its own names are the args' inner names)."""
        arg_defs, call_args, _, _ = self.args.python_argdefs()
        names = [getattr(a, "name", str(a)) for a in arg_defs]
        sizevars = {str(inner) for inner in self.args.sizevars.values()}
        inner = [n for n in names if n not in sizevars]
        outer = [str(c) for n, c in zip(names, call_args) if n not in sizevars]
        return inner, outer, [str(v) for v in self.args.sizevars]

    def codegen_kernel(self, name: str | None = None) -> str:
        self.codegen_body()
        (tree,) = [t for t in self.range_trees if not t.is_reduction]
        for loop in self.range_trees:
            if loop.is_reduction and not isinstance(loop.numel, (int, sympy.Integer)):
                raise Unsupported("a reduction over a dynamic shape")
        inner, _, _ = self.operands()
        if len(inner) > MAX_OPERANDS:
            raise Unsupported(f"{len(inner)} tensors in one kernel")
        dynamic = not isinstance(tree.numel, (int, sympy.Integer))
        code = IndentedBuffer()
        code.writeline("struct Params {")
        with code.indent():
            code.writeline("off: array<vec4<u32>, 2>,")
            for size in self.args.sizevars.values():
                code.writeline(f"{size}: i32,")
            if dynamic:
                code.writeline("numel: i32,")
        code.writeline("}")
        for binding, var in enumerate(inner):
            dtype = _BUFFER_TYPES[V.graph.get_dtype(self._outer_of(var))]
            code.writeline(f"@group(0) @binding({binding}) var<storage, read_write> {var}: array<{dtype}>;")
        code.writeline(f"@group(0) @binding({len(inner)}) var<uniform> p: Params;")
        code.writeline("")
        code.writeline(f"@compute @workgroup_size({WORKGROUP_SIZE})")
        code.writeline("fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
                       "@builtin(num_workgroups) groups: vec3<u32>) {")
        with code.indent():
            numel = "p.numel" if dynamic else self.sexpr(tree.numel)
            code.writeline(f"let {tree.name} = i32(gid.x + gid.y * groups.x * {WORKGROUP_SIZE}u);")
            code.writeline(f"if ({tree.name} >= {numel}) {{ return; }}")
            for size in self.args.sizevars.values():
                code.writeline(f"let {size} = p.{size};")
            code.splice(self.body)
        code.writeline("}")
        source = code.getvalue()
        for i, var in enumerate(inner):
            source = source.replace(f"@OFFSET({var})", f"p.off[{i // 4}][{i % 4}]")
        return source

    def _outer_of(self, inner_name: str) -> str:
        inner, outer, _ = self.operands()
        return outer[inner.index(inner_name)]

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        _, buffers, sizes = self.operands()
        for size in self.args.sizevars:
            wrapper.ensure_size_computed(size)
        (tree,) = [t for t in self.range_trees if not t.is_reduction]
        numel = V.graph.sizevars.simplify(tree.numel)
        scalars = list(sizes)
        if not isinstance(numel, (int, sympy.Integer)):
            scalars.append(wrapper.codegen_python_sizevar(numel))
        wrapper.writeline(f"{name}([{', '.join(buffers)}], ({''.join(s + ', ' for s in scalars)}), "
                          f"{wrapper.codegen_python_sizevar(numel)})")
