"""F.grid_sample in 2-D (bilinear and nearest, every padding mode, both align_corners) composed from dml
ops, in strict mode: the output and both gradients against a float64 CPU reference; bicubic on the
CPU route."""

import itertools

import pytest
import torch
import torch.nn.functional as F
import torch_dml


def case(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 5, 7, generator=gen, dtype=torch.float64)
    grid = torch.rand(2, 4, 6, 2, generator=gen, dtype=torch.float64) * 3 - 1.5  # inside and well outside
    grid[0, 0, 0] = torch.tensor([1.0, -1.0])  # exact corners and the centre
    grid[0, 0, 1] = torch.tensor([0.0, 0.0])
    grad = torch.randn(2, 3, 4, 6, generator=gen, dtype=torch.float64)
    return x, grid, grad


@pytest.mark.parametrize("mode,padding,align_corners",
                         list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"],
                                                [False, True])))
def test_grid_sample_and_both_gradients(mode, padding, align_corners):
    x, grid, grad = case(len(mode) + len(padding) + int(align_corners))
    c, cg = x.clone().requires_grad_(), grid.clone().requires_grad_()
    want = F.grid_sample(c, cg, mode, padding, align_corners)
    want.backward(grad)
    d, dg = x.float().to("dml").requires_grad_(), grid.float().to("dml").requires_grad_()
    with torch_dml.strict():
        got = F.grid_sample(d, dg, mode, padding, align_corners)
        got.backward(grad.float().to("dml"))
    for label, g, e, scale in (("output", got, want, 1.0), ("input grad", d.grad, c.grad, 1.0),
                               ("grid grad", dg.grad, cg.grad, 8.0)):  # d/dgrid carries (size - 1) / 2
        error = (g.detach().cpu().double() - e.detach()).abs().max().item()
        assert error <= 2e-6 * scale * max(e.abs().max().item(), 1.0), (label, error)


def test_spatial_transformer_trains_like_the_cpu():
    """affine_grid + grid_sample, the STN pattern: a learnt affine warp and a classifier after it."""
    torch.manual_seed(3)

    def build():
        return torch.nn.ModuleDict({"theta": torch.nn.Linear(4, 6), "head": torch.nn.Linear(3 * 8 * 8, 2)}).double()

    def step(model, x, y):
        theta = model["theta"](x.mean((2, 3))[:, :4] if x.size(1) >= 4 else x.flatten(1)[:, :4]).view(-1, 2, 3)
        warped = F.grid_sample(x, F.affine_grid(theta, list(x.shape), align_corners=False), align_corners=False)
        return F.cross_entropy(model["head"](warped.flatten(1)), y)

    cpu_model, dml_model = build(), build()
    dml_model.load_state_dict(cpu_model.state_dict())
    dml_model.float().to("dml")
    x, y = torch.randn(4, 3, 8, 8, dtype=torch.float64), torch.tensor([0, 1, 1, 0])
    for model, device, dtype in ((cpu_model, "cpu", torch.float64), (dml_model, "dml", torch.float32)):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with torch_dml.strict():
            for _ in range(2):
                opt.zero_grad()
                step(model, x.to(device, dtype), y.to(device)).backward()
                opt.step()
    for (name, want), got in zip(cpu_model.state_dict().items(), dml_model.state_dict().values()):
        torch.testing.assert_close(got.cpu().double(), want, rtol=1e-4, atol=1e-5, msg=name)


def test_bicubic_takes_the_counted_cpu_route():
    x, grid, _ = case(5)
    torch_dml.reset_fallback_counts()
    got = F.grid_sample(x.float().to("dml"), grid.float().to("dml"), "bicubic", align_corners=True)
    torch.testing.assert_close(got.cpu(), F.grid_sample(x.float(), grid.float(), "bicubic", align_corners=True))
    assert torch_dml.fallback_counts().get("aten::grid_sampler_2d", 0) == 1
