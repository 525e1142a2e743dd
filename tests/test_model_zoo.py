"""Real architectures (benchmarks/zoo.py) train a few steps on dml as they do on the CPU: losses,
gradients, parameters and running statistics after training, and an eval-mode forward agree. Each
model's CPU fallbacks are exactly the ones it is known to still take (benchmarks.zoo.KNOWN_FALLBACKS;
the target is none): a new fallback fails, and so does a fixed one until the list is updated. Models
with none train in strict mode.

The comparison runs in float64 where the adapter has it: in float32 a pre-activation within rounding
of a ReLU's kink (1e-7 here, -1e-7 there, from a different summation order in the convolution above)
flips the unit on one side only, and the gradients of every layer below it move by 1e-2. That is not a
bug of either device, and float64 makes it vanishingly rare. The float32 kernels are what the fallback
and strict-mode tests run, and what the conformance suite compares op by op."""

from __future__ import annotations

import pytest
import torch
import torch_dml

from benchmarks import zoo

STEPS = 2
# Compared runs use SGD: Adam divides each gradient by its own magnitude, so a gradient that is only
# rounding noise (attention's key bias has an exactly zero one) becomes a full step in a direction the
# noise picks, on the CPU as on any GPU. The strict runs keep each model's own optimizer.
COMPARED_WITH = "sgd"
COMPARED_IN = torch.float64 if torch_dml.has_float64_support(0) else torch.float32
TOLERANCE = {torch.float64: {"rtol": 1e-7, "atol": 1e-9}, torch.float32: {"rtol": 2e-3, "atol": 2e-4}}


def _close(name: str, actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> None:
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}")
    else:
        assert torch.equal(actual, expected), name


@pytest.fixture(scope="module")
def cpu_runs() -> dict[str, zoo.Trained]:
    return {}


def _cpu(cpu_runs: dict[str, zoo.Trained], model: zoo.Model) -> zoo.Trained:
    if model.name not in cpu_runs:
        cpu_runs[model.name] = zoo.train(model, "cpu", STEPS, optimizer=COMPARED_WITH, dtype=COMPARED_IN)
    return cpu_runs[model.name]


@pytest.mark.parametrize("model", zoo.MODELS, ids=lambda m: m.name)
def test_trains_like_the_cpu(model: zoo.Model, dml: torch.device, cpu_runs: dict[str, zoo.Trained]) -> None:
    on_dml = zoo.train(model, dml, STEPS, optimizer=COMPARED_WITH, dtype=COMPARED_IN)
    expected = _cpu(cpu_runs, model)
    tolerance = TOLERANCE[COMPARED_IN]
    torch.testing.assert_close(torch.tensor(on_dml.losses), torch.tensor(expected.losses), **tolerance)
    assert on_dml.grads.keys() == expected.grads.keys()
    for name, grad in expected.grads.items():
        _close(f"grad {name}", on_dml.grads[name], grad, **tolerance)
    for name, value in expected.state.items():
        _close(f"state {name}", on_dml.state[name], value, **tolerance)
    _close("eval output", on_dml.eval_output, expected.eval_output, **tolerance)


@pytest.mark.parametrize("model", zoo.MODELS, ids=lambda m: m.name)
def test_falls_back_only_where_known(model: zoo.Model, dml: torch.device) -> None:
    torch_dml.reset_fallback_counts()
    zoo.train(model, dml, 1)
    fallbacks = set(torch_dml.fallback_counts())
    assert fallbacks == zoo.KNOWN_FALLBACKS[model.name], (
        f"{model.name} fell back on {sorted(fallbacks)}; known: {sorted(zoo.KNOWN_FALLBACKS[model.name])}")


@pytest.mark.parametrize("model", [
    pytest.param(m, marks=pytest.mark.xfail(bool(zoo.KNOWN_FALLBACKS[m.name]), raises=torch_dml.FallbackError,
                                            strict=True, reason="known fallbacks: "
                                            + ", ".join(sorted(zoo.KNOWN_FALLBACKS[m.name]))))
    for m in zoo.MODELS], ids=lambda m: m.name)
def test_trains_in_strict_mode(model: zoo.Model, dml: torch.device, strict: None) -> None:
    trained = zoo.train(model, dml, 1)
    assert torch.isfinite(torch.tensor(trained.losses)).all()


def test_report_counts_native_ops_and_fallbacks(dml: torch.device) -> None:
    from benchmarks import zoo_report

    model = zoo.BY_NAME["gpt"]
    row = zoo_report.measure(model, ["dml"])
    assert {f"aten::{name}" for name in row["fallback_calls_per_step"]} == zoo.KNOWN_FALLBACKS["gpt"]
    assert row["native_ops"] > 20 and row["native_calls_per_step"] > row["native_ops"]
    assert row["max_relative_difference"]["loss"] < 1e-4
    page = zoo_report.markdown({"generated": "now", "adapter": "test", "torch": "x", "devices": ["dml"],
                                "models": [row]})
    assert "| gpt |" in page
