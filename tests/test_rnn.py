"""nn.LSTM / nn.GRU and their cells run natively (strict mode) and agree with the CPU, forward and
backward: aten routes every accelerator's cells to `_thnn_fused_lstm_cell` / `_thnn_fused_gru_cell`,
which the CPU does not have, so before dml had them these modules could not run at all."""

import pytest
import torch
from helpers import kernels_of
from torch import nn

pytestmark = pytest.mark.usefixtures("strict")

TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float16: {"rtol": 2e-2, "atol": 2e-2},
             torch.bfloat16: {"rtol": 5e-2, "atol": 5e-2}}


def _run(module: nn.Module, inputs: tuple, device: str, dtype: torch.dtype):
    module = module.to(device=device, dtype=dtype)
    args = [t.detach().to(device=device, dtype=dtype).requires_grad_() for t in inputs]
    out = module(*args)
    outputs = [out] if isinstance(out, torch.Tensor) else [t for t in torch.utils._pytree.tree_leaves(out)]
    total = sum((o.float() * (i + 1)).sum() for i, o in enumerate(outputs))
    total.backward()
    grads = [a.grad for a in args] + [p.grad for p in module.parameters()]
    return [o.detach().cpu() for o in outputs], [g.cpu() for g in grads]


def _compare(make, inputs, dtype):
    torch.manual_seed(0)
    reference = make()
    on_dml = make()
    on_dml.load_state_dict(reference.state_dict())
    expected_out, expected_grads = _run(reference, inputs, "cpu", torch.float32)
    out, grads = _run(on_dml, inputs, "dml", dtype)
    for a, e in zip(out + grads, expected_out + expected_grads, strict=True):
        torch.testing.assert_close(a.float(), e, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell(dtype, bias):
    gen = torch.Generator().manual_seed(1)
    x, h, c = torch.randn(4, 6, generator=gen), torch.randn(4, 5, generator=gen), torch.randn(4, 5, generator=gen)
    _compare(lambda: nn.LSTMCell(6, 5, bias=bias), (x,), dtype)
    del h, c


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell(dtype, bias):
    gen = torch.Generator().manual_seed(2)
    x, h = torch.randn(4, 6, generator=gen), torch.randn(4, 5, generator=gen)
    _compare(lambda: nn.GRUCell(6, 5, bias=bias), (x, h), dtype)


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU], ids=lambda k: k.__name__)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_stacked_recurrent_layers(kind, bidirectional):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(3, 7, 4, generator=gen)
    _compare(lambda: kind(4, 6, num_layers=2, batch_first=True, bidirectional=bidirectional), (x,), torch.float32)


def test_lstm_cell_with_state_only_hidden_gradient():
    """Backward with a gradient on h only (c's gradient undefined), as the last step of a sequence gets."""
    gen = torch.Generator().manual_seed(4)
    x, h, c = torch.randn(2, 3, generator=gen), torch.randn(2, 4, generator=gen), torch.randn(2, 4, generator=gen)
    results = []
    for device in ("cpu", "dml"):
        torch.manual_seed(0)
        cell = nn.LSTMCell(3, 4).to(device)
        args = [t.detach().to(device).requires_grad_() for t in (x, h, c)]
        hy, _ = cell(args[0], (args[1], args[2]))
        hy.sum().backward()
        results.append([a.grad.cpu() for a in args])
    for a, e in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cells_are_one_kernel_each_way(kind):
    gen = torch.Generator().manual_seed(5)
    cell = (nn.LSTMCell if kind == "lstm" else nn.GRUCell)(6, 5).to("dml")
    x, h = torch.randn(4, 6, generator=gen).to("dml"), torch.randn(4, 5, generator=gen).to("dml")
    state = (h, h.clone()) if kind == "lstm" else h
    out = [None]
    forward = kernels_of(lambda: out.__setitem__(0, cell(x, state)))
    assert forward.count(f"{kind}_cell/f32") == 1, forward
    # Only the two gate GEMMs (bias added in the cell) run beside it: no elementwise activations.
    assert not [k for k in forward if k.startswith("ew/")], forward
    hy = out[0][0] if kind == "lstm" else out[0]
    backward = kernels_of(lambda: hy.sum().backward())
    assert len([k for k in backward if k.startswith(f"{kind}_cell_backward/f32")]) == 1, backward
    assert not [k for k in backward if k.startswith(("ew/sigmoid", "ew/tanh", "ew/mul"))], backward


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU], ids=lambda k: k.__name__)
def test_float64_cells_match_the_cpu_closely(kind):
    import torch_dml

    if not torch_dml.has_float64_support(0):
        pytest.skip("the adapter has no float64")
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(5, 3, 4, generator=gen, dtype=torch.float64)
    torch.manual_seed(0)
    reference = kind(4, 6, num_layers=2).double()
    on_dml = kind(4, 6, num_layers=2).double()
    on_dml.load_state_dict(reference.state_dict())
    expected_out, expected_grads = _run(reference, (x,), "cpu", torch.float64)
    out, grads = _run(on_dml, (x,), "dml", torch.float64)
    for a, e in zip(out + grads, expected_out + expected_grads, strict=True):
        torch.testing.assert_close(a, e, rtol=1e-12, atol=1e-12)


