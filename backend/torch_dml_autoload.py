"""The ``torch.backends`` entry point, and the one limit of sharing a process with another accelerator.

PyTorch keeps one accelerator per process. ``at::accelerator::getAccelerator()``
(aten/src/ATen/DeviceAccelerator.cpp) answers PrivateUse1 as soon as a PrivateUse1 name is registered
(``c10::is_privateuse1_backend_registered()``, set for good by ``rename_privateuse1_backend``), ahead of
CUDA, XPU or MPS. The autograd engine takes a node's stream only on that device type
(``Node::stream()`` in torch/csrc/autograd/node.h), so once ``dml`` is the name every CUDA backward
pass stops at ``TORCH_INTERNAL_ASSERT(opt_ready_stream && opt_parent_stream)`` in
``Engine::evaluate_function`` (torch/csrc/autograd/engine.cpp). The rename cannot be undone or deferred
(``device="dml"`` strings need it before any use), so this module lives outside the ``torch_dml``
package: deciding not to load it must not import it. ``import torch_dml`` always loads it and warns once
where another accelerator is present.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

AUTOLOAD_VARIABLE = "TORCH_DML_AUTOLOAD"


def _device_probes() -> dict[str, Callable[[], int]]:
    import torch

    # torch.cuda.device_count() asks NVML before the CUDA runtime (no context, fork stays safe) and is
    # also how ROCm builds report their GPUs.
    return {
        "cuda": lambda: torch.cuda.device_count(),
        "xpu": lambda: torch.xpu.device_count(),
        "mps": lambda: int(torch.backends.mps.is_available()),
    }


def other_accelerators() -> list[str]:
    """The in-tree accelerators of this torch that have a device here."""
    present = []
    for name, probe in _device_probes().items():
        try:
            count = probe()
        except Exception:  # noqa: BLE001 -- a driver stack that cannot answer holds no device to protect
            count = 0
        if count > 0:
            present.append(name)
    return present


def should_autoload(others: Sequence[str], environ: Mapping[str, str]) -> bool:
    """Loads dml on ``import torch`` only where it takes no other accelerator's place.

    TORCH_DML_AUTOLOAD=1 loads it anyway (dml wanted, the other device only without autograd),
    TORCH_DML_AUTOLOAD=0 never; any other value, or none, decides from ``others``.
    """
    setting = environ.get(AUTOLOAD_VARIABLE, "").strip()
    if setting in ("0", "1"):
        return setting == "1"
    return not others


def sharing_warning(others: Sequence[str]) -> str:
    names = " and ".join(name.upper() for name in others)
    return (
        f"torch_dml: this process also has {names}. PyTorch keeps one accelerator per process and a "
        f"registered PrivateUse1 backend takes that place, so torch.accelerator now answers 'dml' and "
        f"every {names} backward pass fails with 'opt_ready_stream && opt_parent_stream INTERNAL ASSERT "
        f"FAILED'. dml itself, training included, works. To train on {names}, use a process that does "
        f"not import torch_dml: with torch-dml installed, `import torch` alone leaves it out where "
        f"{names} is present (unless {AUTOLOAD_VARIABLE}=1)."
    )


def _autoload() -> None:
    """Called at the end of ``import torch``, while torch is still initialising."""
    if should_autoload(other_accelerators(), os.environ):
        import torch_dml  # noqa: F401 -- importing the package registers the device
