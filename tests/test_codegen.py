"""The files generated from the op tables (backend/ops.yaml, backend/ops/*.yaml) are up to date, the drift
check notices a change, and every overload a table lists is registered for dml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from backend.codegen import gen_elementwise, gen_reductions, gen_registrations, schema

ROOT = Path(__file__).resolve().parent.parent


def test_generated_files_match_the_table():
    result = subprocess.run([sys.executable, "-m", "backend.codegen", "--check"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_changed_row_changes_the_output():
    rows = gen_elementwise.load_rows()
    before = gen_elementwise.render_ops_header(rows)
    rows[0].exprs["float"] = "a + T(1)"
    assert gen_elementwise.render_ops_header(rows) != before


@pytest.mark.parametrize("family", [gen_elementwise, gen_reductions], ids=["elementwise", "reductions"])
def test_every_overload_of_a_table_is_registered_for_dml_once(family):
    import torch_dml  # noqa: F401  (registers the kernels)

    text = family.REGISTRATIONS.read_text()
    overloads = [o for row in family.load_rows() for o in row.overloads]
    assert len(overloads) == len(set(overloads))
    for overload in overloads:
        assert text.count(f'm.impl("{overload}",') == 1, overload
        assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{overload}", "PrivateUse1"), overload


def test_a_changed_reduction_row_changes_the_registrations():
    rows = gen_reductions.load_rows()
    signatures = {o: schema.read(o) for r in rows for o in r.overloads}
    before = gen_reductions.render_registrations(rows, signatures)
    rows[0].dtypes = ["float"]
    assert gen_reductions.render_registrations(rows, signatures) != before


def test_reduction_rows_reject_unknown_dtype_classes(tmp_path):
    table = tmp_path / "reductions.yaml"
    table.write_text("- {name: sum, dtypes: [complex], overloads: {sum.IntList_out: sum_out}}\n")
    with pytest.raises(ValueError, match="sum: unknown 'complex'"):
        gen_reductions.load_rows(table)


# Files whose PrivateUse1 registrations stay hand-written, each for the reason backend/ops/native.yaml
# gives; a new kernel file registers through the table.
HAND_REGISTERED = {"attention_ops", "copy", "unsupported_ops"}
HAND_BLOCK = "TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)"


def test_hand_written_kernels_register_through_the_table():
    families = {f.name: f for f in gen_registrations.load_families()}
    for source in sorted(gen_registrations.ATEN.glob("*.cpp")):
        text = source.read_text()
        if source.stem in HAND_REGISTERED:
            assert source.stem not in families, source.name
            continue
        assert HAND_BLOCK not in text, f"{source.name} registers by hand: list it in backend/ops/native.yaml"
        include = f'#include "aten/generated/registrations/{source.stem}.inc"'
        if source.stem in families:
            assert text.count(include) == 1, f"{source.name} does not include its generated registrations"


# Files that reach the CPU by hand, for the reasons backend/ops/native.yaml gives: every other fallback
# branch is generated from a row's rule.
HAND_FALLBACK = {"fallback", "unsupported_ops", "optimizer_ops", "convolution_ops"}


def test_fallback_branches_are_generated():
    for source in sorted(gen_registrations.ATEN.glob("*.cpp")):
        if source.stem in HAND_FALLBACK:
            continue
        text = source.read_text()
        for call in ("call_fallback_fn", "cpu_fallback", "enter_fallback"):
            assert call not in text, f"{source.name} falls back by hand ({call}): give its row a rule in native.yaml"


def test_registration_table_change_changes_the_block():
    family = gen_registrations.load_families()[0]
    before = gen_registrations.render_inc(family)
    family.entries["abs"] = gen_registrations.Entry("some_function")
    after = gen_registrations.render_inc(family)
    assert after != before and 'm.impl("abs", TORCH_FN(some_function));' in after


def test_a_fallback_rule_becomes_the_one_fallback_branch(tmp_path):
    table = tmp_path / "native.yaml"
    table.write_text("softmax_ops:\n  rule: {dtypes: [float], takes: fits(self)}\n  _softmax.out: softmax_out\n"
                     "  _log_softmax.out: {kernel: log_softmax_out, dtypes: [f64], needs: [shader-int64], takes: null}\n"
                     "elementwise_special_ops:\n  clamp.Tensor: {kernel: clamp_tensor, tries: true}\n  clamp_.Tensor: {kernel: clamp_, tries: true}\n"
                     "  aminmax.out: {kernel: aminmax_out, tries: true, inputs: [self]}\n")
    text = "".join(gen_registrations.render_inc(f) for f in gen_registrations.load_families(table))
    fallback = "at::native::call_fallback_fn<&cpu_fallback, at::_ops::{}>::call({})"
    assert ("  if (!(computes_on(self, kFloatClass) && fits(self)))\n    return "
            + fallback.format("_softmax_out", "self, dim, half_to_float, out")) in text
    # A row's own keys replace the family's rule.
    assert ("  if (!(computes_on(self, kF64Class, {runtime::Feature::ShaderInt64})))\n    return "
            + fallback.format("_log_softmax_out", "self, dim, half_to_float, out")) in text
    # A kernel that may decline: its optional result, the written argument, or the outputs' tuple.
    assert "if (auto result = clamp_tensor(self, min, max)) return *std::move(result);" in text
    assert "if (clamp_(self, min, max)) return self;" in text
    assert "return std::tuple<at::Tensor&, at::Tensor&>(min, max);" in text
    assert text.count('m.impl("') == 5 and 'TORCH_FN(native__softmax_out)' in text


def test_a_rule_with_an_unknown_key_or_dtype_is_refused(tmp_path):
    table = tmp_path / "native.yaml"
    table.write_text("softmax_ops:\n  _softmax.out: {kernel: softmax_out, dtype: [float]}\n")
    with pytest.raises(SystemExit, match="unknown keys"):
        gen_registrations.load_families(table)
    table.write_text("softmax_ops:\n  _softmax.out: {kernel: softmax_out, dtypes: [complex]}\n")
    with pytest.raises(SystemExit, match="complex"):
        gen_registrations.load_families(table)


def test_every_table_overload_has_a_dml_kernel():
    import torch_dml  # noqa: F401  (registers the kernels)

    missing = [f"{family.name}: {overload}" for family in gen_registrations.load_families()
               for overload in family.entries
               if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{overload}".removesuffix("."),
                                                                     "PrivateUse1")]
    assert not missing, missing


def test_coverage_page_lists_every_table_overload():
    page = gen_registrations.DOC.read_text()
    for family in gen_registrations.load_families():
        for overload in family.entries:
            assert f"`{overload}`" in page, overload


def test_a_hole_named_only_in_a_comment_is_refused_at_build_time(tmp_path):
    from backend.codegen import gen_wgsl

    (tmp_path / "family.wgsl").write_text("// reads {{width}} values\nfn f() -> u32 { return {{count}}u; }\n")
    with pytest.raises(SystemExit, match="width"):
        gen_wgsl.load_families(tmp_path)
    (tmp_path / "family.wgsl").write_text("// reads {{count}} values\nfn f() -> u32 { return {{count}}u; }\n")
    assert gen_wgsl.load_families(tmp_path)[0].holes == ["count"]
