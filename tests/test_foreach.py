"""The _foreach_* ops run natively on dml (strict mode) through the multi-tensor launch: each overload the
foreach optimizers call, in place and not, float32/float16/bfloat16, over lists longer than one launch
takes, with empty, one-element and odd-sized tensors. A software adapter takes one tensor per launch
(see kernels/tensor_slots.cpp); TORCH_DML_TENSOR_SLOTS=32 runs the many-slot kernels there too. Results equal the per-tensor dml ops bit for bit
and the CPU's to rounding; a launch serves many tensors; lists the kernel declines (mixed dtypes,
non-contiguous tensors, float64) take torch's per-tensor path and stay right; the foreach optimizers
follow the CPU step by step."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch_dml

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
# 0 and 1 elements, sizes that are not multiples of 4 (a float16 word half used), several workgroups.
SIZES = [0, 1, 2, 3, 5, 7, 64, 1000, 4097]
LENGTH = 40  # longer than one launch takes on every adapter (at most 32 bindings)
# Against the CPU: the per-tensor dml ops take a Python scalar as float32 where the CPU rounds it to
# float16/bfloat16 first, so x + 0.35 may differ by an ulp of the scalar, not of the result.
CPU_ATOL = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def dispatches() -> int:
    return torch_dml._C._stream_counters(0)[0]


def storage_limit() -> int:
    return min(32, torch.dml.get_device_properties(0).limits["maxStorageBuffersPerShaderStage"])


@pytest.fixture(params=["adapter", "32"], ids=["slots=adapter", "slots=32"])
def slots(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int | None:
    """The slots a launch takes: the adapter's choice, or as many as its bindings allow."""
    if request.param == "adapter":
        monkeypatch.delenv("TORCH_DML_TENSOR_SLOTS", raising=False)
        return None
    monkeypatch.setenv("TORCH_DML_TENSOR_SLOTS", request.param)
    return int(request.param)


@pytest.fixture
def many_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_DML_TENSOR_SLOTS", "32")


def make_lists(dtype: torch.dtype) -> dict[str, list]:
    gen = torch.Generator().manual_seed(0)
    sizes = [SIZES[i % len(SIZES)] for i in range(LENGTH)]
    def randn() -> list[torch.Tensor]:
        return [torch.randn(n, generator=gen).to(dtype) for n in sizes]
    positive = [(torch.rand(n, generator=gen) + 0.5).to(dtype) for n in sizes]
    weights = [torch.rand(n, generator=gen).to(dtype) for n in sizes]
    scalars = [0.25 + 0.1 * i for i in range(LENGTH)]
    return {"x": randn(), "y": randn(), "z": positive, "w": weights, "s": scalars}


