"""Held-row kernels (softmax / log_softmax / layer_norm, forward and backward): rows a team of lanes holds
whole, against the CPU, at row lengths around every team and vec4 threshold, for contiguous, strided and
misaligned operands, in strict mode (no CPU fallback)."""

import pytest
import torch
import torch_dml
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if torch_dml.has_float64_support(0) else [])
# Teams of 32..256 lanes, 16 elements a lane (up to 32 in vectors at 256 lanes): the team grows at
# 512, 1024, 2048 elements and tops out at 4096 (8192 loading vec4 or bf16/f16 word pairs); 1 and 3 are
# shorter than a vector, odd lengths load one element at a time, 4097 and 8193 go to the
# workgroup-per-row kernels.
LENGTHS = [1, 3, 4, 31, 32, 33, 255, 256, 512, 513, 1000, 1024, 2048, 2049, 4095, 4096, 4097, 8192, 8193]
SOFTMAX_TOLERANCE = {torch.float32: {"rtol": 3e-5, "atol": 1e-5}, torch.float16: {"rtol": 1e-2, "atol": 1e-3},
                     torch.bfloat16: {"rtol": 2e-2, "atol": 1e-2}, torch.float64: {"rtol": 1e-12, "atol": 1e-14}}
NORM_TOLERANCE = {torch.float32: {"rtol": 1e-4, "atol": 1e-4}, torch.float16: {"rtol": 1e-2, "atol": 1e-2},
                  torch.bfloat16: {"rtol": 3e-2, "atol": 3e-2}, torch.float64: {"rtol": 1e-4, "atol": 1e-4}}


def rows_for(length: int) -> int:
    """9 rows (a workgroup of 8 short rows and a partial one) where cheap, 3 for long rows."""
    return 9 if length <= 1024 else 3


