"""Batch normalisation forward and backward, native (strict mode), against the CPU: the modules in
training and evaluation, every aten overload the paths reach, layouts, dtypes, and the running
statistics updated in place."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
import torch_dml

aten = torch.ops.aten

pytestmark = pytest.mark.usefixtures("strict")

TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float64: {"rtol": 1e-10, "atol": 1e-12},
             torch.float16: {"rtol": 1e-2, "atol": 1e-2}, torch.bfloat16: {"rtol": 4e-2, "atol": 4e-2}}
MODULES = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}
SHAPES = {1: [(6, 4), (3, 4, 7)], 2: [(3, 4, 5, 6)], 3: [(2, 3, 3, 4, 5)]}
needs_f64 = pytest.mark.skipif(not torch_dml.has_float64_support(0), reason="adapter has no shader-f64")

TORCH_MINOR = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


def rand(*shape, dtype=torch.float32, seed=0, scale=3.0, shift=1.0):
    values = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale + shift
    return values.to(dtype)


def close(actual, expected, dtype=torch.float32):
    assert actual.device.type == "dml"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, **TOLERANCE[dtype])


def run_module(cpu_module, x, steps=3, train=True):
    """Runs `steps` forward/backward passes on the CPU module and on a copy on dml; compares outputs,
    input gradients and parameter gradients each step, then the buffers (running statistics)."""
    dml_module = copy.deepcopy(cpu_module).to("dml")
    cpu_module.train(train)
    dml_module.train(train)
    for step in range(steps):
        xc = (x * (step + 1) + step).detach().requires_grad_()
        xd = xc.detach().to("dml").requires_grad_()
        grad = rand(*x.shape, seed=100 + step, dtype=x.dtype)
        yc, yd = cpu_module(xc), dml_module(xd)
        close(yd, yc, x.dtype)
        yc.backward(grad)
        yd.backward(grad.to("dml"))
        close(xd.grad, xc.grad, x.dtype)
        for (name, pc), pd in zip(cpu_module.named_parameters(), dml_module.parameters()):
            assert (pd.grad is None) == (pc.grad is None), name
            if pc.grad is not None:
                close(pd.grad, pc.grad, x.dtype if pc.dtype == x.dtype else pc.dtype)
            pc.grad, pd.grad = None, None
    for (name, bc), bd in zip(cpu_module.named_buffers(), dml_module.buffers()):
        assert bd.device.type == "dml", name
        if bc.dtype.is_floating_point:
            close(bd, bc, bc.dtype)
        else:
            assert torch.equal(bd.cpu(), bc), name
    return dml_module


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_module_training_then_eval(rank, affine, track, momentum):
    for shape in SHAPES[rank]:
        module = MODULES[rank](shape[1], affine=affine, track_running_stats=track, momentum=momentum)
        if affine:
            with torch.no_grad():
                module.weight.copy_(rand(shape[1], seed=1))
                module.bias.copy_(rand(shape[1], seed=2))
        x = rand(*shape, seed=3)
        run_module(module, x, steps=3, train=True)
        run_module(module, x, steps=2, train=False)


@pytest.mark.parametrize("rank", [2, 3])
def test_channels_last_reads_in_place(rank):
    shape = SHAPES[rank][0]
    fmt = torch.channels_last if rank == 2 else torch.channels_last_3d
    module = MODULES[rank](shape[1])
    x = rand(*shape, seed=4).contiguous(memory_format=fmt)
    torch_dml.reset_fallback_counts()
    run_module(module, x, steps=2)
    xd = x.to("dml")
    assert xd.is_contiguous(memory_format=fmt)
    out = MODULES[rank](shape[1]).to("dml")(xd)
    assert out.is_contiguous(memory_format=fmt)


@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last], ids=str)
def test_channels_of_many_elements(memory_format):
    """Channels of 1024 elements and more take the kernels' 256-lane workgroups (smaller ones 64)."""
    module = torch.nn.BatchNorm2d(3)
    run_module(module, rand(4, 3, 20, 23, seed=32).contiguous(memory_format=memory_format), steps=2)
    run_module(module, rand(4, 3, 20, 23, seed=33).contiguous(memory_format=memory_format), steps=1, train=False)


