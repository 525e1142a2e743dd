"""Comparison tolerances: dtype defaults, and per (op, variant, dtype) overrides from data with a reason."""

import pytest
import torch

from conformance import tolerances
from conformance.compare import DEFAULT_TOLERANCES, compare


def test_overrides_match_op_variant_and_dtype(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("tolerances:\n"
                    "- op: softmax\n  variants: [backward]\n  dtypes: [float16]\n  rtol: 0.02\n  atol: 0.01\n"
                    "  reason: rounding\n"
                    "- op: softmax\n  rtol: 0.001\n  atol: 0.001\n  reason: general\n")
    table = tolerances.load(path)
    first = tolerances.lookup("softmax", "backward", "float16", table)
    assert first is not None and (first.rtol, first.atol, first.reason) == (0.02, 0.01, "rounding")
    general = tolerances.lookup("softmax", "forward", "float16", table)
    assert general is not None and general.reason == "general"
    assert tolerances.lookup("exp", "forward", "float16", table) is None


def test_one_entry_can_name_several_ops(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("tolerances:\n- ops: [fmod, nextafter]\n  variants: [forward]\n  rtol: 0\n  atol: 0\n"
                    "  reason: exact\n")
    table = tolerances.load(path)
    for op in ("fmod", "nextafter"):
        found = tolerances.lookup(op, "forward", "float16", table)
        assert found is not None and (found.rtol, found.atol) == (0.0, 0.0)
    assert tolerances.lookup("fmod", "backward", "float16", table) is None
    assert tolerances.lookup("exp", "forward", "float16", table) is None


@pytest.mark.parametrize("text, message", [("- op: a\n  rtol: 1\n  atol: 1\n", "no reason"),
                                           ("- op: a\n  rtol: 1\n  reason: r\n", "both atol and rtol")])
def test_entries_are_checked(tmp_path, text, message):
    path = tmp_path / "t.yaml"
    path.write_text("tolerances:\n" + text)
    with pytest.raises(ValueError, match=message):
        tolerances.load(path)


def test_shipped_file_loads_with_reasons():
    table = tolerances.load()
    assert table and all(t.reason for t in table)


def test_defaults_scale_with_dtype_and_overrides_loosen():
    expected = torch.ones(8)
    off = expected * (1 + 1e-3)
    assert not compare(off, expected).equal
    assert compare(off, expected, tolerance=(1e-2, 0.0)).equal
    assert compare(off.half(), expected.half()).equal  # within float16's default
    rtol, _ = DEFAULT_TOLERANCES[torch.float32]
    assert compare(expected * (1 + rtol / 2), expected).equal
