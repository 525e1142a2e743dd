"""The runner against the real backend: native, fallback and wrong results are told apart, in every variant."""

import pytest
import torch
import torch_dml
from torch.testing._internal.common_methods_invocations import op_db

from conformance import statuses
from conformance.runner import Runner

OPS = {op.name: op for op in reversed(op_db) if not op.variant_test_name}


@pytest.fixture(scope="module")
def runner():
    return Runner(torch_dml, "dml", max_samples=2, has_float64=torch_dml.has_float64_support(0))


def test_native_op_passes_and_records_its_overloads(runner):
    cell = runner.run_case(OPS["add"], "forward", torch.float32)
    assert cell.status == statuses.PASS, cell
    assert "add.Tensor" in cell.overloads and cell.samples == 2 and not cell.fallbacks


def test_op_without_a_kernel_is_fallback_not_pass(runner):
    cell = runner.run_case(OPS["mode"], "forward", torch.float32)
    assert cell.status == statuses.FALLBACK, cell
    assert any("mode" in name for name in cell.fallbacks), cell.fallbacks


@pytest.mark.parametrize("variant", ["inplace", "out", "backward"])
def test_variants_of_a_native_op_pass(runner, variant):
    cell = runner.run_case(OPS["mul"], variant, torch.float32)
    assert cell.status in (statuses.PASS, statuses.FALLBACK), cell
    assert cell.samples == 2


def test_backward_compares_gradients(runner, monkeypatch):
    """A device op whose gradient is wrong (forward right) fails only the backward variant."""
    op = OPS["sin"]

    class WrongGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * torch.cos(x) * (2.0 if x.device.type == "dml" else 1.0)

    monkeypatch.setattr(op, "op", WrongGrad.apply)
    assert runner.run_case(op, "forward", torch.float32).status in (statuses.PASS, statuses.FALLBACK)
    cell = runner.run_case(op, "backward", torch.float32)
    assert cell.status == statuses.FAIL, cell
    assert cell.max_abs_error > 0 and cell.sample_results[0]["status"] == statuses.FAIL


def test_wrong_numbers_are_fail(runner, monkeypatch):
    op = OPS["mm"]
    real = op.op
    monkeypatch.setattr(op, "op", lambda a, b: real(a, b) + (1.0 if a.device.type == "dml" else 0.0))
    cell = runner.run_case(op, "forward", torch.float32)
    assert cell.status == statuses.FAIL and cell.max_abs_error == pytest.approx(1.0, abs=1e-3), cell


def test_a_device_exception_is_error(runner, monkeypatch):
    op = OPS["neg"]
    real = op.op

    def broken(x, *args, **kwargs):
        if x.device.type == "dml":
            raise RuntimeError("kernel exploded")
        return real(x, *args, **kwargs)

    monkeypatch.setattr(op, "op", broken)
    cell = runner.run_case(op, "forward", torch.float32)
    assert cell.status == statuses.ERROR and "kernel exploded" in cell.message


def test_missing_float64_is_a_skip_with_the_reason():
    runner = Runner(torch_dml, "dml", max_samples=1, has_float64=False)
    cell = runner.run_case(OPS["add"], "forward", torch.float64)
    assert cell.status == statuses.SKIP and "shader-f64" in cell.message


def test_a_sample_the_cpu_refuses_is_skipped(runner):
    cell = runner.run_case(OPS["abs"], "inplace", torch.complex64)  # in-place abs of complex: CPU raises
    assert cell.status == statuses.SKIP and "CPU raised" in cell.message


def test_tolerance_override_changes_the_verdict(runner, monkeypatch):
    op = OPS["exp"]
    real = op.op
    monkeypatch.setattr(op, "op", lambda x: real(x) * (1 + 1e-3 if x.device.type == "dml" else 1))
    assert runner.run_case(op, "forward", torch.float32).status == statuses.FAIL
    assert runner.run_case(op, "forward", torch.float32, tolerance=(1e-2, 1e-2)).status != statuses.FAIL


def test_factory_functions_are_retargeted_to_the_device(runner):
    """Samples are made on the CPU: device='cpu' in a factory's kwargs must become the device under test."""
    for name in ("ones", "arange", "full"):
        cell = runner.run_case(OPS[name], "forward", torch.float32)
        assert cell.status in (statuses.PASS, statuses.FALLBACK), cell
        assert "on cpu" not in cell.message


