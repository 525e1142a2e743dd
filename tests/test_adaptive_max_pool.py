"""adaptive_max_pool2d and its backward against the CPU, in strict mode (the native kernel answers)."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from helpers import kernels_of

pytestmark = pytest.mark.usefixtures("strict")

SHAPES = [  # (input shape, output size): divisible, overlapping windows, larger output than input, 3-D
    ((2, 3, 8, 8), (4, 4)),
    ((2, 3, 7, 9), (3, 4)),
    ((1, 2, 5, 3), (7, 6)),
    ((4, 10, 11), (5, 1)),
    ((1, 1, 1, 1), (1, 1)),
]


@pytest.mark.parametrize("shape,size", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_forward_and_backward_match_the_cpu(shape, size, dtype):
    torch.manual_seed(0)
    x = torch.randn(shape).to(dtype)
    # Repeated values make ties, which must keep the first maximum's index as the CPU does.
    x = torch.round(x * 2) / 2
    cpu = x.clone().requires_grad_()
    dml = x.to("dml").requires_grad_()
    values, indices = F.adaptive_max_pool2d(cpu, size, return_indices=True)
    got_values, got_indices = F.adaptive_max_pool2d(dml, size, return_indices=True)
    assert got_values.dtype == dtype and got_indices.dtype == torch.int64
    assert torch.equal(got_values.cpu(), values)
    assert torch.equal(got_indices.cpu(), indices)
    grad = torch.randn(values.shape).to(dtype)
    values.backward(grad)
    got_values.backward(grad.to("dml"))
    tolerance = {torch.float16: 1e-2, torch.bfloat16: 5e-2}.get(dtype, 1e-6)
    torch.testing.assert_close(dml.grad.cpu(), cpu.grad, rtol=tolerance, atol=tolerance)


def test_nan_and_negative_infinity_follow_the_cpu_rule():
    x = torch.full((1, 1, 4, 4), float("-inf"))
    x[0, 0, 0, 2] = float("nan")
    x[0, 0, 1, 3] = float("nan")  # the last NaN of a window wins
    x[0, 0, 2, 1] = 5.0
    values, indices = F.adaptive_max_pool2d(x, (2, 2), return_indices=True)
    got_values, got_indices = F.adaptive_max_pool2d(x.to("dml"), (2, 2), return_indices=True)
    assert torch.equal(got_indices.cpu(), indices)
    torch.testing.assert_close(got_values.cpu(), values, equal_nan=True)


def test_channels_last_and_out_overload():
    x = torch.randn(2, 4, 6, 6).to(memory_format=torch.channels_last)
    out, idx = torch.empty(0, device="dml"), torch.empty(0, dtype=torch.long, device="dml")
    torch.ops.aten.adaptive_max_pool2d.out(x.to("dml"), [3, 2], out=out, indices=idx)
    values, indices = torch.ops.aten.adaptive_max_pool2d(x, [3, 2])
    assert torch.equal(out.cpu(), values) and torch.equal(idx.cpu(), indices)


def test_backward_is_one_gather_kernel_without_a_wait():
    # Overlapping windows (7 -> 3 along each axis) on rounded values: several outputs pick one element,
    # and their gradients add in the CPU's order, so float32 matches it bit for bit.
    torch.manual_seed(4)
    x = (torch.randn(2, 3, 7, 7) * 2).round().requires_grad_()
    values, _ = F.adaptive_max_pool2d(x, 3, return_indices=True)
    grad = torch.randn(values.shape)
    values.backward(grad)
    d = x.detach().to("dml").requires_grad_()
    got, _ = F.adaptive_max_pool2d(d, 3, return_indices=True)
    g = grad.to("dml")
    waits = []

    def backward():
        before = torch_dml._C._wait_count(0)
        with torch_dml.strict():
            got.backward(g)
        waits.append(torch_dml._C._wait_count(0) - before)

    assert kernels_of(backward) == ["adaptive_max_pool2d_backward/f32"]
    assert waits == [0]  # no index check read back (scatter_add_ waited for one)
    assert torch.equal(d.grad.cpu(), x.grad)


def test_empty_batch():
    x = torch.randn(0, 3, 8, 8, device="dml", requires_grad=True)
    with torch_dml.strict():
        values, indices = F.adaptive_max_pool2d(x, 3, return_indices=True)
        values.sum().backward()
    assert values.shape == indices.shape == (0, 3, 3, 3) and x.grad.shape == x.shape