# name, foreach op, its arguments after self (keyword ones in a trailing dict), the per-tensor op for element i
Case = tuple[str, str, Callable[[dict], tuple], Callable[[torch.Tensor, dict, int], torch.Tensor]]
CASES: list[Case] = [
    ("add.Scalar", "add", lambda L: (1.5,), lambda x, L, i: torch.add(x, 1.5)),
    ("add.List", "add", lambda L: (L["y"],), lambda x, L, i: torch.add(x, L["y"][i])),
    ("add.List alpha", "add", lambda L: (L["y"], {"alpha": 0.3}), lambda x, L, i: torch.add(x, L["y"][i], alpha=0.3)),
    ("add.ScalarList", "add", lambda L: (L["s"],), lambda x, L, i: torch.add(x, L["s"][i])),
    ("sub.Scalar", "sub", lambda L: (1.5,), lambda x, L, i: torch.sub(x, 1.5)),
    ("sub.List alpha", "sub", lambda L: (L["y"], {"alpha": 0.3}), lambda x, L, i: torch.sub(x, L["y"][i], alpha=0.3)),
    ("sub.ScalarList", "sub", lambda L: (L["s"],), lambda x, L, i: torch.sub(x, L["s"][i])),
    ("mul.Scalar", "mul", lambda L: (0.9,), lambda x, L, i: torch.mul(x, 0.9)),
    ("mul.List", "mul", lambda L: (L["y"],), lambda x, L, i: torch.mul(x, L["y"][i])),
    ("mul.ScalarList", "mul", lambda L: (L["s"],), lambda x, L, i: torch.mul(x, L["s"][i])),
    ("div.Scalar", "div", lambda L: (0.7,), lambda x, L, i: torch.div(x, 0.7)),
    ("div.List", "div", lambda L: (L["z"],), lambda x, L, i: torch.div(x, L["z"][i])),
    ("div.ScalarList", "div", lambda L: (L["s"],), lambda x, L, i: torch.div(x, L["s"][i])),
    ("maximum.List", "maximum", lambda L: (L["y"],), lambda x, L, i: torch.maximum(x, L["y"][i])),
    ("addcmul.Scalar", "addcmul", lambda L: (L["y"], L["y"], 0.001),
     lambda x, L, i: torch.addcmul(x, L["y"][i], L["y"][i], value=0.001)),
    ("addcmul.ScalarList", "addcmul", lambda L: (L["y"], L["z"], L["s"]),
     lambda x, L, i: torch.addcmul(x, L["y"][i], L["z"][i], value=L["s"][i])),
    ("addcdiv.Scalar", "addcdiv", lambda L: (L["y"], L["z"], -0.01),
     lambda x, L, i: torch.addcdiv(x, L["y"][i], L["z"][i], value=-0.01)),
    ("addcdiv.ScalarList", "addcdiv", lambda L: (L["y"], L["z"], L["s"]),
     lambda x, L, i: torch.addcdiv(x, L["y"][i], L["z"][i], value=L["s"][i])),
    ("lerp.Scalar", "lerp", lambda L: (L["y"], 0.1), lambda x, L, i: torch.lerp(x, L["y"][i], 0.1)),
    ("lerp.Scalar high weight", "lerp", lambda L: (L["y"], 0.9), lambda x, L, i: torch.lerp(x, L["y"][i], 0.9)),
    ("lerp.List", "lerp", lambda L: (L["y"], L["w"]), lambda x, L, i: torch.lerp(x, L["y"][i], L["w"][i])),
    ("lerp.ScalarList", "lerp", lambda L: (L["y"], [s / 10 for s in L["s"]]),
     lambda x, L, i: torch.lerp(x, L["y"][i], L["s"][i] / 10)),
    ("sqrt", "sqrt", lambda L: (), lambda x, L, i: torch.sqrt(x)),
    ("neg", "neg", lambda L: (), lambda x, L, i: torch.neg(x)),
]


def on(device: str, lists: dict) -> dict:
    return {k: [t.to(device) if torch.is_tensor(t) else t for t in v] for k, v in lists.items()}


