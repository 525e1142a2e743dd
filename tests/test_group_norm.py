"""nn.GroupNorm trains natively (strict mode): the forward is PyTorch's composite math on dml ops, the
backward dml's own; both against the CPU."""

import pytest
import torch
from torch import nn

pytestmark = pytest.mark.usefixtures("strict")

TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float16: {"rtol": 2e-2, "atol": 2e-2},
             torch.bfloat16: {"rtol": 5e-2, "atol": 5e-2}}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,groups", [((2, 8, 5, 6), 4), ((3, 6, 10), 3), ((1, 4, 2, 3, 2), 1), ((2, 6), 3)])
def test_group_norm_forward_and_backward(dtype, affine, shape, groups):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen) * 3 + 1
    grad = torch.randn(shape, generator=gen)
    results = []
    for device, dt in (("cpu", torch.float32), ("dml", dtype)):
        torch.manual_seed(0)
        norm = nn.GroupNorm(groups, shape[1], affine=affine).to(device)
        if affine:
            with torch.no_grad():
                norm.weight.copy_(torch.rand(shape[1], generator=torch.Generator().manual_seed(1)) + 0.5)
                norm.bias.copy_(torch.rand(shape[1], generator=torch.Generator().manual_seed(2)))
        inp = x.detach().to(device=device, dtype=dt).requires_grad_()
        out = norm(inp)
        out.backward(grad.to(device=device, dtype=dt))
        results.append([out.detach().float().cpu(), inp.grad.float().cpu()]
                       + ([norm.weight.grad.cpu(), norm.bias.grad.cpu()] if affine else []))
    for a, e in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(a, e, **TOLERANCE[dtype])
