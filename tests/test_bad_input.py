"""Bad input gives a Python exception naming the op, dtype and adapter, never a dead process."""

import pytest
import torch
import torch_dml
from helpers import run_python


def test_missing_wgpu_library_is_an_import_error():
    result = run_python(
        "try:\n    import torch_dml\nexcept ImportError as e:\n    print('ImportError', e)\n",
        TORCH_DML_WGPU_LIBRARY="/nonexistent/libwgpu_native.so",
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert result.returncode == 0, result.stderr
    assert "ImportError" in result.stdout and "/nonexistent/libwgpu_native.so" in result.stdout


def test_float64_without_shader_f64_is_a_clear_error():
    result = run_python(
        "import torch, torch_dml\n"
        "assert not torch_dml.has_float64_support(0)\n"
        "try:\n    torch.zeros(3, dtype=torch.float64, device='dml')\n"
        "except TypeError as e:\n    print('refused', e)\n"
        "print(torch.ones(2, device='dml').cpu().tolist())\n",
        TORCH_DML_DISABLE_FEATURES="shader-f64",
    )
    assert result.returncode == 0, result.stderr
    assert "refused" in result.stdout and "shader-f64" in result.stdout
    assert torch_dml.device_name(0) in result.stdout
    assert "[1.0, 1.0]" in result.stdout


def test_int64_conversion_without_shader_int64_is_a_clear_error_or_exact():
    result = run_python(
        "import torch, torch_dml\n"  # explicit: where CUDA is present, `import torch` leaves dml out
        "x = torch.arange(5, device='dml')\n"
        "print(x.cpu().tolist())\n"
        "print(x.to(torch.float32).cpu().tolist())\n",
        TORCH_DML_DISABLE_FEATURES="shader-int64",
    )
    # Raw int64 copies need no shader-int64; conversions route through the host and stay exact.
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[0,", "1,", "2,", "3,", "4]", "[0.0,", "1.0,", "2.0,", "3.0,", "4.0]"]


def test_invalid_device_in_set_device():
    with pytest.raises(RuntimeError, match="Invalid device_id argument supplied"):
        torch.dml.set_device(torch_dml.device_count() + 1)


def test_out_of_memory_leaves_earlier_results_intact():
    kept = torch.arange(10, dtype=torch.float32, device="dml") + 1
    with pytest.raises(torch.OutOfMemoryError):
        torch.empty(1 << 40, dtype=torch.uint8, device="dml")
    assert torch.equal(kept.cpu(), torch.arange(10, dtype=torch.float32) + 1)


def test_sparse_layout_is_refused():
    with pytest.raises(NotImplementedError, match="with layout Sparse on dml: sparse tensors are not supported"):
        torch.empty(2, 2, device="dml", layout=torch.sparse_coo)