def rand(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def wide(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.float64 else t.float()


def misaligned(t: torch.Tensor) -> torch.Tensor:
    """`t` on dml as a contiguous tensor starting one element into its storage (no vector loads)."""
    flat = torch.empty(t.numel() + 1, dtype=t.dtype, device="dml")
    flat[1:] = t.reshape(-1).to("dml")
    return flat[1:].view(t.shape)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_forward(fn, length, dtype):
    x = rand(rows_for(length), length, dtype=dtype) * 4
    actual = fn(x.to("dml"), -1)
    assert actual.dtype == dtype
    torch.testing.assert_close(actual.cpu(), fn(wide(x), -1).to(dtype), **SOFTMAX_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("forward,backward", [
    (torch.softmax, torch.ops.aten._softmax_backward_data),
    (torch.log_softmax, torch.ops.aten._log_softmax_backward_data),
], ids=["softmax", "log_softmax"])
def test_softmax_backward(forward, backward, length, dtype):
    x, grad = rand(rows_for(length), length, dtype=dtype, seed=1), rand(rows_for(length), length, dtype=dtype, seed=2)
    y = forward(wide(x), -1).to(dtype)
    actual = backward(grad.to("dml"), y.to("dml"), -1, dtype)
    expected = backward(wide(grad), wide(y), -1, wide(y).dtype).to(dtype)
    assert actual.dtype == dtype
    torch.testing.assert_close(actual.cpu(), expected, **SOFTMAX_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_layer_norm_forward(affine, length, dtype):
    x = rand(rows_for(length), length, dtype=dtype) * 3 + 1
    w = rand(length, dtype=dtype, seed=1) if affine else None
    b = rand(length, dtype=dtype, seed=2) if affine else None
    to = (lambda t: None if t is None else t.to("dml"))
    up = (lambda t: None if t is None else t.float())
    actual = torch.native_layer_norm(x.to("dml"), [length], to(w), to(b), 1e-5)
    expected = torch.native_layer_norm(x.float(), [length], up(w), up(b), 1e-5)
    for a, e in zip(actual, expected):
        assert a.dtype == dtype
        torch.testing.assert_close(a.cpu(), e.to(dtype), **NORM_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False)], ids=["all", "input_only"])
def test_layer_norm_backward(mask, length, dtype):
    rows = rows_for(length)
    x, g = rand(rows, length, dtype=dtype, seed=3), rand(rows, length, dtype=dtype, seed=4)
    w, b = rand(length, dtype=dtype, seed=5), rand(length, dtype=dtype, seed=6)
    _, mean, rstd = torch.native_layer_norm(x.float(), [length], w.float(), b.float(), 1e-5)
    actual = torch.ops.aten.native_layer_norm_backward(
        g.to("dml"), x.to("dml"), [length], mean.to(dtype).to("dml"), rstd.to(dtype).to("dml"), w.to("dml"),
        b.to("dml"), list(mask))
    expected = torch.ops.aten.native_layer_norm_backward(
        g.float(), x.float(), [length], mean, rstd, w.float(), b.float(), list(mask))
    for wanted, a, e in zip(mask, actual, expected):
        if not wanted:
            assert a is None
            continue
        assert a.dtype == dtype
        # The weight gradient sums `rows` products of rounded inputs: scale the tolerance with the row.
        torch.testing.assert_close(a.cpu(), e.to(dtype), **NORM_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("length", [4, 33, 1024, 4096, 8192])
def test_misaligned_operands(length, dtype):
    """Operands one element into their storage: no vec4 / word loads, and a packed output that cannot be
    written a word at a time goes through float32."""
    x, grad = rand(3, length, dtype=dtype, seed=7) * 4, rand(3, length, dtype=dtype, seed=8)
    tolerance = SOFTMAX_TOLERANCE[dtype]
    torch.testing.assert_close(torch.softmax(misaligned(x), -1).cpu(), torch.softmax(wide(x), -1).to(dtype), **tolerance)
    y = torch.log_softmax(wide(x), -1).to(dtype)
    actual = torch.ops.aten._log_softmax_backward_data(misaligned(grad), misaligned(y), -1, dtype)
    expected = torch.ops.aten._log_softmax_backward_data(wide(grad), wide(y), -1, wide(y).dtype).to(dtype)
    torch.testing.assert_close(actual.cpu(), expected, **tolerance)
    out = misaligned(torch.zeros(3, length, dtype=dtype))
    torch.ops.aten._softmax.out(x.to("dml"), -1, False, out=out)
    torch.testing.assert_close(out.cpu(), torch.softmax(wide(x), -1).to(dtype), **tolerance)
    if dtype != torch.float64:
        w = rand(length, dtype=dtype, seed=9)
        actual = torch.nn.functional.layer_norm(misaligned(x), [length], misaligned(w))
        expected = torch.nn.functional.layer_norm(x.float(), [length], w.float()).to(dtype)
        torch.testing.assert_close(actual.cpu(), expected, **NORM_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", [((1000, 5), 0), ((3, 256, 4), 1), ((2, 33, 3), -2)], ids=str)
def test_other_dims_and_strides(shape, dim, dtype):
    x = rand(*shape, dtype=dtype, seed=10) * 4
    for fn in (torch.softmax, torch.log_softmax):
        torch.testing.assert_close(fn(x.to("dml"), dim).cpu(), fn(wide(x), dim).to(dtype), **SOFTMAX_TOLERANCE[dtype])
    strided = x.to("dml").transpose(0, -1)
    torch.testing.assert_close(torch.softmax(strided, -1).cpu(), torch.softmax(wide(x).transpose(0, -1), -1).to(dtype),
                               **SOFTMAX_TOLERANCE[dtype])


def test_half_to_float_output():
    x = rand(5, 64, dtype=torch.float16)
    actual = torch.ops.aten._softmax(x.to("dml"), -1, True)
    assert actual.dtype == torch.float32
    torch.testing.assert_close(actual.cpu(), torch.softmax(x.float(), -1), rtol=1e-5, atol=1e-6)


def test_extreme_rows():
    x = torch.tensor([[1000.0, 0.0, -1000.0, 5.0], [float("-inf"), 0.0, 1.0, 2.0], [float("nan"), 1.0, 2.0, 3.0],
                      [float("-inf")] * 4])
    for fn in (torch.softmax, torch.log_softmax):
        torch.testing.assert_close(fn(x.to("dml"), 1).cpu(), fn(x, 1), equal_nan=True)
    constant = torch.full((2, 64), 3.0)
    torch.testing.assert_close(torch.nn.functional.layer_norm(constant.to("dml"), [64]).cpu(), torch.zeros(2, 64))


def dispatched(fn) -> list[str]:
    """The kernels `fn` dispatches, in order."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        fn()
    return [e.name for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


@pytest.mark.skipif(not torch_dml._C._profiler_kernel_events, reason="kernel events need torch >= 2.12")
@pytest.mark.parametrize("length,held", [(1024, True), (4096, True), (8192, True), (4097, False), (8193, False)])
def test_one_dispatch_per_call(length, held):
    """Rows up to 4096 (8192 float32 loading vec4) take one held-row dispatch per call and nothing else;
    longer ones the workgroup-per-row kernels."""
    x = rand(2, length).to("dml")
    for fn, name in ((lambda: torch.softmax(x, -1), "softmax_held/"),
                     (lambda: torch.nn.functional.layer_norm(x, [length]), "layer_norm_held/")):
        fn().cpu()
        kernels = dispatched(lambda fn=fn: fn().cpu())
        if held:
            assert len(kernels) == 1 and kernels[0].startswith(name), kernels
        else:
            assert not any("_held" in k for k in kernels), kernels
