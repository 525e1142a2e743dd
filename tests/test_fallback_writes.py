"""The CPU fallback writes back every argument an op mutates (in-place self, out=, Tensor(a!)[] lists,
native_batch_norm's running stats), into the dml tensor itself: walked over the registered aten schemas,
and through native_batch_norm on an input its native kernel hands to the fallback."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
import torch_dml

SIZE = 3  # every generated tensor is SIZE x SIZE (1-D per-channel ones SIZE long): square, broadcastable

# Argument names that hold one value per channel (batch norm's statistics, a per-channel weight).
PER_CHANNEL = {"weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd", "mean", "invstd"}
# Values an argument needs to make the op write something worth checking.
NAMED_VALUES: dict[str, Any] = {"training": True, "train": True, "momentum": 0.1, "eps": 1e-5}
# Not deterministic or not values at all: nothing to compare against the CPU.
SKIPPED_NAME_PARTS = (
    "empty",
    "rand",
    "normal",
    "bernoulli",
    "dropout",
    "multinomial",
    "uniform",
    "exponential",
    "cauchy",
    "geometric",
    "log_normal",
    "poisson",
    "random",
    "_assert",
    "record_stream",
    "set_",
    "resize_",
    "sparse",
    "quantize",
    "mkldnn",
    "_cudnn",
    "miopen",
    "_nested",
    "to_padded",
    "_histogram",
    "manual_seed",
    "_cufft",
    "fbgemm",
)
# Arguments that hold one number per tensor (optimizer steps, AMP's scale and overflow flag).
ONE_ELEMENT = {"state_steps", "found_inf", "inv_scale"}
SIMPLE_VALUES: dict[str, Any] = {
    "int": 1,
    "float": 0.5,
    "number": 0.5,
    "bool": False,
    "List[int]": [1],
    "Optional[int]": None,
    "Optional[float]": None,
    "Optional[bool]": None,
    "Optional[number]": None,
}


def _is_written(argument: torch._C.Argument) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _shape(name: str) -> tuple[int, ...]:
    if name in ONE_ELEMENT:
        return ()
    return (SIZE,) if name in PER_CHANNEL else (SIZE, SIZE)


def _tensor(seed: int, name: str) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(_shape(name), generator=generator) + 0.5  # inside every op's domain


def _value(argument: torch._C.Argument, seed: int) -> Any:
    """A simple input for one argument, or raise LookupError when there is none."""
    kind = str(argument.type)
    if argument.name in NAMED_VALUES and kind in ("bool", "float", "Optional[float]"):
        return NAMED_VALUES[argument.name]
    if kind == "Optional[Tensor]" and argument.has_default_value():
        return argument.default_value
    if kind in ("Tensor", "Optional[Tensor]"):
        if _is_written(argument) and argument.kwarg_only:
            return torch.empty(0)  # an out= argument: the op resizes it
        return _tensor(seed, argument.name)
    if kind == "List[Tensor]":
        return [_tensor(seed * 10 + k, argument.name) for k in range(2)]
    if argument.has_default_value():
        return argument.default_value
    if kind in SIMPLE_VALUES:
        return SIMPLE_VALUES[kind]
    raise LookupError(kind)


def _call_site(schema: torch._C.FunctionSchema) -> tuple[list[Any], dict[str, Any]] | None:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for index, argument in enumerate(schema.arguments):
        try:
            value = _value(argument, index)
        except LookupError:
            return None
        if argument.kwarg_only:
            kwargs[argument.name] = value
        else:
            args.append(value)
    return args, kwargs


def _overload(schema: torch._C.FunctionSchema) -> Callable[..., Any]:
    packet = getattr(torch.ops.aten, schema.name.removeprefix("aten::"))
    return getattr(packet, schema.overload_name or "default")


def _qualified(schema: torch._C.FunctionSchema) -> str:
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


def _tensors(values: Any) -> list[torch.Tensor]:
    if isinstance(values, torch.Tensor):
        return [values]
    if isinstance(values, (list, tuple)):
        return [t for v in values for t in _tensors(v)]
    return []


def _to_dml(values: Any) -> Any:
    if isinstance(values, torch.Tensor):
        return values.to("dml")
    if isinstance(values, list):
        return [_to_dml(v) for v in values]
    return values


def _candidates() -> list[torch._C.FunctionSchema]:
    """aten ops that write an argument and have no dml kernel of their own: the fallback serves them."""
    found = []
    for qualified in sorted(torch._C._dispatch_get_all_op_names()):
        if not qualified.startswith("aten::"):
            continue
        schema = torch._C._get_schema(*qualified.partition(".")[::2])
        if any(part in schema.name for part in SKIPPED_NAME_PARTS):
            continue
        if not any(_is_written(a) for a in schema.arguments):
            continue
        if any("Generator" in str(a.type) for a in schema.arguments):
            continue
        # Served by the fallback as itself: a CPU kernel, and neither a dml kernel nor a decomposition.
        has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
        if not has_kernel(qualified, "CPU") or has_kernel(qualified, "PrivateUse1"):
            continue
        if has_kernel(qualified, "CompositeExplicitAutograd") or has_kernel(
            qualified, "CompositeImplicitAutograd"
        ):
            continue
        found.append(schema)
    return found


def _run_everywhere(
    schema: torch._C.FunctionSchema,
) -> tuple[list[torch.Tensor], list[torch.Tensor], bool] | None:
    """The op's tensor arguments after it ran on the CPU and on dml, and whether anything was written.
    None when the generated inputs do not suit the op or the op did not reach the fallback."""
    site = _call_site(schema)
    if site is None:
        return None
    args, kwargs = site
    op = _overload(schema)
    cpu_args, cpu_kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    try:
        op(*cpu_args, **cpu_kwargs)
    except (
        RuntimeError,
        TypeError,
        ValueError,
        IndexError,
    ):  # the CPU refuses these inputs: nothing to compare
        return None
    dml_args, dml_kwargs = _to_dml(args), {k: _to_dml(v) for k, v in kwargs.items()}
    after_dml = _tensors([dml_args, list(dml_kwargs.values())])
    layout = [(t.data_ptr(), t.stride()) if t.numel() else None for t in after_dml]
    torch_dml.reset_fallback_counts()
    op(*dml_args, **dml_kwargs)
    base = schema.name.rstrip("_")
    if not any(name.split(".")[0].rstrip("_") == base for name in torch_dml.fallback_counts()):
        return None  # decomposed into other ops or served natively: not this test's business
    # Written in place: same storage, same strides (views of the argument see the new values).
    for tensor, before in zip(after_dml, layout, strict=True):
        assert before is None or (tensor.data_ptr(), tensor.stride()) == before, _qualified(schema)
    before = _tensors([args, list(kwargs.values())])
    after_cpu = _tensors([cpu_args, list(cpu_kwargs.values())])
    written = any(b.shape != a.shape or not torch.equal(b, a) for b, a in zip(before, after_cpu, strict=True))
    return after_cpu, after_dml, written


def test_every_written_argument_matches_the_cpu():
    written: list[torch._C.FunctionSchema] = []
    failures = []
    for schema in _candidates():
        result = _run_everywhere(schema)
        if result is None:
            continue
        after_cpu, after_dml, wrote = result
        if wrote:
            written.append(schema)
        for index, (expected, actual) in enumerate(zip(after_cpu, after_dml, strict=True)):
            try:
                torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-5, equal_nan=True)
            except AssertionError as error:
                failures.append(f"{_qualified(schema)} tensor argument {index}: {str(error).splitlines()[0]}")
    assert not failures, "\n".join(failures)
    # The walk must reach each kind of write, or it proves nothing.
    names = [_qualified(schema) for schema in written]
    assert any(name.endswith("_") for name in names), names  # in-place self
    assert any(a.kwarg_only and _is_written(a) for s in written for a in s.arguments), names  # out=
    assert any(str(a.type) == "List[Tensor]" and _is_written(a) for s in written for a in s.arguments), names
    assert len(written) >= 50, names


def test_written_view_keeps_sharing_storage():
    base = torch.arange(1.0, 13.0).view(3, 4)
    on_dml = base.to("dml")
    column = on_dml[:, 1]  # a strided view: the write must land in on_dml's storage, not in a copy
    torch_dml.reset_fallback_counts()
    column.digamma_()
    assert any(name.startswith("aten::digamma") for name in torch_dml.fallback_counts())
    expected = base.clone()
    expected[:, 1].digamma_()
    assert torch.equal(on_dml.cpu(), expected)
    assert column.stride() == (4,) and column.data_ptr() == on_dml.data_ptr() + 4


def _train_batch_norm(device: str, steps: int = 3) -> torch.nn.BatchNorm2d:
    torch.manual_seed(0)
    norm = torch.nn.BatchNorm2d(4).to(device)
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randn(2, 4, 3, 3, generator=generator).to(device)
        norm(x).sum().backward()
    return norm


def test_batch_norm_training_updates_running_stats():
    cpu, dml = _train_batch_norm("cpu"), _train_batch_norm("dml")
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(dml, name).cpu(), getattr(cpu, name), msg=name)
    assert dml.num_batches_tracked.item() == 3
    assert not torch.equal(cpu.running_mean, torch.zeros(4))  # training moved them
    cpu.eval()
    dml.eval()
    x = torch.randn(2, 4, 3, 3, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(dml(x.to("dml")).cpu(), cpu(x))


def test_batch_norm_fallback_writes_running_stats():
    """native_batch_norm writes its running statistics without a schema annotation saying so. Its dml
    kernel hands a channel of one value with running statistics (an unbiased variance of 0 / 0) to the
    fallback, which must still write them back."""
    x = torch.rand(1, SIZE, generator=torch.Generator().manual_seed(3)) + 0.5
    mean, var = torch.rand(SIZE) + 0.5, torch.rand(SIZE) + 0.5
    mean_dml, var_dml = mean.to("dml"), var.to("dml")
    before = mean.clone()
    torch_dml.reset_fallback_counts()
    actual = torch.native_batch_norm(x.to("dml"), None, None, mean_dml, var_dml, True, 0.1, 1e-5)
    assert torch_dml.fallback_counts().get("aten::native_batch_norm") == 1
    expected = torch.native_batch_norm(x, None, None, mean, var, True, 0.1, 1e-5)
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a.cpu(), e)
    torch.testing.assert_close(mean_dml.cpu(), mean)
    torch.testing.assert_close(var_dml.cpu(), var, equal_nan=True)
    assert not torch.equal(mean, before)  # the op moved them: the write-back is tested, not assumed


def test_out_argument_is_resized_in_place():
    out = torch.empty(0, device="dml")
    identity = out
    x = torch.rand(2, 5) + 0.5
    torch_dml.reset_fallback_counts()
    torch.digamma(x.to("dml"), out=out)
    assert "aten::digamma.out" in torch_dml.fallback_counts()
    assert out is identity and out.shape == (2, 5)
    torch.testing.assert_close(out.cpu(), torch.digamma(x))
