"""torch.optim's fused steps (Adam, AdamW, SGD with fused=True) run natively on dml (strict mode) and
follow the same optimizer on the CPU (fused=False) step by step: every flag, float32/float16/bfloat16,
tensor learning rates, GradScaler's unscaling and skipped steps. Also: one launch per chunk of parameters,
and the inputs the kernels decline (float64, non-contiguous) reach the counted fallback, which names why."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest
import torch
import torch_dml

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
# Odd sizes leave a float16/bfloat16 word half used; the empty tensor launches nothing.
SHAPES = [(5, 7), (33,), (3, 1, 4), (1,), (0,)]
STEPS = 4
# float32 agrees to rounding; the packed dtypes round each stored state once per step on both sides,
# but the CPU for-loop also rounds every intermediate, so they agree to a few of their ulps.
TOLERANCE = {torch.float32: (2e-6, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2)}


def initial_params(dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=gen).to(dtype) for shape in SHAPES]


def gradients(dtype: torch.dtype, steps: int = STEPS) -> list[list[torch.Tensor]]:
    gen = torch.Generator().manual_seed(1)
    return [[torch.randn(shape, generator=gen).to(dtype) for shape in SHAPES] for _ in range(steps)]


def train(device: str, dtype: torch.dtype, make_optimizer: Callable[[list[torch.Tensor]], torch.optim.Optimizer],
          steps: int = STEPS) -> tuple[list[torch.Tensor], list[dict[str, torch.Tensor]]]:
    params = [p.to(device).requires_grad_() for p in initial_params(dtype)]
    optimizer = make_optimizer(params)
    for step_grads in gradients(dtype, steps):
        for p, g in zip(params, step_grads, strict=True):
            p.grad = g.to(device)
        optimizer.step()
    states = [{k: v.detach().cpu() for k, v in optimizer.state[p].items() if torch.is_tensor(v)} for p in params]
    return [p.detach().cpu() for p in params], states


def assert_same_training(dtype, make_optimizer_on, steps: int = STEPS) -> None:
    expected, expected_states = train("cpu", dtype, lambda ps: make_optimizer_on(ps, False))
    with torch_dml.strict():
        actual, actual_states = train("dml", dtype, lambda ps: make_optimizer_on(ps, True))
    atol, rtol = TOLERANCE[dtype]
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, atol=atol, rtol=rtol)
    for a, e in zip(actual_states, expected_states, strict=True):
        assert a.keys() == e.keys()
        for key in a:
            # The step count is float32 beside fused kernels and the default dtype otherwise.
            torch.testing.assert_close(a[key], e[key].to(a[key].dtype), atol=atol, rtol=rtol, msg=key)


ADAM_FLAGS = list(itertools.product([False, True], [False, True], [0.0, 0.1]))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.AdamW], ids=lambda o: o.__name__)
@pytest.mark.parametrize(("amsgrad", "maximize", "weight_decay"), ADAM_FLAGS,
                         ids=[f"amsgrad={a}-maximize={m}-wd={w}" for a, m, w in ADAM_FLAGS])
def test_adam_matches_the_cpu(dtype, optimizer, amsgrad, maximize, weight_decay):
    def make(params, fused):
        return optimizer(params, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, fused=fused, foreach=False if not fused else None)
    assert_same_training(dtype, make)


@pytest.mark.parametrize("betas", [(0.0, 0.0), (0.5, 0.9), (0.95, 0.99999)], ids=str)
def test_adam_bias_correction_at_extreme_betas(betas):
    """lerp's two forms (the weight 1 - beta1 on either side of 0.5) and a 1 - beta2^t that cancels badly
    when computed as a difference."""
    def make(params, fused):
        return torch.optim.Adam(params, lr=0.01, betas=betas, fused=fused, foreach=False if not fused else None)
    assert_same_training(torch.float32, make, steps=6)


SGD_FLAGS = [(0.0, 0.0, False), (0.9, 0.0, False), (0.9, 0.25, False), (0.9, 0.0, True)]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(("momentum", "dampening", "nesterov"), SGD_FLAGS,
                         ids=[f"momentum={m}-dampening={d}-nesterov={n}" for m, d, n in SGD_FLAGS])
@pytest.mark.parametrize("maximize", [False, True], ids=lambda m: f"maximize={m}")
@pytest.mark.parametrize("weight_decay", [0.0, 0.1], ids=lambda w: f"wd={w}")
def test_sgd_matches_the_cpu(dtype, momentum, dampening, nesterov, maximize, weight_decay):
    """Against the for-loop SGD: torch's own fused CPU SGD is not the reference (its float16 path differs
    from the for-loop one in torch 2.13)."""
    def make(params, fused):
        return torch.optim.SGD(params, lr=0.05, momentum=momentum, dampening=dampening, nesterov=nesterov,
                               weight_decay=weight_decay, maximize=maximize, fused=fused,
                               foreach=False if not fused else None)
    assert_same_training(dtype, make)


@pytest.mark.parametrize("lr_device", ["cpu", "dml"])
@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD],
                         ids=lambda o: o.__name__)
def test_tensor_lr(optimizer, lr_device):
    """The tensor_lr overloads: a CPU lr is read on the host, a dml lr by the kernel."""
    extra = {"momentum": 0.9} if optimizer is torch.optim.SGD else {"weight_decay": 0.1}
    def make(params, fused):
        lr = torch.tensor(0.01, device=lr_device if fused else "cpu")
        return optimizer(params, lr=lr, fused=fused, foreach=False if not fused else None, **extra)
    assert_same_training(torch.float32, make)


def test_direct_call_with_dml_tensor_lr_matches_float_lr():
    """_fused_adamw_.tensor_lr with a dml lr equals the float overload (weight decay reads the lr too)."""
    results = []
    for lr in (0.02, torch.tensor([0.02], device="dml")):
        gen = torch.Generator().manual_seed(3)
        tensors = [torch.randn(9, generator=gen).to("dml") for _ in range(4)]
        param, grad, exp_avg, exp_avg_sq = tensors
        exp_avg_sq.abs_()
        step = torch.full((), 3.0, device="dml")
        with torch_dml.strict():
            torch._fused_adamw_([param], [grad], [exp_avg], [exp_avg_sq], [], [step], lr=lr, beta1=0.9, beta2=0.99,
                                weight_decay=0.5, eps=1e-8, amsgrad=False, maximize=False)
        results.append([t.cpu() for t in tensors])
    for a, e in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(a, e, atol=1e-7, rtol=1e-6)


def scaled_training(device: str, optimizer, fused: bool, poisoned_steps: set[int], tensor_lr: bool = False,
                    **options):
    gen = torch.Generator().manual_seed(2)
    params = [torch.randn(shape, generator=gen).to(device).requires_grad_() for shape in SHAPES[:3]]
    targets = [[torch.randn(shape, generator=gen) for shape in SHAPES[:3]] for _ in range(5)]
    lr = torch.tensor(0.01, device=device) if tensor_lr else 0.01
    opt = optimizer(params, lr=lr, fused=fused, foreach=False if not fused else None, **options)
    scaler = torch.amp.GradScaler(device, init_scale=2.0**8, growth_interval=2)
    history = []
    for step, step_targets in enumerate(targets):
        opt.zero_grad()
        loss = sum((p * t.to(device)).sum() for p, t in zip(params, step_targets, strict=True))
        if step in poisoned_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), [p.detach().cpu().clone() for p in params]))
    return history, [p.grad.cpu() for p in params]


@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD],
                         ids=lambda o: o.__name__)
def test_grad_scaler_unscales_and_skips_on_device(optimizer):
    """GradScaler hands a fused optimizer its scale and found_inf: the kernel divides the gradients (and
    stores them unscaled) and skips the whole step when an inf or NaN was found."""
    poisoned = {1, 2}
    expected, expected_grads = scaled_training("cpu", optimizer, False, poisoned)
    with torch_dml.strict():
        actual, actual_grads = scaled_training("dml", optimizer, True, poisoned)
    for step, ((scale, params), (expected_scale, expected_params)) in enumerate(zip(actual, expected, strict=True)):
        assert scale == expected_scale, step
        for a, e in zip(params, expected_params, strict=True):
            torch.testing.assert_close(a, e, atol=2e-6, rtol=1e-5)
    # The skipped steps changed nothing, the others did.
    for a, e in zip(actual[1][1], actual[0][1], strict=True):
        assert torch.equal(a, e)
    assert not torch.equal(actual[3][1][0], actual[2][1][0])
    for a, e in zip(actual_grads, expected_grads, strict=True):
        torch.testing.assert_close(a, e)


@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.SGD], ids=lambda o: o.__name__)
def test_grad_scaler_with_a_dml_tensor_lr(optimizer):
    """lr, scale and found_inf all on the device: gathered into one tensor for the kernels."""
    options = {"amsgrad": True} if optimizer is torch.optim.Adam else {"momentum": 0.9, "nesterov": True}
    expected, _ = scaled_training("cpu", optimizer, False, {2}, tensor_lr=True, **options)
    with torch_dml.strict():
        actual, _ = scaled_training("dml", optimizer, True, {2}, tensor_lr=True, **options)
    for (scale, params), (expected_scale, expected_params) in zip(actual, expected, strict=True):
        assert scale == expected_scale
        for a, e in zip(params, expected_params, strict=True):
            torch.testing.assert_close(a, e, atol=2e-6, rtol=1e-5)


def test_found_inf_skips_without_unscaling():
    """found_inf == 1 leaves every tensor, the gradients still scaled, as the CPU kernel does."""
    param, grad = torch.ones(6, device="dml"), torch.full((6,), 8.0, device="dml")
    exp_avg, exp_avg_sq, step = torch.zeros(6, device="dml"), torch.zeros(6, device="dml"), torch.ones((), device="dml")
    with torch_dml.strict():
        torch._fused_adam_([param], [grad], [exp_avg], [exp_avg_sq], [], [step], lr=0.1, beta1=0.9, beta2=0.999,
                           weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False,
                           grad_scale=torch.full((1,), 4.0, device="dml"), found_inf=torch.ones(1, device="dml"))
    assert torch.equal(param.cpu(), torch.ones(6))
    assert torch.equal(grad.cpu(), torch.full((6,), 8.0))
    assert torch.equal(exp_avg.cpu(), torch.zeros(6))


def storage_limit() -> int:
    return min(32, torch.dml.get_device_properties(0).limits["maxStorageBuffersPerShaderStage"])


def test_one_launch_per_chunk_of_parameters(monkeypatch):
    """A fused Adam step over 20 tensors records one launch per chunk of as many parameters as the
    adapter's storage bindings take (5 per parameter beside the shared scalars) and one for the step
    increments (torch.optim's _foreach_add_); the foreach implementation records more. A software
    adapter takes one parameter a launch unless TORCH_DML_TENSOR_SLOTS says otherwise."""
    monkeypatch.setenv("TORCH_DML_TENSOR_SLOTS", "32")
    def dispatches_per_step(fused: bool) -> int:
        gen = torch.Generator().manual_seed(0)
        params = [torch.randn(64, 32, generator=gen).to("dml").requires_grad_() for _ in range(20)]
        for p in params:
            p.grad = torch.randn(64, 32, generator=gen).to("dml")
        opt = torch.optim.Adam(params, lr=1e-3, fused=fused, foreach=not fused)
        opt.step()  # the state is created on the first step
        torch.dml.synchronize()
        before = torch_dml._C._stream_counters(0)[0]
        opt.step()
        return torch_dml._C._stream_counters(0)[0] - before

    with torch_dml.strict():
        fused = dispatches_per_step(True)
        foreach = dispatches_per_step(False)
    slots = max(1, (storage_limit() - 1) // 5)
    assert fused == math.ceil(20 / slots) + 1
    assert foreach > fused


# More parameters than one launch takes on any adapter, of sizes that leave packed words half used.
MANY_SHAPES = [(n,) for n in (1, 0, 3, 5, 7, 64, 129, 2, 1000)] * 4


@pytest.mark.parametrize("slots", ["1", "32"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["Adam amsgrad", "AdamW", "SGD momentum", "SGD"])
def test_many_parameters_match_the_cpu(name, dtype, slots, monkeypatch):
    monkeypatch.setenv("TORCH_DML_TENSOR_SLOTS", slots)
    make = {
        "Adam amsgrad": lambda ps, fused: torch.optim.Adam(ps, lr=1e-2, amsgrad=True, weight_decay=0.1, fused=fused),
        "AdamW": lambda ps, fused: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.1, fused=fused),
        "SGD momentum": lambda ps, fused: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, nesterov=True, fused=fused),
        "SGD": lambda ps, fused: torch.optim.SGD(ps, lr=1e-2, weight_decay=0.1, fused=fused),
    }[name]

    def run(device: str, fused: bool, split: bool = False) -> list[torch.Tensor]:
        gen = torch.Generator().manual_seed(0)
        params = [torch.randn(s, generator=gen).to(dtype).to(device).requires_grad_() for s in MANY_SHAPES]
        opts = [make([p], fused) for p in params] if split else [make(params, fused)]
        for _ in range(3):
            for p in params:
                p.grad = torch.randn(p.shape, generator=gen).to(dtype).to(device)
            for opt in opts:
                opt.step()
        state = [v for o in opts for p in params if p in o.state for v in o.state[p].values()
                 if torch.is_tensor(v) and v.dim()]
        return [t.detach().cpu() for t in params + state]

    with torch_dml.strict():
        actual = run("dml", True)
        one_per_call = run("dml", True, split=True)
    # Chunked launches compute each parameter exactly as a launch of its own.
    for a, e in zip(actual, one_per_call, strict=True):
        torch.testing.assert_close(a, e, atol=0, rtol=0)
    # float16 on the CPU loop: eps = 1e-8 underflows to 0 and its divisions give inf/NaN.
    if dtype != torch.float16:
        atol, rtol = TOLERANCE[dtype]
        for a, e in zip(actual, run("cpu", False), strict=True):
            torch.testing.assert_close(a, e, atol=atol, rtol=rtol)


@pytest.mark.skipif(not torch_dml.has_float64_support(0), reason="the adapter has no shader-f64")
def test_float64_reaches_the_counted_fallback():
    def make(params, fused):
        return torch.optim.Adam(params, lr=0.01, fused=fused, foreach=False if not fused else None)

    expected, _ = train("cpu", torch.float64, lambda ps: make(ps, False))
    torch_dml._C._reset_fallback_counts()
    actual, _ = train("dml", torch.float64, lambda ps: make(ps, True))
    assert torch_dml._C._fallback_counts().get("aten::_fused_adam_") == STEPS
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e)


def test_non_contiguous_is_declined_with_its_reason():
    base = torch.randn(6, 4)
    param = base.to("dml").t()
    grad = torch.ones(4, 6, device="dml")
    momentum_buffer = torch.zeros(4, 6, device="dml")
    with torch_dml.strict(), pytest.raises(torch_dml.FallbackError, match="non-contiguous"):
        torch._fused_sgd_([param], [grad], [momentum_buffer], weight_decay=0.0, momentum=0.9, lr=0.5, dampening=0.0,
                          nesterov=False, maximize=False, is_first_step=True)
    torch._fused_sgd_([param], [grad], [momentum_buffer], weight_decay=0.0, momentum=0.9, lr=0.5, dampening=0.0,
                      nesterov=False, maximize=False, is_first_step=True)
    torch.testing.assert_close(param.cpu(), base.t() - 0.5)
    torch.testing.assert_close(momentum_buffer.cpu(), torch.ones(4, 6))


def test_bad_input_raises_naming_the_op():
    param = torch.zeros(3, device="dml")
    with pytest.raises(RuntimeError, match="_fused_sgd_: a gradient of shape"):
        torch._fused_sgd_([param], [torch.zeros(4, device="dml")], [], weight_decay=0.0, momentum=0.0, lr=0.1,
                          dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
    with pytest.raises(RuntimeError, match="_fused_adam_: expected 1 state_steps"):
        torch._fused_adam_([param], [param.clone()], [param.clone()], [param.clone()], [], [], lr=0.1, beta1=0.9,
                           beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
