"""The files generated from the op tables (backend/ops.yaml, backend/ops/*.yaml) are up to date, the drift
check notices a change, and every overload a table lists is registered for dml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from backend.codegen import gen_elementwise, gen_reductions, gen_registrations

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
    signatures = {o: gen_reductions.signature(o) for r in rows for o in r.overloads}
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


def test_registration_table_change_changes_the_block():
    family = gen_registrations.load_families()[0]
    before = gen_registrations.render_inc(family)
    family.kernels["abs"] = "some_function"
    after = gen_registrations.render_inc(family)
    assert after != before and 'm.impl("abs", TORCH_FN(some_function));' in after


def test_every_table_overload_has_a_dml_kernel():
    import torch_dml  # noqa: F401  (registers the kernels)

    missing = [f"{family.name}: {overload}" for family in gen_registrations.load_families()
               for overload in family.kernels
               if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{overload}".removesuffix("."),
                                                                     "PrivateUse1")]
    assert not missing, missing


def test_coverage_page_lists_every_table_overload():
    page = gen_registrations.DOC.read_text()
    for family in gen_registrations.load_families():
        for overload in family.kernels:
            assert f"`{overload}`" in page, overload


def test_a_hole_named_only_in_a_comment_is_refused_at_build_time(tmp_path):
    from backend.codegen import gen_wgsl

    (tmp_path / "family.wgsl").write_text("// reads {{width}} values\nfn f() -> u32 { return {{count}}u; }\n")
    with pytest.raises(SystemExit, match="width"):
        gen_wgsl.load_families(tmp_path)
    (tmp_path / "family.wgsl").write_text("// reads {{count}} values\nfn f() -> u32 { return {{count}}u; }\n")
    assert gen_wgsl.load_families(tmp_path)[0].holes == ["count"]
