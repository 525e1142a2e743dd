"""embedding_dense_backward (nn.Embedding's backward), native (strict mode), against the CPU:
repeated indices, padding_idx, scale_grad_by_freq, int32/int64 indices, and the same bits every run."""

import re

import pytest
import torch
import torch_dml
from test_driver_portability import signed_remainders

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if torch_dml.has_float64_support(0) else [])
# float32/float64 add the same terms in the same order as the CPU; float16/bfloat16 are summed in
# float32 and rounded once, where the CPU rounds after every addition.
EXACT = {torch.float32, torch.float64}


def backward(grad, indices, num_weights, padding_idx=-1, scale=False):
    return torch.ops.aten.embedding_dense_backward(grad, indices, num_weights, padding_idx, scale)


def check(grad, indices, num_weights, padding_idx=-1, scale=False):
    expected = backward(grad, indices, num_weights, padding_idx, scale)
    actual = backward(grad.to("dml"), indices.to("dml"), num_weights, padding_idx, scale).cpu()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if grad.dtype in EXACT and not scale:
        assert torch.equal(actual, expected)
    else:
        tolerance = {torch.float16: 5e-2, torch.bfloat16: 1e-1}.get(grad.dtype, 1e-6)
        torch.testing.assert_close(actual.double(), expected.double(), rtol=tolerance, atol=tolerance)


def tokens(shape, num_weights, seed, dtype=torch.int64):
    return torch.randint(0, num_weights, shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32], ids=str)
def test_repeated_indices(dtype, index_dtype):
    g = torch.Generator().manual_seed(1)
    indices = tokens((4, 37), 11, 2, index_dtype)  # many repeats of each of 11 rows
    grad = torch.randn(4, 37, 9, generator=g).to(dtype)
    check(grad, indices, 11)
    check(grad[..., :8], indices, 13)  # even width, rows never indexed


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_padding_idx_and_scale_grad_by_freq(dtype):
    g = torch.Generator().manual_seed(3)
    indices = tokens((300,), 7, 4)
    grad = torch.randn(300, 5, generator=g).to(dtype)
    check(grad, indices, 7, padding_idx=3)
    check(grad, indices, 7, scale=True)
    check(grad, indices, 7, padding_idx=0, scale=True)


def test_scale_grad_by_freq_divides_by_the_count():
    indices = torch.tensor([2, 2, 2, 0])
    grad = torch.tensor([[1.0], [2.0], [4.0], [5.0]])
    actual = backward(grad.to("dml"), indices.to("dml"), 3, -1, True).cpu()
    assert torch.equal(actual, torch.tensor([[5.0], [0.0], [7.0 / 3.0]]))


def test_edge_shapes():
    grad = torch.randn(3, 4)
    check(grad, torch.tensor([0, 0, 0]), 1)
    check(torch.randn(0, 4), torch.empty(0, dtype=torch.int64), 5)  # no positions: zeros
    check(torch.randn(3, 0), torch.tensor([1, 2, 0]), 4)  # no columns
    check(torch.randn(2, 3, 4).transpose(0, 1), torch.tensor([[1, 2], [0, 1], [3, 3]]), 4)  # strided grad
    check(torch.randn(600, 3), tokens((600,), 2000, 5), 2000)  # more rows than positions, several chunks


def test_same_bits_every_run():
    g = torch.Generator().manual_seed(6)
    indices = tokens((2048,), 5, 7).to("dml")  # a few very hot rows
    grad = torch.randn(2048, 64, generator=g).to("dml")
    first = backward(grad, indices, 5).cpu()
    for _ in range(3):
        assert torch.equal(backward(grad, indices, 5).cpu(), first)
    assert torch.equal(first, backward(grad.cpu(), indices.cpu(), 5))


def test_embedding_training_step_matches_the_cpu():
    torch.manual_seed(0)
    cpu = torch.nn.Embedding(50, 16, padding_idx=1)
    dml = torch.nn.Embedding(50, 16, padding_idx=1).to("dml")
    dml.load_state_dict(cpu.state_dict())
    batch = tokens((8, 12), 50, 8)
    batch[0, :4] = 1
    for model, device in [(cpu, "cpu"), (dml, "dml")]:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        (model(batch.to(device)) ** 2).sum().backward()
        optimizer.step()
    assert torch.equal(dml.weight.grad.cpu(), cpu.weight.grad)
    torch.testing.assert_close(dml.weight.detach().cpu(), cpu.weight.detach())
    assert torch_dml.fallback_counts().get("aten::embedding_dense_backward", 0) == 0


def test_indices_out_of_range_are_left_out():
    # The CPU kernel writes out of bounds here (it does not check; the forward embedding did): the
    # device kernel must stay in bounds and leave such positions out.
    grad = torch.arange(8.0).view(4, 2)
    indices = torch.tensor([1, -1, 7, 1])
    actual = backward(grad.to("dml"), indices.to("dml"), 3).cpu()
    assert torch.equal(actual, torch.tensor([[0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]))
    actual = backward(grad.to("dml"), indices.int().to("dml"), 3).cpu()
    assert torch.equal(actual, torch.tensor([[0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]))


def test_bad_index_dtype_is_the_cpu_error():
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        backward(torch.ones(2, 3, device="dml"), torch.tensor([0.0, 1.0], device="dml"), 4)


def test_kernels_have_no_signed_remainder():
    backward(torch.ones(4, 3, device="dml"), torch.tensor([0, 1, 1, 2], device="dml"), 4, -1, True)
    names = [n for n in torch_dml._C._compiled_kernels(0) if re.match(r"(index_sort|index_add)/", n)]
    assert len(names) >= 4, names
    for name in names:
        assert not signed_remainders(torch_dml._C._compiled_kernel_source(0, name)), name


def test_grad_weight_larger_than_one_storage_binding():
    # GPT-2's token embedding (50257 x 768 float32, 154 MB) is past lavapipe's 128 MiB binding limit:
    # the kernel binds it a slice of rows at a time.
    num_weights, width = 50257, 768
    indices = tokens((2, 256), num_weights, 9)
    indices[0, :3] = torch.tensor([0, num_weights - 1, num_weights - 1])
    grad = torch.randn(2, 256, width, generator=torch.Generator().manual_seed(10))
    check(grad, indices, num_weights)
