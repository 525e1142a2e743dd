"""The one reader of aten schemas for the generators: an overload's arguments and returns as the installed
torch registers them, and the C++ types of a kernel that the dispatcher calls unboxed for it.

SymInt arguments read as int here (the schema objects say `int`), so kernels take int64_t / IntArrayRef
and the CPU fallback is reached through `call_fallback_fn`, whose parameters are the same; the
dispatcher hands such a kernel concrete values, which is all a device with real tensors sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Schema types, spelled as the schema language does (`Tensor?`, `int[]`, `bool[3]`), -> C++ parameters.
CPP_TYPES = {
    "Tensor": "const at::Tensor&",
    "Tensor?": "const std::optional<at::Tensor>&",
    "Tensor[]": "at::TensorList",
    "Tensor?[]": "const c10::List<std::optional<at::Tensor>>&",
    "int": "int64_t",
    "int?": "std::optional<int64_t>",
    "int[]": "at::IntArrayRef",
    "int[]?": "at::OptionalIntArrayRef",
    "float": "double",
    "float?": "std::optional<double>",
    "float[]": "at::ArrayRef<double>",
    "float[]?": "std::optional<at::ArrayRef<double>>",
    "bool": "bool",
    "bool?": "std::optional<bool>",
    "bool[2]": "std::array<bool, 2>",
    "bool[3]": "std::array<bool, 3>",
    "Scalar": "const at::Scalar&",
    "Scalar?": "const std::optional<at::Scalar>&",
    "Scalar[]": "at::ArrayRef<at::Scalar>",
    "ScalarType": "c10::ScalarType",
    "ScalarType?": "std::optional<c10::ScalarType>",
    "Generator?": "std::optional<at::Generator>",
    "str": "c10::string_view",
    "str?": "std::optional<c10::string_view>",
    "Layout?": "std::optional<at::Layout>",
    "Device?": "std::optional<at::Device>",
    "MemoryFormat?": "std::optional<at::MemoryFormat>",
}


@dataclass
class Arg:
    name: str
    type: str     # schema spelling without the alias annotation
    writes: bool  # Tensor(a!)
    is_out: bool
    alias: str    # the alias set's name ("a"), "" when none

    def cpp(self) -> str:
        if self.type == "Tensor" and self.writes:
            return f"at::Tensor& {self.name}"
        if self.type not in CPP_TYPES:
            raise ValueError(f"no C++ type for schema type {self.type!r} ({self.name})")
        return f"{CPP_TYPES[self.type]} {self.name}"


@dataclass
class Schema:
    overload: str
    args: list[Arg]
    returns: list[tuple[str, str]]  # (schema type, alias set or "")

    def params(self) -> str:
        return ", ".join(a.cpp() for a in self.args)

    def names(self) -> str:
        return ", ".join(a.name for a in self.args)

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise ValueError(f"{self.overload} has no argument {name!r} (it has {self.names()})")

    def cpp_returns(self) -> str:
        def one(kind: str, alias: str) -> str:
            if kind == "Tensor":
                return "at::Tensor&" if alias else "at::Tensor"
            if kind == "Tensor[]":
                return "std::vector<at::Tensor>"
            raise ValueError(f"{self.overload}: no C++ type for returned {kind!r}")

        cpp = [one(*r) for r in self.returns]
        if not cpp:
            return "void"
        return cpp[0] if len(cpp) == 1 else f"std::tuple<{', '.join(cpp)}>"

    def returns_outputs(self) -> bool:
        """Whether every return is an argument the op writes (out= and in-place overloads)."""
        return bool(self.returns) and all(alias for _, alias in self.returns)

    def returned_outputs(self) -> str:
        """The C++ expression returning the written arguments, for an overload that returns_outputs()."""
        by_alias = {a.alias: a.name for a in self.args if a.alias}
        names = [by_alias[alias] for _, alias in self.returns]
        if len(names) == 1:
            return names[0]
        return f"{self.cpp_returns()}({', '.join(names)})"


def spelled(text: str) -> str:
    """A schema type as CPP_TYPES keys it: SymInt is int (see the module's note), and a list's length
    is kept only where it changes the C++ type (bool[3] is a std::array, int[2] an IntArrayRef)."""
    text = text.replace("SymInt", "int")
    return re.sub(r"\[\d+\]", "[]", text) if not text.startswith("bool[") else text


def read(overload: str) -> Schema:
    import torch  # the generators need torch, importers of their modules (tests) need not
    from torchgen.model import FunctionSchema

    base, _, name = overload.partition(".")
    try:
        registered = torch._C._get_schema(f"aten::{base}", name)
    except RuntimeError:
        raise ValueError(f"torch has no overload aten::{overload}") from None
    parsed = FunctionSchema.parse(str(registered).removeprefix("aten::"))

    def alias(annotation) -> str:
        return annotation.alias_set[0] if annotation is not None and annotation.alias_set else ""

    args = [Arg(a.name, spelled(str(a.type)), a.annotation is not None and a.annotation.is_write,
                a in parsed.arguments.out, alias(a.annotation)) for a in parsed.arguments.flat_all]
    returns = [(spelled(str(r.type)), alias(r.annotation)) for r in parsed.returns]
    return Schema(overload, args, returns)


def ops_struct(overload: str) -> str:
    base, _, name = overload.partition(".")
    return f"at::_ops::{base}_{name}" if name else f"at::_ops::{base}"


def fallback_call(overload: str, args: str) -> str:
    """The C++ call sending `overload` with `args` to the counted CPU fallback (aten/fallback.h)."""
    return f"at::native::call_fallback_fn<&cpu_fallback, {ops_struct(overload)}>::call({args})"
