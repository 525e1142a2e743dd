"""Runs one (op, variant, dtype) case of an OpInfo on the CPU and on the device and classifies it.

Samples are made on the CPU with a fixed seed by calling each OpInfo's sample function directly (the
tracked iterator behind op.sample_inputs() costs ~40 ms per call under pytest) and copied to the device.
A sample that reaches the CPU fallback in strict mode is re-run without it: if its numbers are right it
is FALLBACK, never PASS. Variants: forward, inplace (op.inplace_variant on a clone), out (out= tensors
made on each side), backward (gradients of every input that requires grad, for seeded output grads).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from conformance import statuses
from conformance.compare import Comparison, compare

VARIANTS = ("forward", "inplace", "out", "backward")


RANDOM_SAMPLE = ("random output: the sample draws random numbers (e.g. attention with dropout_p > 0), and the "
                 "device's Philox stream is not the CPU's mt19937, so the values are not comparable")
# Overloads that draw from a generator. OpInfo reseeds around random ops (wrapper_set_seed), so a sample's
# CPU result is reproducible and only the overloads it reached tell that it was random.
_RANDOM_OVERLOAD = re.compile(r"^(aten::)?(bernoulli|native_dropout|_fused_dropout|rand\w*|normal|uniform|multinomial|"
                              r"random|exponential|geometric|cauchy|log_normal|poisson)_?(\.|$)")


def draws_random_numbers(overloads: set[str]) -> bool:
    """Whether a sample whose values differ from the CPU's reached a generator: then the difference is
    the two devices' random streams, not a wrong kernel."""
    return any(_RANDOM_OVERLOAD.match(name) for name in overloads)


def _selects(source: torch.Tensor, dim: int, indices: torch.Tensor, values: torch.Tensor) -> bool:
    """Whether `indices` (along `dim` of `source`, the dim kept or not) pick `values`, NaN for NaN."""
    source = source if source.dim() else source.reshape(1)
    indices = indices.cpu()
    if indices.dim() < source.dim():
        indices = indices.unsqueeze(dim)
    chosen, got = torch.gather(source, dim, indices).reshape(-1), values.cpu().reshape(-1)
    if chosen.is_floating_point():
        if not torch.equal(chosen.isnan(), got.isnan()):
            return False
        chosen, got = chosen[~chosen.isnan()], got[~got.isnan()]
    return torch.equal(chosen, got)


def _compare_ties(op: Any, sample: Any, actual: Any, expected: Any, tolerance: tuple[float, float] | None,
                  device: str) -> Comparison | None:
    """For an op of _TIES_UNSPECIFIED returning (values, indices): the values compared, the indices
    checked to select those values from the input; argsort's indices checked to select what the CPU's
    select. None for every other op or output, and for a sort asked to be stable (its order is specified)."""
    position = _TIES_UNSPECIFIED.get(op.name)
    if position is None or not isinstance(sample.input, torch.Tensor) or \
            (op.name in _STABLE_WHEN_ASKED and sample.kwargs.get("stable")):
        return None
    dim = sample.args[position] if len(sample.args) > position else sample.kwargs.get("dim", -1)
    leaves_actual, leaves_expected = tree_leaves(actual), tree_leaves(expected)
    if op.name == "argsort" and len(leaves_actual) == 1 and len(leaves_expected) == 1:
        indices = leaves_actual[0]
        if indices.shape != leaves_expected[0].shape or indices.device.type != device:
            return None  # compare() says what is wrong
        source = sample.input if sample.input.dim() else sample.input.reshape(1)
        wanted = torch.gather(source, dim, leaves_expected[0].reshape(source.shape))
        is_permutation = torch.equal(indices.cpu().reshape(source.shape).sort(dim).values,
                                     leaves_expected[0].reshape(source.shape).sort(dim).values)
        if not is_permutation or not _selects(sample.input, dim, indices, wanted):
            return Comparison(False, message="indices do not select the CPU's sorted values")
        return Comparison(True)
    if len(leaves_actual) != 2 or len(leaves_expected) != 2 or leaves_expected[1].dtype != torch.long:
        return None
    values = compare(leaves_actual[0], leaves_expected[0], tolerance, device=device)
    if not values.equal:
        return values
    if not _selects(sample.input, dim, leaves_actual[1], leaves_actual[0]):
        return Comparison(False, message="indices do not select the values")
    return values