def test_non_dense_input_is_copied():
    x = rand(5, 4, 6, 3, seed=5).transpose(2, 3)[:, :, ::2]
    module = torch.nn.BatchNorm2d(4)
    run_module(module, x, steps=2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("params", ["float32", "same"])
@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (3, 5, 7)], ids=str)
def test_half_input(dtype, params, shape):
    x = rand(*shape, seed=6).to(dtype)
    module = MODULES[len(shape) - 2](shape[1])
    with torch.no_grad():
        module.weight.copy_(rand(shape[1], seed=7))
        module.bias.copy_(rand(shape[1], seed=8))
    if params == "same":
        module = module.to(dtype)
    dml_module = copy.deepcopy(module).to("dml")
    # The CPU reference computes in float32 from the same rounded input.
    reference = copy.deepcopy(module).float()
    for step in range(2):
        xd = x.to("dml").requires_grad_()
        xc = x.float().requires_grad_()
        yd, yc = dml_module(xd), reference(xc)
        assert yd.dtype == dtype
        close(yd, yc.to(dtype), dtype)
        grad = rand(*shape, seed=9 + step).to(dtype)
        yd.backward(grad.to("dml"))
        yc.backward(grad.float())
        close(xd.grad, xc.grad.to(dtype), dtype)
        for pd, pc in zip(dml_module.parameters(), reference.parameters()):
            assert pd.grad.dtype == pd.dtype
            torch.testing.assert_close(pd.grad.cpu().float(), pc.grad, rtol=2e-2, atol=2e-2 * shape[0] * shape[2])
            pd.grad, pc.grad = None, None
    for bd, bc in zip(dml_module.buffers(), reference.buffers()):
        assert bd.dtype == (torch.int64 if bc.dtype == torch.int64 else module.running_mean.dtype)
        torch.testing.assert_close(bd.cpu().to(bc.dtype), bc, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_saved_statistics_dtype_matches_cpu(dtype):
    x = rand(4, 3, 5, seed=10).to(dtype)
    for params in [torch.float32, dtype]:
        w, b = torch.ones(3, dtype=params), torch.zeros(3, dtype=params)
        rm, rv = torch.zeros(3, dtype=params), torch.ones(3, dtype=params)
        expected = torch.native_batch_norm(x, w, b, rm.clone(), rv.clone(), True, 0.1, 1e-5)
        to = (lambda t: t.to("dml"))
        actual = torch.native_batch_norm(x.to("dml"), to(w), to(b), to(rm), to(rv), True, 0.1, 1e-5)
        assert [t.dtype for t in actual] == [t.dtype for t in expected]


@needs_f64
def test_float64():
    module = torch.nn.BatchNorm2d(3).double()
    with torch.no_grad():
        module.weight.copy_(rand(3, seed=11))
    run_module(module, rand(4, 3, 5, 6, seed=12, dtype=torch.float64), steps=3)
    run_module(module, rand(4, 3, 5, 6, seed=13, dtype=torch.float64), steps=1, train=False)


def test_single_sample_with_spatial_extent():
    run_module(torch.nn.BatchNorm2d(5), rand(1, 5, 4, 3, seed=14), steps=3)
    run_module(torch.nn.BatchNorm1d(5), rand(1, 5, 9, seed=15), steps=2)


def test_constant_channel_has_zero_variance():
    x = rand(4, 3, 5, 5, seed=16)
    x[:, 1] = 3.7
    module = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        module.bias.copy_(torch.tensor([0.5, -2.0, 1.5]))
    run_module(module, x, steps=2)
    out, mean, invstd = torch.native_batch_norm(x.to("dml"), None, None, None, None, True, 0.1, 1e-5)
    assert mean.cpu()[1].item() == torch.tensor(3.7).item()
    assert invstd.cpu()[1].item() == pytest.approx(1 / 1e-5**0.5, rel=1e-6)
    assert torch.all(out.cpu()[:, 1] == 0)
    # eps == 0: PyTorch's invstd is 0 for a zero variance, not infinity.
    out, _, invstd = torch.native_batch_norm(x.to("dml"), None, None, None, None, True, 0.1, 0.0)
    assert invstd.cpu()[1].item() == 0 and torch.all(out.cpu()[:, 1] == 0)


def test_statistics_are_accurate_when_the_first_element_is_far_from_the_mean():
    """The first pass is shifted by each channel's first element; the second corrects its rounding."""
    x = rand(8, 3, 16, 16, seed=34, scale=1.0, shift=0.0) + torch.tensor([0.01, 1e3, -5.0])[:, None, None]
    x[0, :, 0, 0] = torch.tensor([100.0, 0.0, 7.0])
    _, mean, invstd = (t.cpu() for t in torch.native_batch_norm(x.to("dml"), None, None, None, None, True, 0.1, 1e-5))
    exact = x.double()
    exact_mean = exact.mean(dim=(0, 2, 3))
    exact_invstd = 1 / (exact.var(dim=(0, 2, 3), unbiased=False) + 1e-5).sqrt()
    torch.testing.assert_close(mean.double(), exact_mean, rtol=2e-7, atol=1e-9)
    torch.testing.assert_close(invstd.double(), exact_invstd, rtol=1e-6, atol=0)


def test_odd_sizes_of_16_bit_outputs():
    for shape in [(1, 3, 5), (3, 1, 1), (5, 7)]:
        x = rand(*shape, seed=17).half()
        actual = F.batch_norm(x.to("dml"), None, None, training=True)
        expected = F.batch_norm(x.float(), None, None, training=True).half()
        close(actual, expected, torch.float16)


def test_weight_only_gradient_masks():
    module = torch.nn.BatchNorm2d(4)
    module.weight.requires_grad_(False)
    run_module(module, rand(3, 4, 3, 3, seed=18), steps=1)
    x = rand(3, 4, 3, 3, seed=19)
    module = torch.nn.BatchNorm2d(4)
    dml_module = copy.deepcopy(module).to("dml")
    module(x).sum().backward()
    dml_module(x.to("dml")).sum().backward()
    close(dml_module.weight.grad, module.weight.grad)
    close(dml_module.bias.grad, module.bias.grad)


def test_runs_are_bitwise_reproducible():
    x = rand(8, 6, 17, 13, seed=20).to("dml")
    first = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    second = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    for a, b in zip(first, second):
        assert torch.equal(a.cpu(), b.cpu())


def test_decomposition_overloads():
    x, g = rand(3, 4, 5, 2, seed=21), rand(3, 4, 5, 2, seed=22)
    w, b = rand(4, seed=23), rand(4, seed=24)
    rm, rv = rand(4, seed=25), rand(4, seed=26).abs() + 0.5
    to = (lambda t: t.to("dml"))

    rmc, rvc, rmd, rvd = rm.clone(), rv.clone(), to(rm), to(rv)
    expected = aten._native_batch_norm_legit(x, w, b, rmc, rvc, True, 0.2, 1e-5)
    actual = aten._native_batch_norm_legit(to(x), to(w), to(b), rmd, rvd, True, 0.2, 1e-5)
    for a, e in zip(actual, expected):
        close(a, e)
    close(rmd, rmc)
    close(rvd, rvc)

    expected = aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.2, 1e-5)
    actual = aten._native_batch_norm_legit.no_stats(to(x), to(w), to(b), True, 0.2, 1e-5)
    for a, e in zip(actual, expected):
        close(a, e)

    expected = aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.2, 1e-5)
    actual = aten._native_batch_norm_legit_no_training(to(x), to(w), to(b), to(rm), to(rv), 0.2, 1e-5)
    for a, e in zip(actual, expected):
        close(a, e)

    rmc, rvc, rmd, rvd = rm.clone(), rv.clone(), to(rm), to(rv)
    expected = aten._batch_norm_with_update(x, w, b, rmc, rvc, 0.2, 1e-5)
    actual = aten._batch_norm_with_update(to(x), to(w), to(b), rmd, rvd, 0.2, 1e-5)
    for a, e in zip(actual[:3], expected[:3]):
        close(a, e)
    assert actual[3].shape == (0,) and actual[3].dtype == torch.uint8
    close(rmd, rmc)
    close(rvd, rvc)

    for update, saved in [(True, expected[1:3]), (False, (None, None))]:
        saved_d = [None if t is None else to(t) for t in saved]
        reserve = torch.empty(0, dtype=torch.uint8)
        e = aten.batch_norm_backward(g, x, w, rm, rv, *saved, update, 1e-5, [True, True, True], reserve)
        a = aten.batch_norm_backward(to(g), to(x), to(w), to(rm), to(rv), *saved_d, update, 1e-5,
                                     [True, True, True], to(reserve))
        for ai, ei in zip(a, e):
            close(ai, ei)

    _, mean, invstd = torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)
    for mask in [[True, False, True], [False, True, False]]:
        e = aten.native_batch_norm_backward(g, x, w, None, None, mean, invstd, True, 1e-5, mask)
        a = aten.native_batch_norm_backward(to(g), to(x), to(w), None, None, to(mean), to(invstd), True, 1e-5, mask)
        for ai, ei, wanted in zip(a, e, mask):
            assert (ai is not None) == wanted and (ei is not None) == wanted
            if wanted:
                close(ai, ei)