def test_the_message_is_the_worst_samples(runner, monkeypatch):
    op = OPS["mul"]  # several samples per dtype
    real = op.op
    calls = []

    def flaky(x, *args, **kwargs):
        if x.device.type != "dml":
            return real(x, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            return real(x, *args, **kwargs) + 1  # first sample: wrong numbers (FAIL)
        raise RuntimeError("second sample raised")  # second: ERROR, the worse status

    monkeypatch.setattr(op, "op", flaky)
    cell = runner.run_case(op, "forward", torch.float32)
    assert cell.status == statuses.ERROR and "second sample raised" in cell.message
    assert [r["status"] for r in cell.sample_results] == [statuses.FAIL, statuses.ERROR]


def test_a_sample_that_draws_random_numbers_is_skipped_not_failed(runner, monkeypatch):
    # Attention with dropout_p > 0: the device's Philox stream is not the CPU's, so values differ.
    op = OPS["neg"]
    monkeypatch.setattr(op, "op", lambda x, *args, **kwargs: torch.nn.functional.dropout(x, 0.5, training=True))
    cell = runner.run_case(op, "forward", torch.float32)
    assert cell.status == statuses.SKIP and "random" in cell.message, cell


def test_a_wrong_device_result_fails_even_where_the_float64_reference_is_consulted(runner, monkeypatch):
    op = OPS["add"]
    real = op.op
    monkeypatch.setattr(op, "op", lambda a, b, **kw: real(a, b, **kw) + (1.0 if a.device.type == "dml" else 0.0))
    cell = runner.run_case(op, "forward", torch.bfloat16)
    assert cell.status == statuses.FAIL, cell


def test_the_cpu_being_further_from_float64_than_the_device_is_not_a_failure(runner, monkeypatch):
    # The CPU's bfloat16 result off (as its fused addr or a gradient that should be exactly 0 can be),
    # the device's right: the float64 computation of the same op decides.
    op = OPS["add"]
    real = op.op

    def off_on_the_cpu(a, b, **kw):
        wrong = a.device.type == "cpu" and a.dtype == torch.bfloat16
        return real(a, b, **kw) + (0.5 if wrong else 0.0)

    monkeypatch.setattr(op, "op", off_on_the_cpu)
    cell = runner.run_case(op, "forward", torch.bfloat16)
    assert cell.status == statuses.PASS, cell


def test_topk_ties_compare_values_and_check_indices():
    """topk's tie order is unspecified: other indices of equal values pass, wrong values or indices
    that do not select the values fail."""
    from types import SimpleNamespace

    from conformance.runner import _compare_ties

    op = SimpleNamespace(name="topk")
    x = torch.tensor([[3, 1, 3, 2, 3]])
    sample = SimpleNamespace(input=x, args=(2, 1), kwargs={})
    expected = torch.topk(x, 2, 1)
    other_ties = (expected.values, torch.tensor([[2, 4]]))
    assert _compare_ties(op, sample, other_ties, expected, None, "cpu").equal
    assert not _compare_ties(op, sample, (expected.values, torch.tensor([[1, 4]])), expected, None, "cpu").equal
    assert not _compare_ties(op, sample, (torch.tensor([[3, 2]]), torch.tensor([[0, 3]])), expected, None,
                             "cpu").equal
    assert _compare_ties(SimpleNamespace(name="mode"), sample, other_ties, expected, None, "cpu") is None


def test_sort_and_kthvalue_ties_unless_stable_was_asked():
    """sort / argsort without stable=True and kthvalue leave the tie order unspecified too: another
    order of equal values passes, indices that do not sort fail; a stable sort is compared exactly."""
    from types import SimpleNamespace

    from conformance.runner import _compare_ties

    x = torch.tensor([[3, 1, 3, 2, 3]])
    unstable = SimpleNamespace(input=x, args=(1,), kwargs={})
    expected = torch.sort(x, dim=1, stable=True)
    other_ties = (expected.values, torch.tensor([[1, 3, 4, 2, 0]]))
    sort, argsort = SimpleNamespace(name="sort"), SimpleNamespace(name="argsort")
    assert _compare_ties(sort, unstable, other_ties, expected, None, "cpu").equal
    assert _compare_ties(argsort, unstable, other_ties[1], expected.indices, None, "cpu").equal
    assert not _compare_ties(argsort, unstable, torch.tensor([[3, 1, 4, 0, 2]]), expected.indices, None, "cpu").equal
    assert not _compare_ties(argsort, unstable, torch.tensor([[1, 3, 0, 0, 2]]), expected.indices, None, "cpu").equal
    stable = SimpleNamespace(input=x, args=(1,), kwargs={"stable": True})
    assert _compare_ties(sort, stable, other_ties, expected, None, "cpu") is None
    kth = SimpleNamespace(input=x, args=(4, 1), kwargs={})  # keepdim=False: the indices lose the dim
    assert _compare_ties(SimpleNamespace(name="kthvalue"), kth, (torch.tensor([3]), torch.tensor([4])),
                         torch.kthvalue(x, 4, 1), None, "cpu").equal
    assert not _compare_ties(SimpleNamespace(name="kthvalue"), kth, (torch.tensor([3]), torch.tensor([3])),
                             torch.kthvalue(x, 4, 1), None, "cpu").equal


def test_gradients_through_ties_compare_per_group_of_equal_values():
    """The backward of a sort with unspecified ties may route the output gradients to another of equal
    inputs: the sums over each row's equal values must still agree."""
    from types import SimpleNamespace

    from conformance.runner import VARIANT_RUNNERS, _gradients_agree_over_ties

    backward = VARIANT_RUNNERS["backward"]
    sample = SimpleNamespace(input=torch.tensor([[3.0, 1.0, 3.0], [2.0, 2.0, 5.0]]), args=(1,), kwargs={})
    expected = (torch.tensor([[0.5, 1.0, 2.0], [4.0, 8.0, 16.0]]),)
    swapped = (torch.tensor([[2.0, 1.0, 0.5], [8.0, 4.0, 16.0]]),)
    moved_across = (torch.tensor([[2.0, 0.5, 1.0], [8.0, 4.0, 16.0]]),)
    sort = SimpleNamespace(name="sort")
    assert _gradients_agree_over_ties(backward, sort, sample, swapped, expected, None)
    assert not _gradients_agree_over_ties(backward, sort, sample, moved_across, expected, None)
    stable = SimpleNamespace(input=sample.input, args=(1,), kwargs={"stable": True})
    assert not _gradients_agree_over_ties(backward, sort, stable, swapped, expected, None)
    assert not _gradients_agree_over_ties(VARIANT_RUNNERS["forward"], sort, sample, swapped, expected, None)
