"""``torch.dml.get_device_properties``: what the adapter and its WebGPU device report, in one object
with the attribute names of ``torch.cuda.get_device_properties`` where they apply."""

from __future__ import annotations

import dataclasses
from typing import Any

from torch_dml import _C


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    index: int
    name: str
    total_memory: int
    # Where total_memory comes from, "vulkan", "host" or "maxBufferSize" (see torch.dml.mem_get_info).
    total_memory_source: str
    type: str  # the adapter type: "discrete", "integrated", "cpu", ...
    backend: str  # "Vulkan", "D3D12", "Metal", ...
    vendor: str
    vendor_id: int
    device_id: int
    architecture: str
    driver: str
    features: tuple[str, ...]  # the adapter features torch_dml requested and got (wgpu's names)
    limits: dict[str, int]  # the WebGPU device's limits (WGPULimits field names)

    @property
    def is_integrated(self) -> bool:
        return self.type in ("integrated", "cpu")

    def __repr__(self) -> str:
        return (
            f"_DmlDeviceProperties(name='{self.name}', backend='{self.backend}', type='{self.type}', "
            f"total_memory={self.total_memory // (1 << 20)}MB ({self.total_memory_source}), "
            f"driver='{self.driver}', features={list(self.features)})"
        )


def device_properties(index: int) -> DeviceProperties:
    record: dict[str, Any] = _C._adapter(index)
    _free, total, source, _free_source = _C._memory_info(index)
    return DeviceProperties(
        index=index,
        name=record["name"],
        total_memory=total,
        total_memory_source=source,
        type=record["adapter_type"],
        backend=record["backend"],
        vendor=record["vendor"],
        vendor_id=record["vendor_id"],
        device_id=record["device_id"],
        architecture=record["architecture"],
        driver=record["driver"],
        features=tuple(record["features"]),
        limits=dict(record["limits"]),
    )
