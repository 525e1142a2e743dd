"""Nominal peak figures: which adapter matches which entry, which figure a row is held to, and no ratio
for adapters the table does not know."""

import pytest

from benchmarks import peaks


@pytest.mark.parametrize(("name", "label"), [
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
    ("NVIDIA H100 NVL", "NVIDIA H100 NVL"),
    ("NVIDIA H200", "NVIDIA H200 SXM"),
    ("NVIDIA H200 NVL", "NVIDIA H200 NVL"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM 80GB"),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 80GB PCIe"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 40GB"),
])
def test_known_adapters(name, label):
    assert peaks.lookup(name).label == label


def test_h100_sxm_figures():
    h100 = peaks.lookup("NVIDIA H100 80GB HBM3")
    assert h100.figures["memory"] == 3350.0 and h100.figures["float32"] == pytest.approx(67, abs=0.2)
    assert peaks.share(h100, "GB/s", "", 2998.0) == (pytest.approx(0.895, abs=1e-3), "memory")
    assert peaks.share(h100, "TFLOP/s", "float32", 17.2) == (pytest.approx(17.2 / 66.9), "float32")
    assert peaks.share(h100, "TFLOP/s", "float16", 17.1) == (pytest.approx(17.1 / 133.8), "float16")
    assert peaks.share(h100, "GB/s", "host link", 8.2) == (pytest.approx(8.2 / 64), "host link")


def test_faster_than_the_vector_peak_is_held_to_tensor_cores():
    # cuBLAS's half-precision GEMM on the 2026-11-23 H100 run: 650.6 TFLOP/s, beyond 133.8 without them.
    h100 = peaks.lookup("NVIDIA H100 80GB HBM3")
    assert peaks.share(h100, "TFLOP/s", "float16", 650.6) == (pytest.approx(650.6 / 989.4), "float16 tensor cores")


def test_unknown_adapter_gets_no_ratio_and_says_so():
    name = "llvmpipe (LLVM 17.0.6, 256 bits)"
    assert peaks.lookup(name) is None
    assert peaks.share(None, "GB/s", "", 10.0) == (None, "memory")
    assert "no nominal peak figures" in peaks.describe(None, name) and name in peaks.describe(None, name)


def test_which_figure_a_row_is_held_to():
    assert peaks.figure_for("GB/s", "") == "memory"
    assert peaks.figure_for("GB/s", "host link") == "host link"
    assert peaks.figure_for("TFLOP/s", "") == "float32"
    assert peaks.figure_for("TFLOP/s", "bfloat16") == "bfloat16"
    assert peaks.figure_for("us/op", "") is None and peaks.figure_for("ms/step", "") is None
    nvl = peaks.lookup("NVIDIA H100 NVL")  # no published non-tensor f16 figure: no ratio rather than a guess
    assert peaks.share(nvl, "TFLOP/s", "float16", 10.0)[0] is None and peaks.share(nvl, "us/op", "", 1.0)[0] is None
