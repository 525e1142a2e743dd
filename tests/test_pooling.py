"""max_pool2d forward (values and indices) and backward, native in strict mode, against the CPU."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml

CASES = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 1), (1, 0), (2, 1), False),
    (2, 3, 0, 1, True),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_max_pool2d_forward_backward_native(kernel, stride, padding, dilation, ceil_mode, dtype):
    torch.manual_seed(3)
    x = torch.randn(2, 3, 11, 10).to(dtype).requires_grad_()
    out, idx = F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
    grad = torch.randn(out.shape).to(dtype)
    out.backward(grad)
    d = x.detach().to("dml").requires_grad_()
    with torch_dml.strict():
        d_out, d_idx = F.max_pool2d(d, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
        d_out.backward(grad.to("dml"))
    assert torch.equal(d_out.cpu(), out.detach())
    assert torch.equal(d_idx.cpu(), idx)
    # Overlapping windows add into one element per kernel offset, rounding to bfloat16 at each add (the
    # CPU accumulates in float): allow a bfloat16 ulp or two.
    tol = {"rtol": 3e-2, "atol": 1e-2} if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(d.grad.cpu(), x.grad, **tol)


def test_max_pool2d_unbatched_and_module():
    x = torch.randn(4, 9, 9)
    with torch_dml.strict():
        actual = torch.nn.MaxPool2d(3, 2)(x.to("dml"))
    assert torch.equal(actual.cpu(), torch.nn.MaxPool2d(3, 2)(x))
