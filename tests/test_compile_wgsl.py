"""torch.compile's generated WGSL kernels (torch_dml/compile/wgsl_kernel.py): fused float32 pointwise chains
(and sum/max/min reductions with them) launch one kernel where eager launches one per op, and compute what
the CPU computes, over broadcast, strided and dynamically shaped inputs, with NaN, infinities and signed
zeros kept; nodes the generator cannot write still run; the launch entry point reports bad kernels as
Python errors."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from torch._inductor.utils import run_and_get_code
from torch_dml.compile import config


@pytest.fixture(autouse=True)
def fresh_compiler() -> Iterator[None]:
    """Every test compiles for real (Inductor's on-disk caches are shared by the machine's processes)."""
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        yield
    torch._dynamo.reset()


def _dispatches(fn: Callable[[], object]) -> tuple[int, int]:
    """Kernels dispatched on dml:0 while `fn` runs, and how many of them were generated ones."""
    torch.dml.synchronize()
    dispatched, generated = torch_dml._C._stream_counters(0)[0], torch_dml._C._generated_launches()
    fn()
    torch.dml.synchronize()
    return torch_dml._C._stream_counters(0)[0] - dispatched, torch_dml._C._generated_launches() - generated


def _chain(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.gelu(x * w + b) * 2.0 - torch.sigmoid(x) / (x.abs() + 1.0)


def test_fused_chain_is_one_kernel_and_computes_what_the_cpu_computes(dml: torch.device) -> None:
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(64, 96, generator=g), torch.randn(96, generator=g), torch.randn(96, generator=g)
    args = (x.to(dml), w.to(dml), b.to(dml))
    compiled = torch.compile(_chain)
    with torch_dml.strict():
        out, (code, *_) = run_and_get_code(compiled, *args)
        fused, generated = _dispatches(lambda: compiled(*args))
        eager, _ = _dispatches(lambda: _chain(*args))
    assert "dml_wgsl_kernel" in code and "dml_eager_kernel" not in code
    assert (fused, generated) == (1, 1)
    assert eager > fused
    torch.testing.assert_close(out.cpu(), _chain(x, w, b))
    torch.testing.assert_close(out.cpu(), _chain(*args).cpu())


def test_broadcast_and_strided_inputs(dml: torch.device) -> None:
    def f(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a.t() * b) + c[1, ::2] - 1.5

    g = torch.Generator().manual_seed(1)
    a, b, c = torch.randn(24, 5, generator=g), torch.randn(5, 1, generator=g), torch.randn(3, 60, generator=g)
    out, (code, *_) = run_and_get_code(torch.compile(f), a.to(dml), b.to(dml), c.to(dml)[:, 4:52])
    assert "dml_wgsl_kernel" in code
    torch.testing.assert_close(out.cpu(), f(a, b, c[:, 4:52]))


def test_more_than_65535_workgroups_take_the_second_grid_dimension(dml: torch.device) -> None:
    n = 65536 * 256 + 300
    x = torch.arange(n, dtype=torch.float32) % 1000
    out = torch.compile(lambda t: t * 2 - 3)(x.to(dml)).cpu()
    assert torch.equal(out, x * 2 - 3)


def test_nan_infinities_and_signed_zeros_match_the_cpu_bit_for_bit(dml: torch.device) -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.where(x > y, torch.maximum(x, y), torch.relu(-x)) + torch.minimum(x * 0.5, y)

    specials = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, -1e-45, 3e38, -2.5, 7.0]
    x = torch.tensor(specials).repeat_interleave(len(specials))
    y = torch.tensor(specials).repeat(len(specials))
    out = torch.compile(f)(x.to(dml), y.to(dml)).cpu()
    want = f(x, y)
    # Every op here is exact (comparisons, max/min, halving, sums of one rounding), so bits must agree,
    # but for NaN's payload, which neither side defines.
    assert torch.equal(out.isnan(), want.isnan())
    kept = ~want.isnan()
    assert torch.equal(out[kept].view(torch.int32), want[kept].view(torch.int32)), (out, want)


def test_dynamic_shapes_take_sizes_at_launch(dml: torch.device) -> None:
    def f(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return torch.exp(x - s) * 3.0

    compiled = torch.compile(f, dynamic=True)
    for n in (7, 300, 1025):
        x, s = torch.randn(n, 3), torch.randn(3)
        out, (code, *_) = run_and_get_code(compiled, x.to(dml), s.to(dml))
        assert "dml_wgsl_kernel" in code or n != 7   # later sizes reuse the first size's graph
        torch.testing.assert_close(out.cpu(), f(x, s))


def test_reductions_fuse_with_their_pointwise_neighbours(dml: torch.device) -> None:
    def f(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = torch.tanh(x * w)
        softmax_denominator = (y - y.amax(dim=1, keepdim=True)).exp().sum(dim=1)
        return y.sum(dim=0) * 2, softmax_denominator, x.sum(), y.amin(dim=1)

    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(300, 40, generator=g), torch.randn(40, generator=g)
    x[7, 3] = float("nan")   # max and min propagate NaN
    compiled = torch.compile(f)
    with torch_dml.strict():
        out, (code, *_) = run_and_get_code(compiled, x.to(dml), w.to(dml))
        fused, generated = _dispatches(lambda: compiled(x.to(dml), w.to(dml)))
        eager, _ = _dispatches(lambda: f(x.to(dml), w.to(dml)))
    assert "dml_eager_kernel" not in code and "aten.sum.dim_IntList" not in code and "aten.amax" not in code
    # One output of 12000 elements would be one thread's loop: that sum stays dml's eager reduction.
    assert "aten.sum.default" in code
    assert generated > 0 and fused < eager
    for got, want in zip(out, f(x, w), strict=True):
        torch.testing.assert_close(got.cpu(), want, equal_nan=True)


def test_switched_off_every_op_is_an_eager_kernel(dml: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "wgsl", False)
    x = torch.randn(5, 6)
    out, (code, *_) = run_and_get_code(torch.compile(lambda t: torch.sigmoid(t) * 2 + 1), x.to(dml))
    assert "dml_wgsl_kernel" not in code
    torch.testing.assert_close(out.cpu(), torch.sigmoid(x) * 2 + 1)


def test_unwritable_nodes_run_beside_generated_ones(dml: torch.device) -> None:
    """A reduction and a float64 chain are not generated; they run (stage one's path) beside a fused chain."""
    def f(x: torch.Tensor, d: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = torch.sin(x) * 2 + 1
        return y, y.sum(dim=1), (d * 3).exp()

    x, d = torch.randn(6, 10), torch.randn(4, dtype=torch.float64)
    if not torch_dml.has_float64_support(0):
        d = d.float()
    out = torch.compile(f)(x.to(dml), d.to(dml))
    for got, want in zip(out, f(x, d), strict=True):
        torch.testing.assert_close(got.cpu(), want)


def test_mlp_training_step_launches_fewer_kernels_compiled(dml: torch.device) -> None:
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32), torch.nn.Tanh())
    mlp = mlp.to(dml)
    x = torch.randn(16, 32).to(dml)

    def loss(t: torch.Tensor) -> torch.Tensor:
        return ((mlp(t) * 1.5 + 0.25).square() - mlp[0].bias.sum()).mean()

    def step(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        mlp.zero_grad(set_to_none=True)
        fn(x).backward()

    compiled = torch.compile(loss)
    step(compiled)   # compiles
    fused, generated = _dispatches(lambda: step(compiled))
    fused_grads = [p.grad.cpu() for p in mlp.parameters()]
    eager, _ = _dispatches(lambda: step(loss))
    assert generated > 0 and fused < eager, (fused, eager)
    for got, want in zip(fused_grads, [p.grad.cpu() for p in mlp.parameters()], strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)


_DOUBLE = """
struct Params { off: array<vec4<u32>, 2>, n: u32, }
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<storage, read_write> src: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= p.n) { return; }
  dst[p.off[0][0] + gid.x] = src[p.off[0][1] + 3u * gid.x] * 2.0;
}
"""


def test_launch_wgsl_binds_windows_with_offsets(dml: torch.device) -> None:
    base = torch.arange(40.0).to(dml)
    dst = torch.zeros(12).to(dml)[5:]
    torch_dml._C._launch_wgsl("test_double", _DOUBLE, [dst, base[2::3]], struct.pack("<I", 7), 1)
    assert dst.cpu().tolist() == [2.0 * v for v in range(2, 23, 3)]


def test_launch_wgsl_reports_bad_kernels(dml: torch.device) -> None:
    t = torch.zeros(4).to(dml)
    with pytest.raises(RuntimeError, match=r"(?s)test_broken.*adapter.*fn main\( \{"):
        torch_dml._C._launch_wgsl("test_broken", "fn main( {", [t], b"", 1)
    with pytest.raises(RuntimeError, match="at most 8"):
        torch_dml._C._launch_wgsl("test_many", _DOUBLE, [t] * 9, b"", 1)
    with pytest.raises(RuntimeError, match="one dml device|bytes of scalars"):
        torch_dml._C._launch_wgsl("test_scalars", _DOUBLE, [t, t], bytes(300), 1)
