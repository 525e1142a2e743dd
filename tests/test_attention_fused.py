"""F.scaled_dot_product_attention on dml takes the fused kernel (the "overrideable" SDPA backend) for the
inputs it qualifies, forward and backward, and agrees with the CPU; the rest takes the exact math path.
Strict mode, and every test checks which aten ops ran, so neither the CPU fallback nor the math path
can answer for the kernel."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

pytestmark = pytest.mark.usefixtures("strict")

FUSED = "aten._scaled_dot_product_fused_attention_overrideable.default"
FUSED_BACKWARD = "aten._scaled_dot_product_fused_attention_overrideable_backward.default"
TOLERANCE = {torch.float32: 2e-4, torch.float16: 4e-3, torch.bfloat16: 3e-2}


class OpsSeen(TorchDispatchMode):
    """The aten overloads that reach the backend (below autograd and the composite SDPA)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(str(func))
        return func(*args, **(kwargs or {}))


def _inputs(shape_q, shape_k, v_dim, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(*shape_q, generator=gen).to(dtype)
    k = torch.randn(*shape_k, generator=gen).to(dtype)
    v = torch.randn(*shape_k[:-1], v_dim, generator=gen).to(dtype)
    grad = torch.randn(*shape_q[:-1], v_dim, generator=gen).to(dtype)
    return q, k, v, grad


def _mask(kind, shape_q, shape_k, dtype, seed=1):
    if kind in ("none", "causal"):
        return None
    gen = torch.Generator().manual_seed(seed)
    # (L, S) for 3-D inputs; (B, 1, L, S) for 4-D, broadcast over heads.
    shape = (shape_q[-2], shape_k[-2]) if len(shape_q) == 3 else (shape_q[0], 1, shape_q[-2], shape_k[-2])
    allowed = torch.rand(shape, generator=gen) > 0.3
    allowed[..., 0] = True  # every query sees a key (a fully masked row has its own test)
    if kind == "bool":
        return allowed
    return torch.randn(shape, generator=gen).to(dtype).masked_fill(~allowed, float("-inf"))


def _reference(q, k, v, grad, **kwargs):
    """The math path on the CPU in float64."""
    leaves = [t.double().requires_grad_() for t in (q, k, v)]
    mask = kwargs.pop("attn_mask", None)
    if mask is not None and mask.is_floating_point():
        mask = mask.double()
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(*leaves, attn_mask=mask, **kwargs)
    out.backward(grad.double())
    return out.detach(), [t.grad for t in leaves]


def _on_dml(q, k, v, grad, mask=None, **kwargs):
    leaves = [t.to("dml").requires_grad_() for t in (q, k, v)]
    with OpsSeen() as seen:
        out = F.scaled_dot_product_attention(*leaves, attn_mask=None if mask is None else mask.to("dml"), **kwargs)
        out.backward(grad.to("dml"))
    return out.detach().cpu(), [t.grad.cpu() for t in leaves], seen.ops


def _check(q, k, v, grad, mask=None, fused=True, **kwargs):
    out, grads, ops = _on_dml(q, k, v, grad, mask, **kwargs)
    expected, expected_grads = _reference(q, k, v, grad, attn_mask=mask, **kwargs)
    assert (FUSED in ops and FUSED_BACKWARD in ops) == fused, sorted(ops)
    if fused:
        assert not any("softmax" in op or "bmm" in op for op in ops), sorted(ops)
    tol = TOLERANCE[q.dtype]
    torch.testing.assert_close(out.double(), expected, rtol=tol, atol=tol)
    for name, actual, want in zip("qkv", grads, expected_grads, strict=True):
        scale = max(1.0, want.abs().max().item())
        torch.testing.assert_close(actual.double(), want, rtol=tol, atol=tol * scale, msg=lambda m, n=name: f"d{n}: {m}")


SHAPES = [  # query shape, key shape, value dim
    ((2, 3, 17, 16), (2, 3, 17, 16), 16),
    ((1, 2, 70, 64), (1, 2, 45, 64), 64),  # more queries than a workgroup's 64, keys not a tile multiple
    ((2, 1, 5, 24), (2, 1, 130, 24), 40),  # value dim != query dim, keys over several tiles
    ((3, 33, 20), (3, 41, 20), 20),  # 3-D (heads, L, E)
    ((1, 1, 1, 8), (1, 1, 1, 8), 8),
    ((1, 2, 20, 128), (1, 2, 20, 128), 128),  # the largest head dim
]


@pytest.mark.parametrize("mode", ["none", "causal", "bool", "float"])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(map(str, s[0])) + "-s" + str(s[1][-2]))
def test_matches_cpu_float32(shapes, mode):
    shape_q, shape_k, v_dim = shapes
    q, k, v, grad = _inputs(shape_q, shape_k, v_dim, torch.float32)
    _check(q, k, v, grad, _mask(mode, shape_q, shape_k, torch.float32), is_causal=mode == "causal")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["none", "causal", "float", "bool"])