def _gradients_agree_over_ties(runner: Variant, op: Any, sample: Any, actual: Any, expected: Any,
                               tolerance: tuple[float, float] | None) -> bool:
    """For the backward of an op whose tie order is unspecified (_TIES_UNSPECIFIED, and msort through
    sort): gradients that differ only in which of equal values along the dim received which output
    gradient. Summed over each group of equal values of a row they must agree."""
    if not isinstance(runner, Backward) or not isinstance(sample.input, torch.Tensor) or sample.input.dim() == 0 or \
            (op.name not in _TIES_UNSPECIFIED and op.name != "msort") or \
            (op.name in _STABLE_WHEN_ASKED and sample.kwargs.get("stable")):
        return False
    leaves_actual, leaves_expected = tree_leaves(actual), tree_leaves(expected)
    if len(leaves_actual) != 1 or len(leaves_expected) != 1 or \
            not all(isinstance(t, torch.Tensor) for t in (*leaves_actual, *leaves_expected)):
        return False
    position = _TIES_UNSPECIFIED.get(op.name)
    dim = 0 if position is None else sample.args[position] if len(sample.args) > position else \
        sample.kwargs.get("dim", -1)
    rows = sample.input.detach().movedim(dim, -1).reshape(-1, sample.input.shape[dim])
    row_ids = torch.arange(rows.shape[0]).unsqueeze(1).expand_as(rows)
    keys = torch.stack([row_ids.reshape(-1).double(), rows.reshape(-1).double()])
    _, group = torch.unique(keys, dim=1, return_inverse=True)

    def summed(grad: torch.Tensor) -> torch.Tensor:
        flat = grad.detach().cpu().double().movedim(dim, -1).reshape(-1)
        return torch.zeros(int(group.max()) + 1, dtype=torch.float64).index_add_(0, group, flat)

    return compare(summed(leaves_actual[0]), summed(leaves_expected[0]), tolerance).equal


class SampleSkipped(Exception):
    """The CPU reference could not run this sample (or it has nothing to compare): not the device's fault."""


@dataclass
class CellResult:
    op: str
    variant: str
    dtype: str
    status: str
    samples: int = 0
    sample_statuses: dict[str, int] = field(default_factory=dict)
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    message: str = ""
    overloads: list[str] = field(default_factory=list)
    time_s: float = 0.0
    family: str = ""
    test_id: str = ""
    sample_results: list[dict[str, Any]] = field(default_factory=list)  # the samples that did not PASS
    fallbacks: dict[str, int] = field(default_factory=dict)  # CPU-fallback calls this case caused
    tolerance: dict[str, Any] | None = None  # an override from tolerances.yaml, with its reason

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def overload_name(func: Any) -> str:
    """'add.Tensor', 'mm' (the default overload has no suffix): the aten name without its namespace."""
    base = str(func._schema.name).removeprefix("aten::")
    return base if func._overloadname == "default" else f"{base}.{func._overloadname}"


