"""The runner against the real backend: native, fallback and wrong results are told apart."""

import pytest
import torch
import torch_dml
from torch.testing._internal.common_methods_invocations import op_db

from conformance import statuses
from conformance.runner import Runner

OPS = {op.name: op for op in op_db if not op.variant_test_name}


@pytest.fixture(scope="module")
def runner():
    return Runner(torch_dml, "dml", max_samples=2, has_float64=torch_dml.has_float64_support(0))


def test_native_op_passes(runner):
    cell = runner.run_cell(OPS["mm"], torch.float32)
    assert cell.status == statuses.PASS, cell
    assert "mm" in cell.overloads and cell.samples == 2


def test_op_without_a_kernel_is_fallback_not_pass(runner):
    cell = runner.run_cell(OPS["cumsum"], torch.float32)
    assert cell.status == statuses.FALLBACK, cell


def test_wrong_numbers_are_fail(runner, monkeypatch):
    op = OPS["mm"]
    real = op.op
    monkeypatch.setattr(op, "op", lambda a, b: real(a, b) + (1.0 if a.device.type == "dml" else 0.0))
    cell = runner.run_cell(op, torch.float32)
    assert cell.status in (statuses.FAIL, statuses.FALLBACK) and cell.status != statuses.PASS


def test_random_ops_are_skipped_with_a_reason(runner):
    cell = runner.run_cell(OPS["bernoulli"], torch.float32)
    assert cell.status == statuses.SKIP and "random" in cell.message