def test_matches_cpu_half_dtypes(dtype, mode):
    shape_q, shape_k = (2, 2, 67, 32), (2, 2, 67, 32)
    q, k, v, grad = _inputs(shape_q, shape_k, 32, dtype)
    _check(q, k, v, grad, _mask(mode, shape_q, shape_k, dtype), is_causal=mode == "causal")


def test_scale_and_strided_inputs():
    # (B, L, H, E) projections viewed as (B, H, L, E), as nn.MultiheadAttention and GPT blocks make them.
    q, k, v, grad = _inputs((2, 19, 3, 16), (2, 23, 3, 16), 16, torch.float32)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    _check(q, k, v, grad.transpose(1, 2), scale=0.3)
    out, _, _ = _on_dml(q, k, v, grad.transpose(1, 2))
    assert out.transpose(1, 2).is_contiguous()  # the output follows the query's layout


@pytest.mark.parametrize("case", ["head_dim_160", "gqa", "mask_requires_grad"])
def test_unqualified_inputs_take_the_math_path(case):
    shape_q, shape_k, v_dim = (1, 4, 9, 16), (1, 4, 11, 16), 16
    kwargs = {}
    if case == "head_dim_160":
        shape_q, shape_k, v_dim = (1, 2, 9, 160), (1, 2, 11, 160), 160
    if case == "gqa":
        shape_k = (1, 2, 11, 16)
        kwargs["enable_gqa"] = True
    q, k, v, grad = _inputs(shape_q, shape_k, v_dim, torch.float32)
    if case == "mask_requires_grad":
        mask = torch.randn(9, 11, device="dml", requires_grad=True)
        out = F.scaled_dot_product_attention(q.to("dml"), k.to("dml"), v.to("dml"), attn_mask=mask)
        out.backward(grad.to("dml"))
        with sdpa_kernel(SDPBackend.MATH):
            want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.detach().cpu())
        torch.testing.assert_close(out.detach().cpu(), want, rtol=1e-4, atol=1e-4)
        assert mask.grad is not None
        return
    _check(q, k, v, grad, fused=False, **kwargs)


def test_choice_op_answers_overrideable():
    q = torch.randn(1, 2, 8, 16, device="dml")
    assert torch._fused_sdp_choice(q, q, q) == SDPBackend.OVERRIDEABLE.value
    assert torch._fused_sdp_choice(q, q, q, dropout_p=0.5) == SDPBackend.MATH.value
    wide = torch.randn(1, 2, 8, 130, device="dml")
    assert torch._fused_sdp_choice(wide, wide, wide) == SDPBackend.MATH.value
    with sdpa_kernel(SDPBackend.MATH):
        assert torch._fused_sdp_choice(q, q, q) == SDPBackend.MATH.value


def test_fused_forward_and_backward_are_few_dispatches():
    q, k, v, grad = (t.to("dml") for t in _inputs((2, 4, 96, 32), (2, 4, 96, 32), 32, torch.float32))
    leaves = [t.requires_grad_() for t in (q, k, v)]
    torch_dml.synchronize()
    before = torch_dml._C._stream_counters(0)[0]
    F.scaled_dot_product_attention(*leaves, is_causal=True).backward(grad)
    torch_dml.synchronize()
    # forward 1, backward 2: the rest is autograd's own (the gradient's fill and accumulation).
    assert torch_dml._C._stream_counters(0)[0] - before <= 6


