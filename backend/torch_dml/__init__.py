"""torch_dml: a vendor-neutral PyTorch device, ``dml``, whose kernels are WGSL run through WebGPU.

    import torch, torch_dml as dml
    x = torch.ones(4, 4, device=dml.device())

The API follows the DirectML RFC's ``torch_directml`` module. Importing this package renames PyTorch's
PrivateUse1 backend to ``dml`` and registers ``torch.dml``; with the package installed, ``import torch``
does this on its own through the ``torch.backends`` entry point (``TORCH_DEVICE_BACKEND_AUTOLOAD=0``
turns that off).
"""

from __future__ import annotations

_LOADED = False


def _autoload() -> None:
    """Entry point for ``torch.backends``: runs while ``import torch`` is still underway.

    Defined before anything else in this module so that a partially initialised ``torch_dml`` still has
    it (the circular-import trap of torch's autoload), and idempotent so a second call does nothing.
    """
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from torch_dml import _bootstrap

    _bootstrap.register()


_autoload()

from torch_dml._device_api import (
    default_device,
    device,
    device_count,
    device_name,
    gpu_memory,
    has_float64_support,
    is_available,
)
from torch_dml._fallback import (
    FallbackError,
    fallback_counts,
    is_strict,
    reset_fallback_counts,
    strict,
)
from torch_dml.device_module import (
    current_device,
    empty_cache,
    manual_seed,
    manual_seed_all,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
    set_device,
    synchronize,
)

__all__ = [
    "FallbackError",
    "current_device",
    "default_device",
    "device",
    "device_count",
    "device_name",
    "empty_cache",
    "fallback_counts",
    "gpu_memory",
    "has_float64_support",
    "is_available",
    "is_strict",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_fallback_counts",
    "reset_peak_memory_stats",
    "set_device",
    "strict",
    "synchronize",
]