def test_out_overloads():
    x, g = rand(3, 4, 5, seed=27), rand(3, 4, 5, seed=28)
    rm, rv = torch.zeros(4), torch.ones(4)
    to = (lambda t: t.to("dml"))
    outs = [torch.empty(0, device="dml") for _ in range(3)]
    rmd, rvd = to(rm), to(rv)
    aten.native_batch_norm.out(to(x), None, None, rmd, rvd, True, 0.1, 1e-5,
                               out=outs[0], save_mean=outs[1], save_invstd=outs[2])
    expected = torch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    for a, e in zip(outs, expected):
        close(a, e)
    close(rmd, rm)
    outs = [torch.empty(0, device="dml") for _ in range(3)]
    aten._native_batch_norm_legit.no_stats_out(to(x), None, None, True, 0.1, 1e-5,
                                               out=outs[0], save_mean=outs[1], save_invstd=outs[2])
    for a, e in zip(outs, expected):
        close(a, e)
    grads = [torch.empty(0, device="dml") for _ in range(3)]
    aten.native_batch_norm_backward.out(to(g), to(x), None, None, None, to(expected[1]), to(expected[2]), True,
                                        1e-5, [True, True, True], out0=grads[0], out1=grads[1], out2=grads[2])
    e = aten.native_batch_norm_backward(g, x, None, None, None, expected[1], expected[2], True, 1e-5,
                                        [True, True, True])
    for a, ei in zip(grads, e):
        close(a, ei)