def self_list(name: str, lists: dict) -> list[torch.Tensor]:
    # sqrt of the positive list keeps NaN out of the comparison of values.
    return lists["z"] if name == "sqrt" else lists["x"]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("inplace", [False, True], ids=["functional", "inplace"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_the_per_tensor_ops_and_the_cpu(case: Case, inplace: bool, dtype: torch.dtype,
                                                slots: int | None) -> None:
    name, op, args, per_tensor = case
    lists = make_lists(dtype)
    dml = on("dml", lists)
    expected_dml = [per_tensor(x, dml, i) for i, x in enumerate(self_list(name, dml))]
    expected_cpu = [per_tensor(x, lists, i) for i, x in enumerate(self_list(name, lists))]
    selves = [t.clone() for t in self_list(name, dml)]
    positional = args(dml)
    keywords = positional[-1] if positional and isinstance(positional[-1], dict) else {}
    positional = positional[:-1] if keywords else positional
    torch.dml.synchronize()
    before = dispatches()
    with torch_dml.strict():
        if inplace:
            getattr(torch, f"_foreach_{op}_")(selves, *positional, **keywords)
            actual = selves
        else:
            actual = getattr(torch, f"_foreach_{op}")(selves, *positional, **keywords)
    launched = dispatches() - before
    nonempty = sum(1 for t in selves if t.numel())
    if slots:  # at most 4 operands a tensor, so at least limit // 4 tensors a launch
        assert 1 <= launched <= math.ceil(nonempty / (storage_limit() // 4)) < nonempty
    else:
        assert 1 <= launched <= nonempty
    for a, d, c in zip(actual, expected_dml, expected_cpu, strict=True):
        assert a.dtype == d.dtype and a.shape == d.shape
        assert torch.equal(a.cpu(), d.cpu()), name  # the per-tensor op's expression, bit for bit
        rtol = {torch.float32: 1.3e-6, torch.float16: 1e-3, torch.bfloat16: 1.6e-2}[dtype]
        torch.testing.assert_close(a.cpu(), c, equal_nan=True, atol=CPU_ATOL[dtype], rtol=rtol)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_zero_(dtype: torch.dtype, slots: int | None) -> None:
    lists = on("dml", make_lists(dtype))
    with torch_dml.strict():
        torch._foreach_zero_(lists["x"])
    for t in lists["x"]:
        assert torch.equal(t.cpu(), torch.zeros_like(t.cpu()))


def test_odd_sized_packed_tensors_leave_their_neighbours_alone(slots: int | None) -> None:
    """Views of one float16 storage, each starting on a u32 word and ending mid-word: the lane past a
    view's end belongs to the storage, not the view, and keeps its value."""
    base = torch.arange(24, dtype=torch.float16).to("dml")
    views = [base[0:3], base[4:9], base[10:11], base[12:19]]
    with torch_dml.strict():
        torch._foreach_mul_(views, 2.0)
    expected = torch.arange(24, dtype=torch.float16)
    for s in (slice(0, 3), slice(4, 9), slice(10, 11), slice(12, 19)):
        expected[s] *= 2
    assert torch.equal(base.cpu(), expected)


def test_lists_the_kernel_declines_take_the_per_tensor_path() -> None:
    """Mixed dtypes, a non-contiguous tensor, a view starting mid-word: no CPU fallback, right results."""
    gen = torch.Generator().manual_seed(3)
    cpu = [torch.randn(5, 6, generator=gen), torch.randn(7, generator=gen).half(), torch.randn(6, 5, generator=gen).t(),
           torch.randn(9, generator=gen).half()[1:]]
    dml = [t.to("dml") if t.is_contiguous() else t.t().contiguous().to("dml").t() for t in cpu]
    assert not dml[2].is_contiguous()
    with torch_dml.strict():
        out = torch._foreach_mul(dml, 3.0)
        torch._foreach_add_(dml, 1.0)
    for o, d, c in zip(out, dml, cpu, strict=True):
        assert torch.equal(o.cpu(), c * 3.0)
        assert torch.equal(d.cpu(), c + 1.0)


@pytest.mark.skipif(not torch_dml.has_float64_support(0), reason="the adapter has no shader-f64")
def test_float64_takes_the_per_tensor_path() -> None:
    xs = [torch.randn(n, dtype=torch.float64) for n in (3, 0, 17)]
    with torch_dml.strict():
        out = torch._foreach_addcmul([x.to("dml") for x in xs], [x.to("dml") for x in xs],
                                     [x.to("dml") for x in xs], 0.5)
    for o, x in zip(out, xs, strict=True):
        torch.testing.assert_close(o.cpu(), torch.addcmul(x, x, x, value=0.5))


def test_malformed_lists_raise_torchs_errors() -> None:
    xs = [torch.ones(3, device="dml"), torch.ones(4, device="dml")]
    with pytest.raises(RuntimeError, match="same number of tensors"):
        torch._foreach_add(xs, [torch.ones(3, device="dml")])
    with pytest.raises(RuntimeError):
        torch._foreach_add(xs, [torch.ones(3, device="dml"), torch.ones(5, device="dml")])
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch._foreach_add([], 1.0)


# ---- the foreach optimizers ----

SHAPES = [(5, 7), (33,), (3, 1, 4), (1,), (0,), (64, 3)]
STEPS = 4
# float32 follows the CPU to rounding. float16/bfloat16 equal the per-tensor dml loop (foreach=False) bit
# for bit; beside the CPU their scalars differ as above, which a few steps can grow to several ulps.
TOLERANCE = {torch.float32: (2e-6, 1e-5), torch.float16: (2e-2, 2e-2), torch.bfloat16: (1e-1, 1e-1)}

OPTIMIZERS = {
    "Adam": lambda ps: torch.optim.Adam(ps, lr=1e-2, foreach=True),
    "Adam amsgrad maximize": lambda ps: torch.optim.Adam(ps, lr=1e-2, amsgrad=True, maximize=True,
                                                         weight_decay=0.1, foreach=True),
    "AdamW": lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.05, foreach=True),
    "SGD momentum": lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, weight_decay=0.01, foreach=True),
    "SGD nesterov": lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, nesterov=True, foreach=True),
    "RMSprop": lambda ps: torch.optim.RMSprop(ps, lr=1e-2, foreach=True),
    "RMSprop centered momentum": lambda ps: torch.optim.RMSprop(ps, lr=1e-2, centered=True, momentum=0.5,
                                                                 foreach=True),
    "Adagrad": lambda ps: torch.optim.Adagrad(ps, lr=1e-2, weight_decay=0.01, foreach=True),
}


def train(device: str, dtype: torch.dtype, make: Callable, foreach: bool = True) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(s, generator=gen).to(dtype).to(device).requires_grad_() for s in SHAPES]
    opt = make(params)
    for group in opt.param_groups:
        group["foreach"] = foreach
    for _ in range(STEPS):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen).to(dtype).to(device)
        opt.step()
    state = [v for p in params for v in opt.state[p].values() if torch.is_tensor(v) and v.dim()]
    return [t.detach().cpu() for t in params + state]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_foreach_optimizer_follows_the_cpu(name: str, dtype: torch.dtype, slots: int | None) -> None:
    expected = train("cpu", dtype, OPTIMIZERS[name])
    with torch_dml.strict():
        actual = train("dml", dtype, OPTIMIZERS[name])
        per_tensor = train("dml", dtype, OPTIMIZERS[name], foreach=False)
    atol, rtol = TOLERANCE[dtype]
    for a, e, p in zip(actual, expected, per_tensor, strict=True):
        # Adagrad's foreach form rounds g * -clr to the gradient's dtype before dividing; its loop does not.
        if name != "Adagrad" or dtype == torch.float32:
            torch.testing.assert_close(a, p, atol=0, rtol=0, equal_nan=True)
        torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True)


def test_an_adam_step_over_20_tensors_takes_a_few_launches_per_op(many_slots: None) -> None:
    """The foreach Adam step runs 7 list ops (lerp_, mul_, addcmul_, sqrt, div_, add_, addcdiv_; the step
    counts live on the CPU): each one launch per chunk of tensors, not one per tensor."""
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(64, 32, generator=gen).to("dml").requires_grad_() for _ in range(20)]
    for p in params:
        p.grad = torch.randn(64, 32, generator=gen).to("dml")
    opt = torch.optim.Adam(params, lr=1e-3, foreach=True)
    with torch_dml.strict():
        opt.step()  # the state is created on the first step
        torch.dml.synchronize()
        before = dispatches()
        opt.step()
        launched = dispatches() - before
    slots = storage_limit() // 4  # the fewest tensors a launch takes (4 operands each)
    assert launched <= 7 * math.ceil(20 / slots)
    assert launched < 20
