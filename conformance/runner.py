"""Runs every (op, dtype) of the selected OpInfos on the CPU and on the device and classifies it.

Samples are made on the CPU with a fixed seed by calling each OpInfo's sample function directly (the
tracked iterator behind op.sample_inputs() costs ~40 ms per call under pytest) and copied to the device.
A sample that reaches the CPU fallback is re-run outside strict mode: if its numbers are right it is
FALLBACK, never PASS.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from conformance import statuses
from conformance.compare import compare

RANDOM_OPS = {"bernoulli", "multinomial", "normal", "rand_like", "randn_like", "randint_like", "uniform",
              "nn.functional.dropout", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
              "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.rrelu", "randint", "randn",
              "rand", "cauchy", "exponential", "geometric", "log_normal", "empty", "empty_like",
              "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class OverloadRecorder(TorchDispatchMode):
    """Records every aten overload a device run reached."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.add(str(func._schema.name).removeprefix("aten::") + (
            f".{func._overloadname}" if func._overloadname != "default" else ""))
        return func(*args, **(kwargs or {}))


def _to(device: str):
    def move(t: torch.Tensor) -> torch.Tensor:
        return t.to(device) if isinstance(t, torch.Tensor) else t
    return move


def _call(op: Any, sample: Any) -> Any:
    return sample.output_process_fn_grad(op.op(sample.input, *sample.args, **sample.kwargs))


class Runner:
    def __init__(self, backend: Any, device: str, max_samples: int, has_float64: bool) -> None:
        self.backend = backend
        self.device = device
        self.max_samples = max_samples
        self.has_float64 = has_float64
        self.strict = getattr(backend, "strict", None)
        self.fallback_error = getattr(backend, "FallbackError", None)

    def _strict(self) -> contextlib.AbstractContextManager[None]:
        return self.strict() if self.strict else contextlib.nullcontext()

    def samples(self, op: Any, dtype: torch.dtype) -> list[Any]:
        torch.manual_seed(0)
        found = []
        for sample in op.sample_inputs_func(op, "cpu", dtype, False):
            found.append(sample)
            if len(found) >= self.max_samples:
                break
        return found

    def run_sample(self, op: Any, sample: Any) -> tuple[str, float, float, str, set[str]]:
        try:
            torch.manual_seed(0)
            expected = _call(op, sample)
        except Exception as error:  # noqa: BLE001 -- the CPU refusing a sample is a SKIP, not a failure
            return statuses.SKIP, 0.0, 0.0, f"CPU raised {type(error).__name__}", set()
        moved = sample.transform(_to(self.device))
        recorder = OverloadRecorder()
        fell_back = False
        try:
            with self._strict(), recorder:
                actual = _call(op, moved)
        except Exception as error:  # noqa: BLE001
            if self.fallback_error is None or not isinstance(error, self.fallback_error):
                return statuses.ERROR, 0.0, 0.0, f"{type(error).__name__}: {str(error)[:300]}", recorder.seen
            fell_back = True
            try:
                with recorder:
                    actual = _call(op, moved)
            except Exception as error2:  # noqa: BLE001
                return statuses.ERROR, 0.0, 0.0, f"{type(error2).__name__}: {str(error2)[:300]}", recorder.seen
        outcome = compare(actual, expected)
        if not outcome.equal:
            return statuses.FAIL, outcome.max_abs_error, outcome.max_rel_error, outcome.message, recorder.seen
        status = statuses.FALLBACK if fell_back else statuses.PASS
        return status, outcome.max_abs_error, outcome.max_rel_error, "", recorder.seen

    def run_cell(self, op: Any, dtype: torch.dtype) -> CellResult:
        name = op.full_name if hasattr(op, "full_name") else op.name
        cell = CellResult(name, "forward", str(dtype).removeprefix("torch."), statuses.SKIP)
        started = time.perf_counter()
        if op.name in RANDOM_OPS or name in RANDOM_OPS:
            cell.message = "random or uninitialised output: not comparable to the CPU"
            return cell
        if dtype in (torch.float64, torch.complex128) and not self.has_float64:
            cell.message = "the adapter has no shader-f64"
            return cell
        try:
            samples = self.samples(op, dtype)
        except Exception as error:  # noqa: BLE001
            cell.message = f"sample generation raised {type(error).__name__}"
            return cell
        found: list[str] = []
        overloads: set[str] = set()
        for sample in samples:
            status, abs_err, rel_err, message, seen = self.run_sample(op, sample)
            found.append(status)
            overloads |= seen
            cell.max_abs_error = max(cell.max_abs_error, abs_err)
            cell.max_rel_error = max(cell.max_rel_error, rel_err)
            if message and not cell.message and status not in (statuses.PASS, statuses.SKIP):
                cell.message = message
        real = [s for s in found if s != statuses.SKIP]
        cell.status = statuses.worst(real) if real else statuses.SKIP
        if not real:
            cell.message = cell.message or "no sample ran on the CPU"
        cell.samples = len(found)
        cell.sample_statuses = {s: found.count(s) for s in sorted(set(found))}
        cell.overloads = sorted(overloads)
        cell.time_s = round(time.perf_counter() - started, 4)
        return cell
