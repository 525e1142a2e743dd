"""nn.LSTM / nn.GRU and their cells run natively (strict mode) and agree with the CPU, forward and
backward: aten routes every accelerator's cells to `_thnn_fused_lstm_cell` / `_thnn_fused_gru_cell`,
which the CPU does not have, so before dml had them these modules could not run at all."""

import pytest
import torch
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
