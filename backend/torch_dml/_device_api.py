"""The DirectML RFC's device API (``torch_directml``), so scripts written for it run unchanged."""

from __future__ import annotations

import math

import torch

from torch_dml import _C


def _check_index(device_id: int) -> int:
    count = device_count()
    if not isinstance(device_id, int) or isinstance(device_id, bool) or not 0 <= device_id < count:
        raise RuntimeError(
            f"Invalid device_id argument supplied {device_id}. device_id must be in range [0, {count})."
        )
    return device_id


def device_count() -> int:
    """Number of WebGPU adapters torch_dml uses (see TORCH_DML_ADAPTERS in the README)."""
    return _C._device_count()


def is_available() -> bool:
    return device_count() > 0


def default_device() -> int:
    """Index of the device ``device()`` returns when given no index: the current dml device."""
    return _C._get_device() if is_available() else 0


def device(device_id: int | None = None) -> torch.device:
    """``torch.device('dml', device_id)``; the current device when ``device_id`` is None."""
    if device_id is None:
        device_id = default_device()
        if not is_available():
            _check_index(device_id)
    return torch.device("dml", _check_index(device_id))


def device_name(device_id: int) -> str:
    """The adapter's name, or ``""`` for an index that names no device (as torch_directml does)."""
    if not isinstance(device_id, int) or not 0 <= device_id < device_count():
        return ""
    return _C._device_name(device_id)


def has_float64_support(device_id: int = 0) -> bool:
    """Whether the adapter has shader-f64, which float64 tensors on it need."""
    return _C._has_feature(_check_index(device_id), "shader-f64")


def gpu_memory(device_id: int = 0, mb_per_tile: int = 1) -> list[float]:
    """Memory torch_dml holds on the device, in MB, split into tiles of ``mb_per_tile`` MB.

    Each list entry is one tile's fill in MB (the last tile may be partial); the sum is the memory
    reserved by the caching allocator. WebGPU exposes no process-independent usage query, so memory
    used by other processes is not included.
    """
    stats = _C._memory_stats(_check_index(device_id))
    reserved_mb = stats["reserved_bytes.all.current"] / (1024 * 1024)
    if reserved_mb == 0:
        return []
    tiles = math.ceil(reserved_mb / mb_per_tile)
    return [float(min(mb_per_tile, reserved_mb - i * mb_per_tile)) for i in range(tiles)]
