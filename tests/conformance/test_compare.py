"""The comparison rules of the conformance suite."""

import torch

from conformance.compare import compare


def test_equal_tensors_and_dtype_or_shape_mismatch():
    x = torch.arange(6.0).reshape(2, 3)
    assert compare(x, x.clone()).equal
    assert not compare(x.double(), x).equal
    assert "shape" in compare(x.t(), x).message


def test_float_tolerance_scales_with_dtype():
    x = torch.ones(4)
    assert compare(x + 5e-6, x).equal
    assert not compare(x + 1e-3, x).equal
    assert compare((x + 5e-3).half(), x.half()).equal
    assert not compare((x + 5e-2).half(), x.half()).equal


def test_nan_and_inf_positions_must_match():
    e = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare(e.clone(), e).equal
    assert not compare(torch.tensor([1.0, 2.0, float("inf")]), e).equal
    assert not compare(torch.tensor([1.0, float("nan"), -float("inf")]), e).equal


def test_integers_compare_exactly_and_nested_outputs():
    a = torch.tensor([1, 2, 3])
    assert not compare(a + torch.tensor([0, 0, 1]), a).equal
    assert compare((a, [a, 2.0]), (a.clone(), [a.clone(), 2.0])).equal
    assert not compare((a,), (a, a)).equal


def test_errors_are_measured():
    result = compare(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]))
    assert not result.equal and abs(result.max_abs_error - 0.5) < 1e-12 and abs(result.max_rel_error - 0.25) < 1e-12


def test_device_and_none_are_checked():
    x = torch.ones(2)
    assert "expected dml" in compare(x, x, device="dml").message
    assert compare(x, x, device="cpu").equal
    assert not compare((x, x), (x, None)).equal
    assert compare((x, None), (x, None)).equal
    assert not compare("a", "b").equal


def test_float8_compares_without_float8_kernels():
    x = torch.tensor([1.0, 2.0, float("nan")]).to(torch.float8_e4m3fn)
    assert compare(x.clone(), x).equal
    assert not compare(torch.tensor([1.0, 4.0, float("nan")]).to(torch.float8_e4m3fn), x).equal
