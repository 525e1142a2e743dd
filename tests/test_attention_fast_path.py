"""The eval-mode fast paths of nn.MultiheadAttention and nn.TransformerEncoderLayer run natively
(strict mode) and agree with the CPU, masks included."""

import pytest
import torch
from torch import nn

pytestmark = pytest.mark.usefixtures("strict")


def _pair(make):
    torch.manual_seed(0)
    cpu = make().eval()
    dml = make().eval()
    dml.load_state_dict(cpu.state_dict())
    return cpu, dml.to("dml")


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("padded", [False, True])
def test_encoder_layer(norm_first, activation, padded):
    cpu, dml = _pair(lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=activation,
                                                        batch_first=True, norm_first=norm_first))
    x = torch.randn(3, 7, 16, generator=torch.Generator().manual_seed(1))
    padding = torch.zeros(3, 7, dtype=torch.bool)
    padding[1, 5:] = True
    padding[2, 2:] = True
    kwargs = {"src_key_padding_mask": padding} if padded else {}
    with torch.no_grad():
        expected = cpu(x, **kwargs)
        actual = dml(x.to("dml"), **({k: v.to("dml") for k, v in kwargs.items()}))
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_encoder_with_attention_mask():
    cpu, dml = _pair(lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), 2, enable_nested_tensor=False))
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(2))
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    with torch.no_grad():
        expected = cpu(x, mask=mask)
        actual = dml(x.to("dml"), mask=mask.to("dml"))
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("average", [False, True])
def test_multi_head_attention(need_weights, average):
    cpu, dml = _pair(lambda: nn.MultiheadAttention(16, 4, batch_first=True))
    gen = torch.Generator().manual_seed(3)
    q, kv = torch.randn(2, 5, 16, generator=gen), torch.randn(2, 6, 16, generator=gen)
    padding = torch.zeros(2, 6, dtype=torch.bool)
    padding[0, 4:] = True
    with torch.no_grad():
        expected = cpu(q, kv, kv, key_padding_mask=padding, need_weights=need_weights, average_attn_weights=average)
        actual = dml(q.to("dml"), kv.to("dml"), kv.to("dml"), key_padding_mask=padding.to("dml"),
                     need_weights=need_weights, average_attn_weights=average)
    torch.testing.assert_close(actual[0].cpu(), expected[0], rtol=1e-4, atol=1e-4)
    if need_weights:
        torch.testing.assert_close(actual[1].cpu(), expected[1], rtol=1e-4, atol=1e-4)
