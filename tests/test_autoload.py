"""The torch.backends entry point: `import torch` alone makes the dml device usable."""

from helpers import run_python


def test_import_torch_alone_gives_dml():
    result = run_python("import torch\nprint(torch.ones(2, device='dml').device)\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "dml:0"


def test_autoload_can_be_disabled():
    result = run_python(
        "import torch\ntorch.ones(2, device='dml')\n", TORCH_DEVICE_BACKEND_AUTOLOAD="0"
    )
    assert result.returncode != 0
    assert "dml" in result.stderr


def test_explicit_import_after_autoload_is_harmless():
    result = run_python(
        "import torch, torch_dml, importlib\nimportlib.reload(torch_dml)\n"
        "print(torch.zeros(1, device=torch_dml.device()).device)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("dml:0")