def test_lstm_backward_with_only_a_cell_state_gradient():
    """grad_hy undefined, grad_cy given: the kernel reads a stand-in for grad_hy and must not use it."""
    gen = torch.Generator().manual_seed(7)
    gates = torch.randn(3, 16, generator=gen, dtype=torch.float64)
    cx, grad_cy = torch.randn(3, 4, generator=gen, dtype=torch.float64), torch.randn(3, 4, generator=gen,
                                                                                       dtype=torch.float64)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    workspace = torch.cat([i, f, g, o], 1)
    want_gates = torch.cat([grad_cy * g * i * (1 - i), grad_cy * cx * f * (1 - f), grad_cy * i * (1 - g * g),
                            torch.zeros_like(cx)], 1)
    got = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(
        None, grad_cy.float().to("dml"), cx.float().to("dml"), cy.float().to("dml"), workspace.float().to("dml"), True)
    torch.testing.assert_close(got[0].cpu().double(), want_gates, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got[1].cpu().double(), grad_cy * f, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got[2].cpu().double(), want_gates.sum(0), rtol=1e-5, atol=1e-6)


def test_lstm_cell_with_one_bias_takes_the_composed_path():
    """One bias without the other is not the kernel's case: the cell is composed of dml ops instead."""
    gen = torch.Generator().manual_seed(8)
    ig, hg = torch.randn(3, 16, generator=gen), torch.randn(3, 16, generator=gen)
    cx, ib = torch.randn(3, 4, generator=gen), torch.randn(16, generator=gen)
    i, f, g, o = (ig + ib + hg).double().chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx.double() + i * g
    got = kernels_of(lambda: torch.ops.aten._thnn_fused_lstm_cell(ig.to("dml"), hg.to("dml"), cx.to("dml"),
                                                                 ib.to("dml"), None))
    assert not [k for k in got if k.startswith("lstm_cell")] and [k for k in got if k.startswith("ew/sigmoid")], got
    hy, c, workspace = torch.ops.aten._thnn_fused_lstm_cell(ig.to("dml"), hg.to("dml"), cx.to("dml"), ib.to("dml"), None)
    torch.testing.assert_close(hy.cpu().double(), o * cy.tanh(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(c.cpu().double(), cy, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(workspace.cpu().double(), torch.cat([i, f, g, o], 1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", [nn.LSTMCell, nn.GRUCell], ids=lambda k: k.__name__)
def test_cells_take_an_empty_batch(kind):
    cell = kind(3, 4).to("dml")
    x = torch.randn(0, 3, device="dml", requires_grad=True)
    out = cell(x)
    outputs = out if isinstance(out, tuple) else (out,)
    assert all(o.shape == (0, 4) for o in outputs)
    sum(o.sum() for o in outputs).backward()
    assert x.grad.shape == (0, 3)
