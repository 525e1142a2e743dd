"""layer_norm forward and backward, native (strict mode), against the CPU."""

import pytest
import torch

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
             torch.bfloat16: {"rtol": 3e-2, "atol": 3e-2}}


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,normalized", [((4, 10), (10,)), ((2, 3, 300), (300,)), ((3, 4, 5), (4, 5))], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_forward_and_stats(dtype, shape, normalized, affine):
    x = rand(*shape, dtype=dtype) * 3 + 1
    w = rand(*normalized, dtype=dtype, seed=1) if affine else None
    b = rand(*normalized, dtype=dtype, seed=2) if affine else None
    to = (lambda t: None if t is None else t.to("dml"))
    actual = torch.native_layer_norm(x.to("dml"), normalized, to(w), to(b), 1e-5)
    up = (lambda t: None if t is None else t.float())
    expected = torch.native_layer_norm(x.float(), normalized, up(w), up(b), 1e-5)
    for a, e in zip(actual, expected):
        assert a.device.type == "dml" and a.dtype == dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e.to(dtype), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_backward_kernel(dtype):
    x, g = rand(6, 40, dtype=dtype, seed=3), rand(6, 40, dtype=dtype, seed=4)
    w, b = rand(40, dtype=dtype, seed=5), rand(40, dtype=dtype, seed=6)
    _, mean, rstd = torch.native_layer_norm(x.float(), [40], w.float(), b.float(), 1e-5)
    actual = torch.ops.aten.native_layer_norm_backward(
        g.to("dml"), x.to("dml"), [40], mean.to(dtype).to("dml"), rstd.to(dtype).to("dml"), w.to("dml"),
        b.to("dml"), [True, True, True])
    expected = torch.ops.aten.native_layer_norm_backward(
        g.float(), x.float(), [40], mean.to(dtype).float(), rstd.to(dtype).float(), w.float(), b.float(),
        [True, True, True])
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