def test_small_cnn_trains_like_cpu():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5))
    dml_model = copy.deepcopy(model).to("dml")
    x, target = rand(4, 3, 6, 6, seed=30), rand(4, 5, seed=31)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, foreach=False) for m in (model, dml_model)]
    for _ in range(3):
        losses = []
        for m, optimizer, device in zip((model, dml_model), optimizers, ("cpu", "dml")):
            optimizer.zero_grad()
            loss = F.mse_loss(m(x.to(device)), target.to(device))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-4)
    for (name, bc), bd in zip(model.named_buffers(), dml_model.buffers()):
        torch.testing.assert_close(bd.cpu(), bc, rtol=1e-4, atol=1e-5, msg=name)
    for (name, pc), pd in zip(model.named_parameters(), dml_model.parameters()):
        torch.testing.assert_close(pd.detach().cpu(), pc.detach(), rtol=1e-3, atol=1e-4, msg=name)


# Group normalisation's forward runs on the batch-norm kernels (statistics per sample and group).
@pytest.mark.parametrize("dtype,params", [(torch.float32, torch.float32), (torch.float16, torch.float16),
                                          (torch.float16, torch.float32), (torch.bfloat16, torch.bfloat16),
                                          (torch.bfloat16, torch.float32)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,groups", [((2, 8, 5, 6), 4), ((3, 6, 10), 3), ((1, 4, 2, 3, 2), 1), ((2, 6), 3),
                                          ((2, 6, 41, 41), 2)], ids=str)