def test_direct_call_with_bad_input_raises():
    q = torch.randn(1, 1, 4, 200, device="dml")
    with pytest.raises(RuntimeError, match="_scaled_dot_product_fused_attention_overrideable.*head dims up to 128"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, q, q)


def test_multi_head_attention_without_weights_is_fused():
    torch.manual_seed(0)
    cpu = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    dml = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    dml.load_state_dict(cpu.state_dict())
    dml.to("dml")
    x = torch.randn(2, 70, 32)
    padding = torch.zeros(2, 70, dtype=torch.bool)
    padding[1, 50:] = True
    # A dispatch mode sees only the fast path's own op, not what it calls: the profiler sees them all.
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        x_dml = x.to("dml")  # one tensor as query, key and value: the fast path takes only self-attention
        actual = dml(x_dml, x_dml, x_dml, key_padding_mask=padding.to("dml"), need_weights=False)[0]
    with torch.no_grad():
        expected = cpu(x, x, x, key_padding_mask=padding, need_weights=False)[0]
    names = {event.name for event in prof.events()}
    assert "aten::_native_multi_head_attention" in names and "aten::_scaled_dot_product_fused_attention_overrideable" in names
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-4)


SPLIT_SHAPES = [  # query shape, key shape, value dim
    ((2, 2, 37, 20), (2, 2, 45, 20), 12),  # rows not a multiple of a workgroup's, head dims not of 4
    ((1, 2, 21, 128), (1, 2, 23, 128), 128),  # tiles of 7 keys at split 8: fewer keys than threads per row
]


@pytest.mark.parametrize("split", ["2", "8"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["none", "causal", "bool", "float"])
def test_rows_shared_by_several_threads(monkeypatch, split, dtype, mode):
    # A GPU adapter gets up to 8 threads per row (merged in a fixed order); force them on any adapter.
    monkeypatch.setenv("TORCH_DML_ATTENTION_SPLIT", split)
    for shape_q, shape_k, v_dim in SPLIT_SHAPES:
        q, k, v, grad = _inputs(shape_q, shape_k, v_dim, dtype)
        _check(q, k, v, grad, _mask(mode, shape_q, shape_k, dtype), is_causal=mode == "causal")


@pytest.mark.parametrize("split", ["1", "4"])
def test_fully_masked_row_gives_zeros(monkeypatch, split):
    # Whole rows masked, and rows where some threads of the row see no key at all (keys 0 and 5 only).
    monkeypatch.setenv("TORCH_DML_ATTENTION_SPLIT", split)
    q, k, v, grad = _inputs((1, 2, 6, 8), (1, 2, 9, 8), 8, torch.float32)
    mask = torch.zeros(6, 9, dtype=torch.bool)
    mask[:, 0] = mask[:, 5] = True
    mask[2] = False
    out, grads, ops = _on_dml(q, k, v, grad, mask)
    assert FUSED in ops
    expected, expected_grads = _reference(q, k, v, grad, attn_mask=mask)
    assert torch.equal(out[:, :, 2], torch.zeros_like(out[:, :, 2]))
    torch.testing.assert_close(out.double(), expected, rtol=2e-4, atol=2e-4)
    for actual, want in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(actual.double(), want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("split", ["1", "8"])
def test_same_bits_on_every_run(monkeypatch, split):
    monkeypatch.setenv("TORCH_DML_ATTENTION_SPLIT", split)
    q, k, v, grad = _inputs((2, 2, 40, 32), (2, 2, 70, 32), 32, torch.float32)
    first_out, first_grads, _ = _on_dml(q, k, v, grad, is_causal=True)
    again_out, again_grads, _ = _on_dml(q, k, v, grad, is_causal=True)
    assert torch.equal(first_out, again_out)
    for first, again in zip(first_grads, again_grads, strict=True):
        assert torch.equal(first, again)
