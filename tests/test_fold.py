"""nn.Unfold / nn.Fold (im2col / col2im) composed from dml ops, in strict mode: the CPU's columns and
images exactly (col2im adds the taps in the CPU's order), batched or not, with every window argument."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml

WINDOWS = {
    "3x3": {"kernel_size": 3},
    "2x3_stride_2": {"kernel_size": (2, 3), "stride": 2},
    "padded_dilated": {"kernel_size": 3, "padding": (1, 2), "dilation": (2, 1)},
    "overlapping": {"kernel_size": 4, "stride": (1, 2), "padding": 1},
}


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name", list(WINDOWS))
def test_unfold_and_fold_equal_the_cpu(name, batched):
    window = WINDOWS[name]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*((2,) if batched else ()), 3, 9, 8, generator=gen)
    c = x.clone().requires_grad_()
    cols = F.unfold(c, **window)
    grad = torch.randn(cols.shape, generator=gen)
    cols.backward(grad)
    d = x.to("dml").requires_grad_()
    with torch_dml.strict():
        got = F.unfold(d, **window)
        got.backward(grad.to("dml"))
        image = F.fold(grad.to("dml"), (9, 8), **window)
    assert torch.equal(got.detach().cpu(), cols.detach())
    assert torch.equal(d.grad.cpu(), c.grad)  # unfold's gradient is fold
    assert torch.equal(image.cpu(), F.fold(grad, (9, 8), **window))
