"""The copy, fill and elementwise kernels are variants of their `.wgsl` family files.

What the driver compiles is the family's text (backend/csrc/kernels/wgsl/) with its named holes
filled: the shared index arithmetic and the store entry point (wgsl/parts/) appear verbatim, no hole is
left, and the variant picked (strided or four-per-thread, store by element, word or lane) follows
the operands' layout.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import torch_dml

from backend.codegen import gen_wgsl

WGSL = Path(__file__).resolve().parent.parent / "backend" / "csrc" / "kernels" / "wgsl"


def source_of(name: str) -> str:
    """The WGSL of the kernel whose whole name matches `name` (it must have run in this process)."""
    torch_dml.synchronize()
    names = [n for n in torch_dml._C._compiled_kernels(0) if re.fullmatch(name, n)]
    assert names, sorted(torch_dml._C._compiled_kernels(0))
    return torch_dml._C._compiled_kernel_source(0, names[0])


def body(path: Path) -> str:
    """The file without its leading comment block (the part a variant must hold verbatim)."""
    lines = path.read_text().splitlines()
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "\n".join(lines).strip()


def fresh(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * 100 - 50).to(dtype)


@pytest.mark.parametrize("dtype,kernel,part", [
    (torch.float32, r"ew/add/f32>f32,f32,f32/r\d/plain", "store_plain"),
    (torch.float16, r"ew/add/f32>f16,f16,f16/r\d/scatter", "store_scatter"),
    (torch.int8, r"ew/add/i32>i8,i8,i8/r\d/scatter", "store_scatter"),
], ids=str)
def test_strided_elementwise_is_the_family_with_its_store_part(dtype, kernel, part, strict):
    # Every other column of out: not dense, so the strided family; packed dtypes store a lane atomically.
    a, b = fresh((37, 29), dtype, 1), fresh((37, 29), dtype, 2)
    whole = torch.zeros((37, 58), dtype=dtype, device="dml")
    out = whole[:, ::2]
    torch.add(a.to("dml"), b.to("dml"), out=out)
    assert torch.equal(out.cpu(), a + b)
    assert torch.equal(whole[:, 1::2].cpu(), torch.zeros((37, 29), dtype=dtype))
    source = source_of(kernel)
    assert "{{" not in source
    assert body(WGSL / "lib" / "strided_index.wgsl") in source
    assert body(WGSL / "parts" / f"{part}.wgsl") in source
    assert "fn value(e: u32, a: " in source and "fn input_a(e: u32)" in source


def test_dense_elementwise_takes_the_quad_family(strict):
    x = torch.arange(4096, dtype=torch.float32, device="dml")
    assert torch.equal(torch.mul(x, 3).cpu(), torch.arange(4096, dtype=torch.float32) * 3)
    source = source_of(re.escape("ew/mul/f32>f32,f32,s/r1/plain/v4"))
    assert "{{" not in source
    assert body(WGSL / "lib" / "quad_words.wgsl") in source
    assert "fn strided_index" not in source
    # The scalar comes in the uniform block: the one tensor input is binding 1, the parameters 2.
    assert "@binding(1) var<storage, read_write> in_a: array<vec4<u32>>" in source
    assert "@binding(2) var<uniform> p: Params" in source


@pytest.mark.parametrize("src,dst,kernel,part", [
    (torch.float32, torch.float32, "copy/raw32/r2/plain", "store_plain"),
    (torch.float32, torch.bfloat16, "copy/f32>bf16/r2/word", "store_word"),
    (torch.int16, torch.uint8, "copy/i16>u8/r2/word", "store_word"),
], ids=str)
def test_copy_is_the_copy_family(src, dst, kernel, part, strict):
    # A transposed source into a fresh dense destination: a strided read, the dense store of dst.
    x = fresh((64, 33), src, 3)
    out = torch.empty((33, 64), dtype=dst, device="dml")
    out.copy_(x.to("dml").t())
    assert torch.equal(out.cpu(), x.t().to(dst))
    source = source_of(re.escape(kernel))
    assert "{{" not in source
    assert body(WGSL / "parts" / f"{part}.wgsl") in source
    assert "fn src_index(e: u32)" in source


def test_fill_is_the_fill_family(strict):
    t = torch.zeros((40, 40), dtype=torch.int64, device="dml")
    t[:, 3].fill_(-(2**40) - 7)
    assert "fn element(e: u32) -> vec2<u32>" in source_of(re.escape("copy/fill64/r1/plain"))
    expected = torch.zeros((40, 40), dtype=torch.int64)
    expected[:, 3] = -(2**40) - 7
    assert torch.equal(t.cpu(), expected)


def test_every_part_is_embedded_and_a_part_with_a_hole_is_refused(tmp_path):
    assert set(gen_wgsl.load_parts()) >= {"store_plain", "store_scatter", "store_word"}
    (tmp_path / "bad.wgsl").write_text("fn main() { let x = {{value}}; }\n")
    with pytest.raises(SystemExit, match="bad.wgsl"):
        gen_wgsl.load_parts(tmp_path)
