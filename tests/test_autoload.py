"""The torch.backends entry point: `import torch` alone makes the dml device usable."""

import importlib.metadata

from helpers import run_python
from torch_dml_autoload import AUTOLOAD_VARIABLE, other_accelerators

# Beside CUDA, XPU or MPS the autoload stays out unless asked (tests/test_other_accelerators.py).
ASKED_WHERE_NEEDED = {AUTOLOAD_VARIABLE: "1"} if other_accelerators() else {}


def test_the_entry_point_is_installed_and_does_not_name_the_package():
    entries = [e for e in importlib.metadata.entry_points(group="torch.backends") if e.name == "torch_dml"]
    assert entries, "torch-dml is not installed (on PYTHONPATH only?): pip install --no-build-isolation -e ."
    assert [e.value for e in entries] == ["torch_dml_autoload:_autoload"], "a stale install: reinstall it"


def test_import_torch_alone_gives_dml():
    result = run_python("import torch\nprint(torch.ones(2, device='dml').device)\n", **ASKED_WHERE_NEEDED)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "dml:0"


def test_autoload_can_be_disabled():
    for switch in ({"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}, {AUTOLOAD_VARIABLE: "0"}):
        result = run_python("import torch\ntorch.ones(2, device='dml')\n", **switch)
        assert result.returncode != 0, switch
        assert "dml" in result.stderr


def test_explicit_import_after_autoload_is_harmless():
    result = run_python(
        "import torch, torch_dml, importlib\nimportlib.reload(torch_dml)\n"
        "print(torch.zeros(1, device=torch_dml.device()).device)\n",
        **ASKED_WHERE_NEEDED,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("dml:0")
