"""layer_norm forward and backward, native (strict mode), against the CPU."""

import pytest
import torch
import torch_dml
from helpers import run_python

pytestmark = pytest.mark.usefixtures("strict")

FLOAT64 = [torch.float64] if torch_dml.has_float64_support(0) else []
FLOATS = [torch.float32, torch.float16, torch.bfloat16] + FLOAT64
TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
             torch.bfloat16: {"rtol": 3e-2, "atol": 3e-2}, torch.float64: {"rtol": 1e-10, "atol": 1e-12}}
needs_f64 = pytest.mark.skipif(not FLOAT64, reason="adapter has no shader-f64")


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def wide(t):
    """The reference's computation dtype: float32, float64 for float64."""
    return None if t is None else (t if t.dtype == torch.float64 else t.float())


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,normalized", [((4, 10), (10,)), ((2, 3, 300), (300,)), ((3, 4, 5), (4, 5))], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_forward_and_stats(dtype, shape, normalized, affine):
    x = rand(*shape, dtype=dtype) * 3 + 1
    w = rand(*normalized, dtype=dtype, seed=1) if affine else None
    b = rand(*normalized, dtype=dtype, seed=2) if affine else None
    to = (lambda t: None if t is None else t.to("dml"))
    actual = torch.native_layer_norm(x.to("dml"), normalized, to(w), to(b), 1e-5)
    expected = torch.native_layer_norm(wide(x), normalized, wide(w), wide(b), 1e-5)
    for a, e in zip(actual, expected):
        assert a.device.type == "dml" and a.dtype == dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e.to(dtype), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_backward_kernel(dtype):
    x, g = rand(6, 40, dtype=dtype, seed=3), rand(6, 40, dtype=dtype, seed=4)
    w, b = rand(40, dtype=dtype, seed=5), rand(40, dtype=dtype, seed=6)
    _, mean, rstd = torch.native_layer_norm(wide(x), [40], wide(w), wide(b), 1e-5)
    actual = torch.ops.aten.native_layer_norm_backward(
        g.to("dml"), x.to("dml"), [40], mean.to(dtype).to("dml"), rstd.to(dtype).to("dml"), w.to("dml"),
        b.to("dml"), [True, True, True])
    expected = torch.ops.aten.native_layer_norm_backward(
        wide(g), wide(x), [40], wide(mean.to(dtype)), wide(rstd.to(dtype)), wide(w), wide(b), [True, True, True])
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a.cpu(), e.to(dtype), **TOLERANCE[dtype])


def test_module_training_gradients_match_cpu():
    layer = torch.nn.LayerNorm(16)
    x = rand(5, 16, seed=7)
    dml_layer = torch.nn.LayerNorm(16).to("dml")
    dml_layer.load_state_dict(layer.state_dict())
    d = x.to("dml").requires_grad_()
    c = x.clone().requires_grad_()
    dml_layer(d).sum().backward()
    layer(c).sum().backward()
    torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(dml_layer.weight.grad.cpu(), layer.weight.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(dml_layer.bias.grad.cpu(), layer.bias.grad, rtol=1e-4, atol=1e-5)



@needs_f64
@pytest.mark.parametrize("shape,normalized", [((3, 5000), (5000,)), ((2, 3, 4, 5), (4, 5)), ((0, 8), (8,)),
                                              ((1, 1), (1,))], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_float64_forward_and_backward(shape, normalized, affine):
    x = (rand(*shape, dtype=torch.float64) * 3 + 1).requires_grad_()
    w = rand(*normalized, dtype=torch.float64, seed=1).requires_grad_() if affine else None
    b = rand(*normalized, dtype=torch.float64, seed=2).requires_grad_() if affine else None
    g = rand(*shape, dtype=torch.float64, seed=3)
    to = (lambda t: None if t is None else t.detach().to("dml").requires_grad_())
    dx, dw, db = to(x), to(w), to(b)
    actual = torch.native_layer_norm(dx, normalized, dw, db, 1e-5)
    expected = torch.native_layer_norm(x, normalized, w, b, 1e-5)
    for a, e in zip(actual, expected):
        assert a.device.type == "dml" and a.dtype == torch.float64 and a.shape == e.shape
        torch.testing.assert_close(a.detach().cpu(), e.detach(), **TOLERANCE[torch.float64])
    actual[0].backward(g.to("dml"))
    expected[0].backward(g)
    for a, e in [(dx, x)] + ([(dw, w), (db, b)] if affine else []):
        torch.testing.assert_close(a.grad.cpu(), e.grad, **TOLERANCE[torch.float64])


@needs_f64
def test_float64_non_contiguous_and_special_rows():
    # A transposed input, a constant row (variance exactly 0), and rows with inf and NaN.
    x = rand(64, 6, dtype=torch.float64, seed=8).t()
    x[1] = 2.5
    x[2, 3] = float("inf")
    x[3, 7] = float("nan")
    actual = torch.nn.functional.layer_norm(x.to("dml"), (64,), eps=1e-6)
    expected = torch.nn.functional.layer_norm(x, (64,), eps=1e-6)
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **TOLERANCE[torch.float64])


@needs_f64
def test_float64_without_shader_int64_falls_back_counted():
    result = run_python(
        "import torch, torch_dml\n"
        "x = torch.randn(4, 8, dtype=torch.float64)\n"
        "out = torch.nn.functional.layer_norm(x.to('dml'), (8,))\n"
        "torch.testing.assert_close(out.cpu(), torch.nn.functional.layer_norm(x, (8,)))\n"
        "print(dict(torch_dml.fallback_counts()))\n",
        TORCH_DML_DISABLE_FEATURES="shader-int64", TORCH_DML_FALLBACK_WARN="0",
    )
    assert result.returncode == 0, result.stderr
    assert "aten::native_layer_norm" in result.stdout
