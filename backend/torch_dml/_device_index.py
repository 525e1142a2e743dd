"""Turning what users pass as a device (None, an index, ``"dml:1"``, a ``torch.device``) into an index."""

from __future__ import annotations

import torch

from torch_dml import _C

DeviceLike = torch.device | str | int | None


def device_index(device: DeviceLike = None) -> int:
    """The index ``device`` names; the current device for None or a bare ``"dml"``. Not range-checked."""
    if device is None:
        return _C._get_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "dml":
        raise ValueError(f"expected a dml device, got {device}")
    return _C._get_device() if device.index is None else device.index


def checked_index(device: DeviceLike = None) -> int:
    """``device_index`` that raises the RFC's message for an index that names no device."""
    index = device_index(device)
    count = _C._device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"Invalid device_id argument supplied {index}. device_id must be in range [0, {count}).")
    return index
