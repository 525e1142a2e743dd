"""``torch.dml``: the device module PyTorch core looks up by the backend's name.

``torch.accelerator``, ``torch.manual_seed``, ``fork_rng``, autocast and lazy device init call the
functions here by name; the set follows ``torch.cuda`` where it applies.
"""

from __future__ import annotations

from typing import Any

import torch

from torch_dml import _C, _memory_summary
from torch_dml._device_index import DeviceLike, checked_index, device_index
from torch_dml._device_properties import DeviceProperties, device_properties

# Public as torch.dml.Stream, torch.dml.stream(...) and so on, like torch.cuda's.
from torch_dml._streams import (  # noqa: F401
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)

# -- device management ---------------------------------------------------------------------------------

def is_available() -> bool:
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._get_device()


def set_device(device: DeviceLike) -> None:
    _C._set_device(device_index(device))


class device:
    """Context manager that makes ``device`` current inside the block (as ``torch.cuda.device``)."""

    def __init__(self, device: DeviceLike) -> None:
        self.index = -1 if device is None else device_index(device)
        self.previous = -1

    def __enter__(self) -> None:
        self.previous = current_device()
        if self.index >= 0 and self.index != self.previous:
            set_device(self.index)

    def __exit__(self, *exc_info: object) -> None:
        if self.index >= 0 and self.index != self.previous:
            set_device(self.previous)


def synchronize(device: DeviceLike = None) -> None:
    """Waits until every operation queued on the device has finished."""
    _C._synchronize(device_index(device))


def get_device_name(device: DeviceLike = None) -> str:
    return _C._device_name(device_index(device))


def is_initialized() -> bool:
    """Whether any dml device has been set up (a tensor, a stream or a generator used it)."""
    return _C._is_initialized()


def init() -> None:
    """Sets up the current dml device now instead of on first use, as ``torch.cuda.init``: a missing
    driver or a device that cannot be created raises here. Calling it again does nothing."""
    _lazy_init()
    _C._init_device(checked_index(None))


def get_device_properties(device: DeviceLike = None) -> DeviceProperties:
    """The adapter's name, type, backend, vendor and driver, its memory (as ``mem_get_info``'s total),
    and the WebGPU device's features and limits."""
    return device_properties(checked_index(device))


def get_device_capability(device: DeviceLike = None) -> dict[str, Any]:
    """What the device can compute, as ``torch.accelerator.get_device_capability``: ``{"supported_dtypes":
    [...]}``. There is no CUDA-style (major, minor) version: WebGPU adapters differ by features, which
    ``get_device_properties(device).features`` lists."""
    return torch.accelerator.get_device_capability(torch.device("dml", checked_index(device)))


def __getattr__(name: str) -> Any:
    # torch.cuda keeps a module global ``_initialized``; torch.utils.checkpoint reads it on the device
    # module to decide whether to stash and restore device RNG states around the recomputed forward.
    # Without it the recomputation draws new dropout masks and the gradients are silently wrong.
    if name == "_initialized":
        return is_initialized()
    # Inductor looks this up the first time it needs a code generator for the private-use device: the
    # cue to register dml with Inductor (torch_dml.compile), which would cost two seconds of imports if
    # done by ``import torch_dml``. No class is returned, because Inductor's own registration from the
    # device module would replace ours and drop the pass that sends dml's ATen ops to eager kernels.
    if name == "Scheduling":
        from torch_dml import compile as dml_compile

        dml_compile.register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lazy_init() -> None:
    if _C._is_in_bad_fork():
        raise RuntimeError(
            "Cannot re-initialize dml in forked subprocess. To use dml with multiprocessing, "
            "you must use the 'spawn' start method"
        )
    _C._lazy_init()


def _is_in_bad_fork() -> bool:
    return _C._is_in_bad_fork()


# -- random --------------------------------------------------------------------------------------------

def default_generator(device: DeviceLike = None) -> torch.Generator:
    return _C._default_generator(device_index(device))


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator."""
    default_generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        default_generator(i).manual_seed(int(seed))


def seed() -> None:
    default_generator().seed()


def seed_all() -> None:
    for i in range(device_count()):
        default_generator(i).seed()


def initial_seed() -> int:
    return default_generator().initial_seed()


def get_rng_state(device: DeviceLike = None) -> torch.Tensor:
    return default_generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: DeviceLike = None) -> None:
    default_generator(device).set_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# -- memory ----------------------------------------------------------------------------------------------

def memory_stats(device: DeviceLike = None) -> dict[str, Any]:
    """The caching allocator's counters, with the key names of ``torch.cuda.memory_stats``."""
    return dict(_C._memory_stats(checked_index(device)))


def memory_allocated(device: DeviceLike = None) -> int:
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: DeviceLike = None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: DeviceLike = None) -> int:
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: DeviceLike = None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: DeviceLike = None) -> None:
    _C._reset_peak_memory_stats(checked_index(device))


def reset_accumulated_memory_stats(device: DeviceLike = None) -> None:
    """Zeroes the running totals (the ``.allocated`` and ``.freed`` counters, retries, out-of-memory
    errors); current values and peaks are kept."""
    _C._reset_accumulated_memory_stats(checked_index(device))


def memory_summary(device: DeviceLike = None, abbreviated: bool = False) -> str:
    """The allocator's counters as a readable table (as ``torch.cuda.memory_summary``): allocated,
    active, requested and reserved bytes and the allocation and buffer counts, each current, peak and
    in total; ``abbreviated`` leaves out the per-pool rows."""
    index = checked_index(device)
    return _memory_summary.render(f"dml:{index}", memory_stats(index), abbreviated)


def mem_get_info(device: DeviceLike = None) -> tuple[int, int]:
    """``(free, total)`` bytes of the device, as ``torch.cuda.mem_get_info``. WebGPU has no memory query.

    ``total``: on the Vulkan backend, the sum of the device's DEVICE_LOCAL heaps as Vulkan reports them
    (the loader is opened at run time; the device is matched by vendor and device ID). A CPU adapter
    (lavapipe), whose Vulkan heap is host memory under a nominal size, and an integrated adapter Vulkan
    cannot answer for report the machine's physical memory; any other adapter its ``maxBufferSize``
    limit, a lower bound on its memory rather than its size (``get_device_properties(device)
    .total_memory_source`` says which: ``"vulkan"``, ``"host"``, ``"maxBufferSize"``). D3D12 and Metal
    are not asked. ``free``: with Vulkan's ``VK_EXT_memory_budget``, budget minus usage of those heaps,
    which sees other processes too; otherwise ``total`` minus what torch_dml's caching allocator has
    reserved. For system memory it is at most what the OS reports available (Linux: MemAvailable).
    ``torch.accelerator.get_memory_info`` returns the same.
    """
    free, total, _source, _free_source = _C._memory_info(checked_index(device))
    return free, total


def empty_cache() -> None:
    """Returns every cached, unused buffer of every device to the driver."""
    _C._empty_cache()


# -- autocast ------------------------------------------------------------------------------------------

def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]
