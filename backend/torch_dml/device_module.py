"""``torch.dml``: the device module PyTorch core looks up by the backend's name.

``torch.accelerator``, ``torch.manual_seed``, ``fork_rng``, autocast and lazy device init call the
functions here by name; the set follows ``torch.cuda`` where it applies.
"""

from __future__ import annotations

from typing import Any

import torch

from torch_dml import _C

_DeviceLike = torch.device | str | int | None


def _index(device: _DeviceLike = None) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "dml":
        raise ValueError(f"expected a dml device, got {device}")
    return current_device() if device.index is None else device.index


# -- device management ---------------------------------------------------------------------------------

def is_available() -> bool:
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._get_device()


def set_device(device: _DeviceLike) -> None:
    _C._set_device(_index(device))


class device:
    """Context manager that makes ``device`` current inside the block (as ``torch.cuda.device``)."""

    def __init__(self, device: _DeviceLike) -> None:
        self.index = -1 if device is None else _index(device)
        self.previous = -1

    def __enter__(self) -> None:
        self.previous = current_device()
        if self.index >= 0 and self.index != self.previous:
            set_device(self.index)

    def __exit__(self, *exc_info: object) -> None:
        if self.index >= 0 and self.index != self.previous:
            set_device(self.previous)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits until every operation queued on the device has finished."""
    _C._synchronize(_index(device))


def get_device_name(device: _DeviceLike = None) -> str:
    return _C._device_name(_index(device))


def is_initialized() -> bool:
    """Whether any dml device has been set up (a tensor, a stream or a generator used it)."""
    return _C._is_initialized()


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

def default_generator(device: _DeviceLike = None) -> torch.Generator:
    return _C._default_generator(_index(device))


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


def get_rng_state(device: _DeviceLike = None) -> torch.Tensor:
    return default_generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _DeviceLike = None) -> None:
    default_generator(device).set_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# -- memory ----------------------------------------------------------------------------------------------

def memory_stats(device: _DeviceLike = None) -> dict[str, Any]:
    """The caching allocator's counters, with the key names of ``torch.cuda.memory_stats``."""
    return dict(_C._memory_stats(_index(device)))


def memory_allocated(device: _DeviceLike = None) -> int:
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: _DeviceLike = None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: _DeviceLike = None) -> int:
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: _DeviceLike = None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    _C._reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns every cached, unused buffer of every device to the driver."""
    _C._empty_cache()


# -- autocast ------------------------------------------------------------------------------------------

def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]
