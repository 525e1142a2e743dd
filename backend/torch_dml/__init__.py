"""torch_dml: a vendor-neutral PyTorch device, ``dml``, whose kernels are WGSL run through WebGPU.

    import torch, torch_dml as dml
    x = torch.ones(4, 4, device=dml.device())

The API follows the DirectML RFC's ``torch_directml`` module. Importing this package renames PyTorch's
PrivateUse1 backend to ``dml`` and registers ``torch.dml``; with the package installed, ``import torch``
does this on its own through the ``torch.backends`` entry point (``torch_dml_autoload``), except where
torch has CUDA, XPU or MPS devices: PyTorch keeps one accelerator per process, and dml taking that place
breaks their backward passes (``import torch_dml`` then warns).
"""

from __future__ import annotations


def _autoload() -> None:
    """The entry point that installs made before it moved to ``torch_dml_autoload`` still name.

    Defined before anything else: ``import torch_dml`` before torch imports torch, whose autoload then
    looks this up on the half-initialised package, and a missing one makes ``import torch`` fail. By
    the time it is called, importing the package has registered the device.
    """


from torch_dml import _autograd_exit, _bootstrap

_bootstrap.register()
_autograd_exit.register()

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
    Event,
    Stream,
    current_device,
    current_stream,
    default_stream,
    empty_cache,
    get_device_properties,
    init,
    manual_seed,
    manual_seed_all,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_device,
    set_stream,
    stream,
    synchronize,
)

__all__ = [
    "Event",
    "FallbackError",
    "Stream",
    "current_device",
    "current_stream",
    "default_device",
    "default_stream",
    "device",
    "device_count",
    "device_name",
    "empty_cache",
    "fallback_counts",
    "get_device_properties",
    "gpu_memory",
    "has_float64_support",
    "init",
    "is_available",
    "is_strict",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_fallback_counts",
    "reset_peak_memory_stats",
    "set_device",
    "set_stream",
    "stream",
    "strict",
    "synchronize",
]
