"""The helpers that kernels written by ``eager_kernel.py`` call at run time: reading and writing a
buffer at Inductor's flat element offsets, with dml's own eager kernels doing the work.

A buffer is addressed as Inductor addresses it: element 0 is the tensor's first element (its
``data_ptr``), whatever its storage offset.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def _flat(buffer: torch.Tensor) -> torch.Tensor:
    """Every element from the buffer's first one to the end of its storage, as one flat view."""
    extent = buffer.untyped_storage().nbytes() // buffer.element_size() - buffer.storage_offset()
    return buffer.as_strided((extent,), (1,), buffer.storage_offset())


def index(size: int, dim: int, rank: int, device: torch.device) -> torch.Tensor:
    """An iteration variable: 0..size-1 along ``dim`` of the iteration space, broadcast on the others."""
    shape = [1] * rank
    shape[dim] = size
    return torch.arange(size, device=device).view(shape)


def load_strided(buffer: torch.Tensor, shape: Sequence[int], strides: Sequence[int], offset: int) -> torch.Tensor:
    return buffer.as_strided(shape, strides, buffer.storage_offset() + offset)


def load_gather(buffer: torch.Tensor, offsets: torch.Tensor | int, clamp: bool) -> torch.Tensor:
    """Elements at computed offsets; ``clamp`` keeps masked-off lanes (padding reads) in bounds, their
    values are discarded by the mask."""
    flat = _flat(buffer)
    offsets = torch.as_tensor(offsets, device=buffer.device)
    if clamp:
        offsets = offsets.clamp(0, flat.numel() - 1)
    return flat[offsets]


def store_strided(buffer: torch.Tensor, shape: Sequence[int], strides: Sequence[int], offset: int,
                  value: torch.Tensor) -> None:
    target = buffer.as_strided(shape, strides, buffer.storage_offset() + offset)
    target.copy_(torch.as_tensor(value, device=buffer.device).expand(shape))


def store_scatter(buffer: torch.Tensor, shape: Sequence[int], offsets: torch.Tensor | int,
                  value: torch.Tensor, accumulate: bool) -> None:
    flat = _flat(buffer)
    offsets = torch.as_tensor(offsets, device=buffer.device).expand(shape).reshape(-1)
    values = torch.as_tensor(value, device=buffer.device).expand(shape).reshape(-1).to(buffer.dtype)
    flat.index_put_((offsets,), values, accumulate=accumulate)


def constant(value: float | bool, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.full((), value, dtype=dtype, device=device)


def reduce(kind: str, value: torch.Tensor, dims: int, dtype: torch.dtype) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """Reduces the trailing ``dims`` dimensions (the reduction loops), keeping them as size 1 so the result
    still broadcasts against the iteration space."""
    axes = tuple(range(value.dim() - dims, value.dim()))
    if kind == "sum":
        return value.sum(axes, keepdim=True, dtype=dtype)
    if kind == "prod":
        flat = value.flatten(value.dim() - dims) if dims else value.unsqueeze(-1)
        return flat.prod(-1, keepdim=True, dtype=dtype).view(*value.shape[: value.dim() - dims], *[1] * dims)
    if kind in ("max", "min"):
        return (value.amax if kind == "max" else value.amin)(axes, keepdim=True).to(dtype)
    if kind == "any":
        return value.to(torch.bool).any(axes[0], keepdim=True) if dims == 1 else value.to(torch.bool).flatten(
            value.dim() - dims).any(-1).view(*value.shape[: value.dim() - dims], *[1] * dims)
    if kind in ("argmax", "argmin"):
        flat = value.flatten(value.dim() - dims) if dims else value.unsqueeze(-1)
        picked = flat.argmax(-1) if kind == "argmax" else flat.argmin(-1)
        return picked.view(*value.shape[: value.dim() - dims], *[1] * dims).to(dtype)
    if kind == "welford_reduce":
        mean = value.mean(axes, keepdim=True)
        m2 = ((value - mean) ** 2).sum(axes, keepdim=True)
        count = 1
        for axis in axes:
            count *= value.shape[axis]
        return mean, m2, torch.full_like(mean, count)
    raise NotImplementedError(
        f"torch.compile on dml: Inductor asked for a {kind!r} reduction in a loop kernel, which the eager-op "
        "kernels do not implement; compile this model with backend='aot_eager'")


def floordiv(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="floor")


def truncdiv(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="trunc")


def minimum(*values: torch.Tensor | int) -> torch.Tensor | int:
    result = values[0]
    for value in values[1:]:
        result = torch.minimum(torch.as_tensor(result), torch.as_tensor(value))
    return result


def maximum(*values: torch.Tensor | int) -> torch.Tensor | int:
    result = values[0]
    for value in values[1:]:
        result = torch.maximum(torch.as_tensor(result), torch.as_tensor(value))
    return result


# Inductor ops with no torch function of the same name and arguments.

def fma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return a * b + c


def floor_to_int(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.floor(x).to(dtype)


def ceil_to_int(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.ceil(x).to(dtype)


def trunc_to_int(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.trunc(x).to(dtype)


def round_to_int(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.round(x).to(dtype)


def round_decimal(x: torch.Tensor, decimals: int) -> torch.Tensor:
    return torch.round(x, decimals=decimals)


def square(x: torch.Tensor) -> torch.Tensor:
    return x * x
