"""Sharing a process with CUDA, XPU or MPS: PyTorch keeps one accelerator per process, and a renamed
PrivateUse1 takes that place (every CUDA backward pass then fails), so the autoload stays out where
another accelerator has a device and ``import torch_dml`` says so. The CUDA tests run on GPU machines
(.ci/gpu-check); the rest run anywhere."""

import pytest
import torch
import torch_dml_autoload
from helpers import run_python
from torch_dml_autoload import AUTOLOAD_VARIABLE, sharing_warning, should_autoload

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

# Stands in for a CUDA device in a process on this machine, before torch_dml is imported.
FAKE_CUDA = "import torch\ntorch.cuda.device_count = lambda: 1\n"

CUDA_TRAINING_STEP = (
    "model = torch.nn.Linear(4, 4).cuda()\n"
    "model(torch.randn(2, 4, device='cuda')).sum().backward()\n"
    "print('cuda grad', model.weight.grad.device)\n"
)


@pytest.mark.parametrize(
    ("others", "setting", "expected"),
    [
        ([], None, True),
        (["cuda"], None, False),
        (["xpu", "mps"], None, False),
        (["cuda"], "1", True),
        ([], "0", False),
        (["cuda"], "auto", False),
        ([], " 1 ", True),
    ],
)
def test_autoload_decision(others, setting, expected):
    environ = {} if setting is None else {AUTOLOAD_VARIABLE: setting}
    assert should_autoload(others, environ) is expected


def test_the_warning_names_the_limit_and_what_to_do():
    message = sharing_warning(["cuda"])
    assert "CUDA backward" in message and "opt_ready_stream && opt_parent_stream" in message
    assert "one accelerator per process" in message
    assert "does not import torch_dml" in message and f"{AUTOLOAD_VARIABLE}=1" in message


def test_probes_see_no_other_accelerator_on_this_machine():
    expected = [name for name, count in [("cuda", torch.cuda.device_count())] if count]
    assert torch_dml_autoload.other_accelerators() == expected


def test_a_probe_that_raises_counts_as_no_device(monkeypatch):
    def broken() -> int:
        raise RuntimeError("driver stack half installed")

    monkeypatch.setattr(torch_dml_autoload, "_device_probes", lambda: {"cuda": broken, "xpu": lambda: 2})
    assert torch_dml_autoload.other_accelerators() == ["xpu"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without another accelerator")
def test_alone_dml_is_the_accelerator_and_nothing_is_said():
    result = run_python(
        "import warnings\nwarnings.simplefilter('error')\nimport torch, torch_dml\n"
        "print(torch.accelerator.current_accelerator())\n",
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "dml"


def test_explicit_import_beside_another_accelerator_warns_once():
    result = run_python(
        FAKE_CUDA + "import importlib, warnings\nwarnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    import torch_dml\n    importlib.reload(torch_dml)\n"
        "print(sum('one accelerator per process' in str(w.message) for w in caught))\n"
        "print(torch.ones(2, device='dml').device, torch.accelerator.current_accelerator())\n",
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "dml:0", "dml"]


@pytest.mark.parametrize(("setting", "loaded"), [(None, False), ("1", True)])
def test_the_entry_point_stays_out_beside_another_accelerator(setting, loaded):
    environ = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    if setting is not None:
        environ[AUTOLOAD_VARIABLE] = setting
    result = run_python(
        FAKE_CUDA + "import sys, warnings\nwarnings.simplefilter('ignore')\n"
        "import torch_dml_autoload\ntorch_dml_autoload._autoload()\n"
        "print('torch_dml' in sys.modules, torch._C._get_privateuse1_backend_name())\n",
        **environ,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(loaded), "dml" if loaded else "privateuseone"]


@CUDA
def test_cuda_training_is_untouched_by_the_installed_package():
    result = run_python(
        "import sys, torch\n" + CUDA_TRAINING_STEP + "print('accelerator', torch.accelerator.current_accelerator())\n"
        "print('torch_dml loaded', 'torch_dml' in sys.modules)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "cuda grad cuda:0" in result.stdout
    assert "accelerator cuda" in result.stdout and "torch_dml loaded False" in result.stdout


@CUDA
def test_dml_and_cuda_in_one_process_the_known_limit():
    """dml trains and CUDA computes; a CUDA backward pass fails inside PyTorch. If this starts
    passing, PyTorch allows both: drop the limit from the docs and the warning."""
    result = run_python(
        "import torch, warnings\nwith warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n    import torch_dml\n"
        "print('warned', any('CUDA backward' in str(w.message) for w in caught))\n"
        "model = torch.nn.Linear(4, 4).to('dml')\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(8, 4, device='dml')\nlosses = []\n"
        "for _ in range(3):\n    optimizer.zero_grad()\n    loss = model(x).pow(2).mean()\n"
        "    loss.backward()\n    optimizer.step()\n    losses.append(loss.item())\n"
        "print('dml training', losses[-1] < losses[0])\n"
        "print('cuda forward', (torch.ones(2, device='cuda') * 2).sum().item())\n"
        "try:\n" + "".join("    " + line + "\n" for line in CUDA_TRAINING_STEP.splitlines())
        + "except RuntimeError as error:\n    print('cuda backward fails', 'opt_ready_stream' in str(error))\n",
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "warned True" in lines and "dml training True" in lines and "cuda forward 4.0" in lines
    assert "cuda backward fails True" in lines