class OverloadRecorder(TorchDispatchMode):
    """Records every aten overload a device run reached (after composite-implicit decomposition)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.seen.add(overload_name(func))
        return func(*args, **(kwargs or {}))


def _leaves(sample: Any) -> list[Any]:
    return tree_leaves((sample.input, sample.args, sample.kwargs))


def _grad_inputs(sample: Any) -> list[torch.Tensor]:
    return [t for t in _leaves(sample) if isinstance(t, torch.Tensor) and t.requires_grad]


def _call(op: Any, sample: Any, **extra: Any) -> Any:
    return op.op(sample.input, *sample.args, **sample.kwargs, **extra)


def _empty_like_outputs(expected: Any, device: str) -> Any:
    if isinstance(expected, torch.Tensor):
        return torch.empty_like(expected, device=device)
    if isinstance(expected, (tuple, list)) and expected and all(isinstance(t, torch.Tensor) for t in expected):
        return tuple(torch.empty_like(t, device=device) for t in expected)
    raise SampleSkipped("the output is not a tensor or a tuple of tensors")


class Variant:
    """How one variant turns a sample into comparable results on one device."""

    requires_grad = False

    def run(self, op: Any, sample: Any, device: str, context: dict[str, Any]) -> Any:
        raise NotImplementedError


class Forward(Variant):
    def run(self, op: Any, sample: Any, device: str, context: dict[str, Any]) -> Any:
        return sample.output_process_fn_grad(_call(op, sample))


class Inplace(Variant):
    def run(self, op: Any, sample: Any, device: str, context: dict[str, Any]) -> Any:
        if not isinstance(sample.input, torch.Tensor):
            raise SampleSkipped("the input is not a tensor")
        target = sample.input.clone()
        returned = op.inplace_variant(target, *sample.args, **sample.kwargs)
        if returned is not target and isinstance(returned, torch.Tensor) and returned.data_ptr() != target.data_ptr():
            raise AssertionError("the in-place variant returned a new tensor, not its input")
        return target


class Out(Variant):
    def run(self, op: Any, sample: Any, device: str, context: dict[str, Any]) -> Any:
        if "shape" not in context:  # the CPU runs first: its result tells the out= tensors' dtype and shape
            context["shape"] = _call(op, sample)
        out = _empty_like_outputs(context["shape"], device)
        _call(op, sample, out=out)
        if device == "cpu" and not compare(out, context["shape"]).equal:
            # torch 2.13's fft.ihfft2/ihfftn over one dim conjugate into a temporary and never write
            # `out`: an out= reference that is uninitialised memory compares with nothing.
            raise SampleSkipped("the CPU's out= result differs from its own functional result (a PyTorch bug)")
        return out


class Backward(Variant):
    requires_grad = True

    def run(self, op: Any, sample: Any, device: str, context: dict[str, Any]) -> Any:
        inputs = _grad_inputs(sample)
        outputs = [t for t in tree_leaves(sample.output_process_fn_grad(_call(op, sample)))
                   if isinstance(t, torch.Tensor) and t.requires_grad]
        if not inputs or not outputs:
            raise SampleSkipped("no differentiable input or output")
        if "grads" not in context:  # seeded on the CPU, the same numbers for both sides
            generator = torch.Generator().manual_seed(0)
            context["grads"] = [torch.randn(o.shape, dtype=o.dtype, generator=generator) for o in outputs]
        grads = [g.to(device) for g in context["grads"]]
        if len(grads) != len(outputs):
            raise AssertionError(f"{len(outputs)} differentiable outputs, the CPU had {len(grads)}")
        return torch.autograd.grad(outputs, inputs, grads, allow_unused=True)


VARIANT_RUNNERS: dict[str, Variant] = {"forward": Forward(), "inplace": Inplace(), "out": Out(),
                                       "backward": Backward()}


def _mover(device: str, requires_grad: bool, whole_storage: bool = False) -> Callable[[Any], Any]:
    def move(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        moved = value.detach().to(device)
        storage = value.untyped_storage() if whole_storage and value.layout == torch.strided else None
        if storage is not None and storage.nbytes() > moved.nbytes:
            # The whole storage travels and the view is rebuilt on it, so an op that reaches past the
            # view (as_strided with its own offset) finds what it finds on the CPU.
            flat = torch.empty(0, dtype=value.dtype).set_(storage, 0, (storage.nbytes() // value.element_size(),))
            moved = flat.to(device).as_strided(value.size(), value.stride(), value.storage_offset())
        return moved.requires_grad_(value.requires_grad) if requires_grad else moved
    return move


# Sample arguments PyTorch takes on the CPU whatever the device of the input (positions in
# sample.args): moved to the device they are an error on CUDA too, so they stay where the sample made them.
_CPU_ARGUMENTS = {"tensor_split": (0,)}
# Ops that read the sample's storage beyond the view itself.
_WHOLE_STORAGE = ("as_strided",)
# Ops whose index output PyTorch leaves unspecified among equal values: the CPU's partial sort (topk,
# kthvalue's quickselect, sort's introsort when not asked to be stable) picks one tie order, any GPU
# another. Their values must agree; their indices must point at those values.
_TIES_UNSPECIFIED = {"topk": 1, "kthvalue": 1, "sort": 0, "argsort": 0}  # op name -> position of `dim` in args
_STABLE_WHEN_ASKED = {"sort", "argsort"}  # with stable=True their order is specified: compared exactly


def _on_device(sample: Any, device: str, requires_grad: bool, op_name: str = "") -> Any:
    """The sample with its tensors copied to the device, and the CPU named as a device (factory functions'
    device=, to()'s target) replaced by the device: samples are made on the CPU, the op must run on `device`."""
    cpu_arguments = _CPU_ARGUMENTS.get(op_name, ())
    kept = {i: a for i, a in enumerate(sample.args) if i in cpu_arguments}
    moved = sample.transform(_mover(device, requires_grad, op_name.startswith(_WHOLE_STORAGE)))

    def retarget(value: Any) -> Any:
        if isinstance(value, torch.device) and value.type == "cpu":
            return torch.device(device)
        return device if isinstance(value, str) and value == "cpu" else value

    moved.args = tuple(kept[i] if i in kept else retarget(a) for i, a in enumerate(moved.args))
    moved.kwargs = {k: retarget(v) if k == "device" or isinstance(v, torch.device) else v
                    for k, v in moved.kwargs.items()}
    return moved


def _widen(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or not (value.is_floating_point() or value.is_complex()):
        return value
    wide = value.detach().to(torch.complex128 if value.is_complex() else torch.float64)
    return wide.requires_grad_(value.requires_grad)


def _agrees_in_float64(runner: Variant, op: Any, sample: Any, actual: Any, expected: Any,
                       tolerance: tuple[float, float] | None, context: dict[str, Any]) -> bool:
    """For a reduced-precision sample whose device result differs from the CPU's: whether the device
    agrees, within the dtype's tolerance, with the same op on the same values computed in float64 (and
    rounded to the sample's dtypes), the answer both are approximating, or is at least as close to it
    as the CPU. Seen where the exact answer is 0
    and the CPU rounds its way off it (layer_norm and normalize gradients over one element) and where the
    CPU's fused kernel rounds once while the composite formula CUDA and dml run rounds each step
    (bfloat16 addr, closer to float64 than the CPU's on the OpInfo samples)."""
    expected_leaves = tree_leaves(expected)
    narrow = [t for t in expected_leaves if isinstance(t, torch.Tensor)
              and (t.is_floating_point() or t.is_complex()) and t.dtype not in (torch.float64, torch.complex128)]
    if not narrow:
        return False
    try:
        torch.manual_seed(0)
        # The same upstream gradients as both runs had (widened), not new ones drawn in float64.
        wide_context = {k: [_widen(g) for g in v] for k, v in context.items() if k == "grads"}
        wide = tree_leaves(runner.run(op, sample.transform(_widen), "cpu", wide_context))
    except Exception:  # noqa: BLE001 -- no float64 reference: the CPU's result stands
        return False
    if len(wide) != len(expected_leaves):
        return False
    reference = [w.to(e.dtype) if isinstance(w, torch.Tensor) and isinstance(e, torch.Tensor) else w
                 for w, e in zip(wide, expected_leaves, strict=True)]
    if compare(tree_leaves(actual), reference, tolerance).equal:
        return True
    # Or no further from it than the CPU's own result, the reference the suite accepts otherwise.
    device_error = compare(tree_leaves(actual), reference, (0.0, 0.0)).max_abs_error
    return device_error <= compare(expected_leaves, reference, (0.0, 0.0)).max_abs_error


def _error_message(error: BaseException) -> str:
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return f"{type(error).__name__}: {text[:400]}"


class Runner:
    """Runs cases against one backend. `backend` may lack strict()/fallback_counts(): then nothing can be
    classified FALLBACK and the report says so."""

    def __init__(self, backend: Any, device: str, max_samples: int, has_float64: bool) -> None:
        self.backend = backend
        self.device = device
        self.max_samples = max_samples
        self.has_float64 = has_float64
        self.strict = getattr(backend, "strict", None)
        self.fallback_error = getattr(backend, "FallbackError", None)
        self.counts: Callable[[], dict[str, int]] = getattr(backend, "fallback_counts", dict)

    def _strict(self) -> contextlib.AbstractContextManager[Any]:
        return self.strict() if self.strict else contextlib.nullcontext()

    def samples(self, op: Any, dtype: torch.dtype, requires_grad: bool) -> list[Any]:
        torch.manual_seed(0)
        found = []
        for sample in op.sample_inputs_func(op, "cpu", dtype, requires_grad):
            found.append(sample)
            if len(found) >= self.max_samples:
                break
        return found

    def run_sample(self, op: Any, variant: str, sample: Any,
                   tolerance: tuple[float, float] | None) -> tuple[str, Comparison, set[str]]:
        runner = VARIANT_RUNNERS[variant]
        context: dict[str, Any] = {}
        try:
            torch.manual_seed(0)
            expected = runner.run(op, sample, "cpu", context)
        except SampleSkipped as skipped:
            return statuses.SKIP, Comparison(False, message=str(skipped)), set()
        except Exception as error:  # noqa: BLE001 -- the CPU refusing a sample is a SKIP, not a failure
            return statuses.SKIP, Comparison(False, message=f"CPU raised {_error_message(error)}"), set()
        moved = _on_device(sample, self.device, runner.requires_grad, op.name)
        recorder = OverloadRecorder()
        fell_back = False
        try:
            torch.manual_seed(0)
            with self._strict(), recorder:
                actual = runner.run(op, moved, self.device, context)
        except Exception as error:  # noqa: BLE001
            if self.fallback_error is None or not isinstance(error, self.fallback_error):
                return statuses.ERROR, Comparison(False, message=_error_message(error)), recorder.seen
            fell_back = True
            moved = _on_device(sample, self.device, runner.requires_grad, op.name)
            try:
                torch.manual_seed(0)
                with recorder:
                    actual = runner.run(op, moved, self.device, context)
            except Exception as retry_error:  # noqa: BLE001
                return statuses.ERROR, Comparison(False, message=_error_message(retry_error)), recorder.seen
        try:
            outcome = _compare_ties(op, sample, actual, expected, tolerance, self.device) or \
                compare(actual, expected, tolerance, device=self.device)
        except Exception as error:  # noqa: BLE001 -- an output the comparison cannot read is the device's
            return statuses.ERROR, Comparison(False, message=f"comparing raised {_error_message(error)}"), recorder.seen
        if not outcome.equal:
            if draws_random_numbers(recorder.seen):
                return statuses.SKIP, Comparison(False, message=RANDOM_SAMPLE), recorder.seen
            if not _agrees_in_float64(runner, op, sample, actual, expected, tolerance, context) and \
                    not _gradients_agree_over_ties(runner, op, sample, actual, expected, tolerance) and \
                    not self._right_without_the_recorder(runner, op, sample, expected, tolerance, fell_back, context):
                return statuses.FAIL, outcome, recorder.seen
        return (statuses.FALLBACK if fell_back else statuses.PASS), outcome, recorder.seen

    def _right_without_the_recorder(self, runner: Variant, op: Any, sample: Any, expected: Any,
                                    tolerance: tuple[float, float] | None, fell_back: bool,
                                    context: dict[str, Any]) -> bool:
        """Whether the device is right when no dispatch mode watches it. Under any TorchDispatchMode
        (the overload recorder is one) PyTorch's composite out= kernels such as linalg.matrix_rank's and
        the fft.ihfft* ones leave `out` unwritten, on the CPU too; the recorder must not fail them."""
        moved = _on_device(sample, self.device, runner.requires_grad, op.name)
        try:
            torch.manual_seed(0)
            with contextlib.nullcontext() if fell_back else self._strict():
                actual = runner.run(op, moved, self.device, dict(context))
            return compare(actual, expected, tolerance, device=self.device).equal
        except Exception:  # noqa: BLE001 -- the failure stands
            return False

    def run_case(self, op: Any, variant: str, dtype: torch.dtype,
                 tolerance: tuple[float, float] | None = None) -> CellResult:
        name = getattr(op, "full_name", op.name)
        cell = CellResult(name, variant, str(dtype).removeprefix("torch."), statuses.SKIP)
        started = time.perf_counter()
        if dtype in (torch.float64, torch.complex128) and not self.has_float64:
            cell.message = "the adapter has no shader-f64 (torch_dml.has_float64_support() is False)"
            return cell
        try:
            samples = self.samples(op, dtype, VARIANT_RUNNERS[variant].requires_grad)
        except Exception as error:  # noqa: BLE001
            cell.message = f"sample generation raised {_error_message(error)}"
            return cell
        before = self.counts()
        found: list[str] = []
        overloads: set[str] = set()
        skip_reasons: list[str] = []
        for index, sample in enumerate(samples):
            status, outcome, seen = self.run_sample(op, variant, sample, tolerance)
            found.append(status)
            overloads |= seen
            cell.max_abs_error = max(cell.max_abs_error, outcome.max_abs_error)
            cell.max_rel_error = max(cell.max_rel_error, outcome.max_rel_error)
            if status == statuses.SKIP:
                skip_reasons.append(outcome.message)
            elif status != statuses.PASS:
                cell.sample_results.append({"index": index, "status": status, "message": outcome.message,
                                            "max_abs_error": outcome.max_abs_error,
                                            "max_rel_error": outcome.max_rel_error})
        after = self.counts()
        cell.fallbacks = {k: n - before.get(k, 0) for k, n in after.items() if n - before.get(k, 0) > 0}
        real = [s for s in found if s != statuses.SKIP]
        cell.status = statuses.worst(real) if real else statuses.SKIP
        # The message of the first sample with the case's (worst) status
        cell.message = next((r["message"] for r in cell.sample_results if r["status"] == cell.status), "")
        if not real:
            cell.message = (f"no sample was comparable ({skip_reasons[0]})" if skip_reasons
                            else "the OpInfo gave no sample for this dtype")
        cell.samples = len(found)
        cell.sample_statuses = {s: found.count(s) for s in sorted(set(found))}
        cell.overloads = sorted(overloads)
        cell.time_s = round(time.perf_counter() - started, 4)
        return cell

