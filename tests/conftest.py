"""Test setup. torch_dml is imported before anything imports torch.testing._internal, which freezes the
list of device types at import time."""

import os

os.environ.setdefault("TORCH_DML_FALLBACK_WARN", "0")

import pytest
import torch
import torch_dml

if torch_dml.device_count() == 0:
    raise pytest.UsageError(
        "torch_dml found no WebGPU adapter; install a Vulkan driver "
        "(apt-get install -y mesa-vulkan-drivers for the software one)"
    )

DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
]
if torch_dml.has_float64_support(0):
    DTYPES.append(torch.float64)


def make_tensor(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """Values that cover each dtype's range, made on the CPU (reproducibly)."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=generator) * 1000).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=generator, dtype=torch.int64).to(dtype)


@pytest.fixture
def dml() -> torch.device:
    return torch_dml.device()


@pytest.fixture
def strict():
    """Native kernels only: a test about a native op fails if the op reached the CPU fallback."""
    with torch_dml.strict():
        yield
