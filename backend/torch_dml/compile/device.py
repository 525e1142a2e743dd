"""What Dynamo and Inductor ask of a device before they compile for it: a ``DeviceInterface`` (current
device, synchronize, streams) and the ``DeviceOpOverrides`` lines the Python wrapper writes around
kernel calls. Both answer from ``torch.dml``; dml has no raw stream handles to pass to kernels."""

from __future__ import annotations

from dataclasses import dataclass
from textwrap import dedent

import torch
from torch._dynamo.device_interface import DeviceInterface
from torch._inductor.codegen.common import DeviceOpOverrides


@dataclass(frozen=True)
class DmlProperties:
    name: str
    # WebGPU does not report compute units. Inductor only uses the count to decide how many pieces to
    # split a large reduction into; one keeps each reduction one eager op.
    multi_processor_count: int = 1


class DmlInterface(DeviceInterface):
    device = torch.dml.device  # type: ignore[attr-defined]
    Event = torch.Event
    Stream = torch.Stream

    class Worker:
        @staticmethod
        def set_device(device: int) -> None:
            torch.dml.set_device(device)  # type: ignore[attr-defined]

        @staticmethod
        def current_device() -> int:
            return torch.dml.current_device()  # type: ignore[attr-defined]

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> DmlProperties:
            index = torch.device("dml", device).index if isinstance(device, int) else None
            if isinstance(device, (str, torch.device)):
                index = torch.device(device).index
            return DmlProperties(torch.dml.get_device_name(index))  # type: ignore[attr-defined]

    @staticmethod
    def current_device() -> int:
        return torch.dml.current_device()  # type: ignore[attr-defined]

    @staticmethod
    def set_device(device: torch.types.Device) -> None:
        torch.dml.set_device(device)  # type: ignore[attr-defined]

    @staticmethod
    def device_count() -> int:
        return torch.dml.device_count()  # type: ignore[attr-defined]

    @staticmethod
    def is_available() -> bool:
        return torch.dml.is_available()  # type: ignore[attr-defined]

    @staticmethod
    def synchronize(device: torch.types.Device = None) -> None:
        torch.dml.synchronize(device)  # type: ignore[attr-defined]

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return 0

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> str:
        return ""

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        return False

    @staticmethod
    def memory_allocated(device: torch.types.Device = None) -> int:
        return torch.dml.memory_allocated(device)  # type: ignore[attr-defined]


class DmlOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return dedent(f"""
            def {name}(_):
                return 0
            """)

    def set_device(self, device_idx: int) -> str:
        return f"torch.dml.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.dml.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.dml.device({device_idx})"