def test_group_norm_forward(dtype, params, affine, shape, groups):
    n, c = shape[0], shape[1]
    hxw = int(torch.tensor(shape[2:]).prod().item()) if len(shape) > 2 else 1
    x = rand(*shape, seed=40).to(dtype)
    w = rand(c, seed=41).to(params) if affine else None
    b = rand(c, seed=42).to(params) if affine else None
    to = (lambda t: None if t is None else t.to("dml"))
    actual = aten.native_group_norm(to(x), to(w), to(b), n, c, hxw, groups, 1e-5)
    expected = aten.native_group_norm(x, w, b, n, c, hxw, groups, 1e-5)
    reference = aten.native_group_norm(x.float(), None if w is None else w.float(),
                                       None if b is None else b.float(), n, c, hxw, groups, 1e-5)
    for a, e, r in zip(actual, expected, reference, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        close(a, r.to(a.dtype), dtype)


def test_group_norm_module_and_channels_last():
    x = rand(3, 8, 6, 5, seed=43)
    norm = torch.nn.GroupNorm(4, 8)
    with torch.no_grad():
        norm.weight.copy_(rand(8, seed=44))
    dml_norm = copy.deepcopy(norm).to("dml")
    close(dml_norm(x.to("dml")), norm(x).detach())
    close(dml_norm(x.contiguous(memory_format=torch.channels_last).to("dml")), norm(x).detach())
    x[1, 2:4] = 5.0  # a constant group: variance exactly 0, output exactly the bias
    out = dml_norm(x.to("dml")).detach().cpu()
    assert torch.equal(out[1, 2:4], norm.bias.detach()[2:4, None, None].expand(2, 6, 5))


@needs_f64
def test_group_norm_float64():
    x = rand(2, 6, 7, seed=45, dtype=torch.float64)
    w, b = rand(6, seed=46, dtype=torch.float64), rand(6, seed=47, dtype=torch.float64)
    actual = aten.native_group_norm(x.to("dml"), w.to("dml"), b.to("dml"), 2, 6, 7, 3, 1e-5)
    for a, e in zip(actual, aten.native_group_norm(x, w, b, 2, 6, 7, 3, 1e-5), strict=True):
        close(a, e, torch.float64)


def test_group_norm_inputs_the_kernels_leave_stay_on_dml_ops():
    """eps <= 0 and empty batches run PyTorch's composite group norm on dml ops, as before the kernel."""
    w, b = rand(6, seed=49), rand(6, seed=50)
    cases = [((2, 6, 3), -0.5), ((0, 6), 1e-5)]
    if TORCH_MINOR < (2, 13):
        # torch 2.11's composite sends an empty batch to native_batch_norm as a (1, 0) input, which the
        # kernel leaves to the CPU (torch 2.13's CPU kernel refuses such an input, so dml does not answer it).
        cases = cases[:1]
    for shape, eps in cases:
        x = rand(*shape, seed=48)
        n, hxw = shape[0], shape[2] if len(shape) > 2 else 1
        actual = aten.native_group_norm(x.to("dml"), w.to("dml"), b.to("dml"), n, 6, hxw, 2, eps)
        expected = aten.native_group_norm(x, w, b, n, 6, hxw, 2, eps)
        for a, e in zip(actual, expected, strict=True):
            torch.testing.assert_close(a.cpu(), e, equal_nan=True, **TOLERANCE[torch.float32])
