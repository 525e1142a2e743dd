"""The docs' generated pages (matrix/pages.py) and the hand-written API page against the package."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from conformance import statuses
from matrix import merge, model, pages

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "backend" / "torch_dml"


def rows(*cells: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"op": op, "variant": "forward", "dtype": dtype, "status": status} for op, dtype, status in cells]


def test_dtype_marks_follow_the_report() -> None:
    results = rows(
        ("add", "float32", statuses.PASS),
        ("exp", "float32", statuses.FALLBACK),
        ("add", "complex64", statuses.FALLBACK),
        ("add", "float64", statuses.ERROR),
        ("mm", "float64", statuses.SKIP),
    )
    assert pages.dtype_support(results, ["float32"]) == (
        "native",
        "1 native, 1 fallback, 0 wrong, 0 skipped ops",
    )
    assert pages.dtype_support(results, ["complex64", "complex128"])[0] == "through the fallback"
    assert pages.dtype_support(results, ["float64"])[0] == "not supported"
    assert pages.dtype_support(results, ["qint8"])[0] == "not tested"


def test_feature_marks_need_tests_that_exist(tmp_path: Path) -> None:
    marks = {m.name: m.mark for m in pages.feature_marks()}
    assert marks["Streams and events"] == "supported"
    assert marks["Profiler (torch.profiler device activity)"] == "supported"
    assert marks["Quantization (quantized tensors and kernels)"] == "not supported"
    bad = tmp_path / "features.yaml"
    bad.write_text("features:\n- name: Teleportation\n  tests: [tests/test_device.py::test_teleports]\n")
    with pytest.raises(ValueError, match="test_teleports"):
        pages.feature_marks(bad)


def test_feature_marks_from_junit_results(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_autocast" name="test_autocast_bfloat16"/>'
        '<testcase classname="tests.test_autocast" name="test_autocast_dtype_default_and_policies[x]">'
        '<failure message="boom"/></testcase>'
        '<testcase classname="tests.test_autocast" name="test_autocast_dtype_default_and_policies[y]"/>'
        "</testsuite></testsuites>"
    )
    results = pages.junit_results(junit)
    assert results["tests/test_autocast.py::test_autocast_bfloat16"] == "passed"
    assert results["tests/test_autocast.py::test_autocast_dtype_default_and_policies"] == "failed"
    marks = {m.name: m for m in pages.feature_marks(junit=results)}
    assert marks["AMP (torch.autocast on dml)"].mark == "not verified"
    assert marks["Serialization (torch.save / torch.load, state_dict)"].mark == "not verified"  # not run


def test_pages_render_from_the_committed_report(tmp_path: Path) -> None:
    written = pages.write(model.load(), tmp_path)
    assert sorted(p.name for p in written) == ["compatibility.md", "matrix.md", "op-coverage.md"]
    matrix_page = (tmp_path / "matrix.md").read_text()
    for cell in model.load().cells:
        assert f"`{cell.id}`" in matrix_page
    assert "Python 3.7, 3.8, 3.9" in matrix_page
    report = merge.collect(pages.DEFAULT_REPORTS)[0].report
    coverage = (tmp_path / "op-coverage.md").read_text()
    some = next(r for r in report["results"] if r["dtype"] != "-")
    assert f"`{some['op']}`" in coverage and some["dtype"] in coverage
    compatibility = (tmp_path / "compatibility.md").read_text()
    for label, _ in pages.DTYPE_ROWS:
        assert re.search(rf"^\| {re.escape(label)}\b", compatibility, re.MULTILINE), label
    assert f"| {pages.release_version()} |" in compatibility
    matrix = model.load()
    versions = compatibility.split("## Versions")[1]
    assert f"| {matrix.axes['python'][0]} - {matrix.axes['python'][-1]} |" in versions
    assert f"| {matrix.wgpu_native} (from the wgpu {matrix.wgpu} wheel) |" in versions
    assert "the `wgpu` package is not needed at run time" in versions


def _cell(name: str, adapter_class: str, commit: str, results: list[dict[str, Any]]) -> merge.CellReport:
    backend = {
        "adapter_class": adapter_class,
        "adapter": {"name": adapter_class},
        "torch": "2.13.0",
        "env": {},
    }
    coverage = {"native_pass_pct": 50.0, "correct_pct": 90.0, "ops_tested": 2}
    data = {"profile": "full", "generated": "2026-11-23T00:00:00", "suite": {"max_samples": 4}}
    data |= {"backend": backend, "coverage": coverage, "totals": {"PASS": 1}, "results": results}
    return merge.CellReport(name, data, origin={"commit": commit})


def test_compatibility_page_opens_with_what_differs_between_adapters() -> None:
    # (op, dtype, status on lavapipe, status on the H100)
    cases = [
        ("tan", "float32", statuses.PASS, statuses.FAIL),
        ("mm", "float64", statuses.PASS, statuses.FALLBACK),
        ("cos", "int8", statuses.SKIP, statuses.PASS),
    ]
    software = _cell("linux-lavapipe-py311-torch2.13", "lavapipe", "325231d", rows(*[c[:3] for c in cases]))
    gpu = _cell(
        "linux-nvidia-h100-py312-torch2.11", "nvidia", "ba750b6", rows(*[(*c[:2], c[3]) for c in cases])
    )
    gpu.report["results"][0]["message"] = "values differ"
    page = pages.compatibility_page(model.load(), [software, gpu])
    reports = page.split("## Reports")[1].split("##")[0]
    assert "|  | Mesa lavapipe (llvmpipe) | NVIDIA H100 80GB HBM3 |" in reports  # the cells' hardware
    assert "| commit | `325231d` | `ba750b6` |" in reports
    assert "| profile | full (4 samples per case) | full (4 samples per case) |" in reports
    assert "Python 3.12, linux |" in reports  # from the H100's matrix.yaml cell: it wrote no cell.json
    differs = page.split("## Differs between adapters")[1].split("## Data types")[0]
    assert "different commits" in differs
    assert "| `tan` | forward | float32 | pass | **FAIL** | values differ |" in differs
    assert "`mm`" not in differs and "`cos`" not in differs  # native vs fallback, skipped: not this table
    coverage = pages.coverage_page(model.load(), [software, gpu])
    native = coverage.split("## Native on one adapter")[1].split("##")[0]
    assert "| `mm` | forward | float64 | pass | fallback |" in native


def test_coverage_page_keeps_each_variant_apart() -> None:
    backward = {"op": "add", "variant": "backward", "dtype": "float32", "status": statuses.FAIL}
    results = [*rows(("add", "float32", statuses.PASS)), backward]
    page = pages.coverage_page(model.load(), [_cell("c", "lavapipe", "abc", results)])
    assert "| `add` | pass |" in page and "| `add (backward)` | **FAIL** |" in page


def _public_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return {n for n in names if not n.startswith("_")}


def test_api_page_documents_every_public_name() -> None:
    api = (ROOT / "docs" / "api.md").read_text()
    documented = set(re.findall(r"^```\{py:(?:function|class|exception)\} (\w+)", api, re.MULTILINE))
    init = ast.parse((PACKAGE / "__init__.py").read_text())
    exported = next(
        ast.literal_eval(n.value)
        for n in init.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__"
    )
    assert set(exported) - documented == set(), "torch_dml names missing from docs/api.md"
    assert _public_names(PACKAGE / "device_module.py") - documented == set(), "torch.dml names missing"


def test_every_toctree_entry_exists() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    entries = [
        line.strip()
        for block in re.findall(r"```\{toctree\}(.*?)```", index, re.DOTALL)
        for line in block.splitlines()
        if line.strip() and not line.strip().startswith(":")
    ]
    generated = {"generated/matrix", "generated/op-coverage", "generated/compatibility"}
    for entry in entries:
        assert entry in generated or (ROOT / "docs" / f"{entry}.md").exists(), entry
