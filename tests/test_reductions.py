"""Reductions against the CPU, in strict mode: every dtype, dims, keepdim, strided inputs, empty inputs,
NaN propagation, short rows (a thread per output) and long rows (a workgroup per output)."""

import pytest
import torch
from conftest import DTYPES, make_tensor

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [t for t in DTYPES if t.is_floating_point]
F64 = torch.float64 in DTYPES
SHAPES_AND_DIMS = [((7,), None), ((5, 9), 1), ((5, 9), 0), ((4, 300), 1), ((3, 4, 5), (0, 2)), ((2, 3, 70), (1, 2)),
                   ((), None)]


def tolerance(dtype, n=1):
    if dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 2e-2, "atol": 2e-2 * max(1.0, n ** 0.5)}
    if dtype == torch.float32:
        return {"rtol": 1e-4, "atol": 1e-3}
    # float64 to summation-order rounding: a scale or order carried in float32 (1e-8) must fail.
    return {"rtol": 1e-12, "atol": 1e-16 * max(1.0, n)}


def close(actual, expected, dtype, n=1):
    assert actual.device.type == "dml"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **tolerance(dtype, n))
    else:
        assert torch.equal(actual.cpu(), expected)


def sample(shape, dtype, seed=0):
    x = make_tensor(shape, dtype, seed)
    return x / 1000 if dtype.is_floating_point else x


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", SHAPES_AND_DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean_amax_amin(dtype, shape, dim, keepdim):
    x = sample(shape, dtype)
    if dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        x = x % 7  # keep integer sums away from overflow
    d = x.to("dml")
    n = x.numel()
    close(d.sum(dim, keepdim=keepdim), x.sum(dim, keepdim=keepdim), dtype, n)
    if dtype.is_floating_point:
        close(d.mean(dim, keepdim=keepdim), x.mean(dim, keepdim=keepdim), dtype)
    if dim is not None or x.dim() == 0:
        close(d.amax(dim if dim is not None else (), keepdim=keepdim), x.amax(dim if dim is not None else (), keepdim=keepdim), dtype)
        close(d.amin(dim if dim is not None else (), keepdim=keepdim), x.amin(dim if dim is not None else (), keepdim=keepdim), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_max_min_argmax_over_dim_and_all(dtype):
    x = sample((6, 130), dtype, seed=1)
    d = x.to("dml")
    for dim in (0, 1):
        values, indices = d.max(dim)
        expected = x.max(dim)
        close(values, expected.values, dtype)
        assert torch.equal(indices.cpu(), expected.indices)  # ties: the first index, as on the CPU
        close(d.min(dim, keepdim=True).values, x.min(dim, keepdim=True).values, dtype)
        if dtype != torch.bool:
            assert torch.equal(d.argmax(dim).cpu(), x.argmax(dim))
    close(d.max(), x.max(), dtype)
    close(d.min(), x.min(), dtype)
    if dtype == torch.bool:
        with pytest.raises(RuntimeError, match="bool"):
            d.argmax()
    else:
        assert torch.equal(d.argmax().cpu(), x.argmax()) and torch.equal(d.argmin().cpu(), x.argmin())
        assert torch.equal(d.t().argmax().cpu(), x.t().argmax())


def test_ties_pick_the_first_index_and_nan_wins():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, float("nan"), 5.0, float("nan")]])
    d = x.to("dml")
    assert torch.equal(d.argmax(1).cpu(), x.argmax(1))
    assert torch.equal(d.max(1).indices.cpu(), x.max(1).indices)
    torch.testing.assert_close(d.amax(1).cpu(), x.amax(1), equal_nan=True)
    torch.testing.assert_close(d.max().cpu(), x.max(), equal_nan=True)
    long_row = torch.zeros(1000)
    long_row[[10, 500]] = 7.0
    assert d.new_tensor(long_row).argmax().item() == 10


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std_and_moments(dtype, correction):
    x = sample((4, 90), dtype, seed=2) * 10
    d = x.to("dml")
    close(d.var(1, correction=correction), x.var(1, correction=correction), dtype)
    close(d.std(0, correction=correction, keepdim=True), x.std(0, correction=correction, keepdim=True), dtype)
    close(d.var(), x.var(), dtype)
    for actual, expected in zip(torch.var_mean(d, 1, correction=correction), torch.var_mean(x, 1, correction=correction)):
        close(actual, expected, dtype)
    for actual, expected in zip(torch.std_mean(d), torch.std_mean(x)):
        close(actual, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_any_all_count_nonzero(dtype):
    x = make_tensor((5, 70), dtype, seed=3)
    if dtype != torch.bool:
        x[x.abs() > 0 if dtype != torch.uint8 else x > 100] = 0
    d = x.to("dml")
    for dim in (0, 1):
        assert torch.equal(d.any(dim).cpu(), x.any(dim)) and torch.equal(d.all(dim).cpu(), x.all(dim))
        assert torch.equal(torch.count_nonzero(d, dim).cpu(), torch.count_nonzero(x, dim))
    assert torch.equal(d.any().cpu(), x.any()) and torch.equal(d.all().cpu(), x.all())


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, float("inf"), -float("inf")])
def test_vector_norm(dtype, ord):
    x = sample((3, 80), dtype, seed=4)
    d = x.to("dml")
    close(torch.linalg.vector_norm(d, ord, dim=1), torch.linalg.vector_norm(x, ord, dim=1), dtype, 80)
    close(torch.linalg.vector_norm(d, ord), torch.linalg.vector_norm(x, ord), dtype, 240)


def test_float_to_bool_keeps_nan_true_and_negative_zero_false():
    x = torch.tensor([float("nan"), -0.0, 0.0, 1e-40, -2.0])
    assert torch.equal(x.to("dml").to(torch.bool).cpu(), x.to(torch.bool))
    assert torch.equal(x.to("dml").any().cpu(), x.any())


def test_prod_nansum_and_integer_promotion():
    i = torch.randint(-3, 4, (4, 6), dtype=torch.int32)
    d = i.to("dml")
    close(d.sum(1), i.sum(1), torch.int64)
    close(d.prod(1), i.prod(1), torch.int64)
    close(d.prod(), i.prod(), torch.int64)
    close(d.sum(1, dtype=torch.int16), i.sum(1, dtype=torch.int16), torch.int16)
    f = torch.tensor([[1.0, float("nan"), 2.0], [float("nan")] * 3])
    close(f.to("dml").nansum(1), f.nansum(1), torch.float32)
    close(f.to("dml").nansum(), f.nansum(), torch.float32)
    b = torch.tensor([True, False, True])
    close(b.to("dml").sum(), b.sum(), torch.int64)


def test_strided_and_expanded_inputs():
    x = torch.randn(8, 12)
    d = x.to("dml")
    close(d.t().sum(1), x.t().sum(1), torch.float32)
    close(d[::2, 1::3].mean(0), x[::2, 1::3].mean(0), torch.float32)
    e = torch.randn(5)
    close(e.to("dml").expand(3, 5).sum(0), e.expand(3, 5).sum(0), torch.float32)


def test_empty_inputs_follow_pytorch():
    e = torch.empty(0, 4, device="dml")
    close(e.sum(0), torch.zeros(4), torch.float32)
    close(e.prod(0), torch.ones(4), torch.float32)
    assert torch.isnan(e.mean(0).cpu()).all()
    with pytest.raises(IndexError):
        e.amax(0)
    with pytest.raises(RuntimeError):
        e.max()


def test_out_variants_resize_and_convert():
    x = torch.randn(3, 10)
    out = torch.empty(0, dtype=torch.float16, device="dml")
    torch.sum(x.to(torch.float16).to("dml"), 1, out=out)
    close(out, x.to(torch.float16).sum(1), torch.float16)
    idx = torch.empty(7, dtype=torch.int64, device="dml")
    torch.argmax(x.to("dml"), 1, out=idx)
    assert torch.equal(idx.cpu(), x.argmax(1))
    whole = torch.empty(0, dtype=torch.float64, device="dml")  # max/min over everything, out= (widened)
    torch.max(x.to("dml"), out=whole)
    assert whole.shape == () and whole.item() == x.max().item()
    torch.min(x.to("dml"), out=whole)
    assert whole.item() == x.min().item()
    with pytest.raises(RuntimeError, match="canCast"):
        torch.max(x.to("dml"), out=torch.empty(0, dtype=torch.int64, device="dml"))



@pytest.mark.parametrize("shape,dim", [((5, 4, 20), 2), ((5, 4, 130), 2), ((5, 4, 50000), 2)], ids=str)
def test_indices_land_on_their_out_elements_only(shape, dim):
    # argmax/argmin write each int64 index as two 32-bit words (no adapter needs 64-bit integers for
    # it): through offset out= views, transposed ones included, they must land on the view's elements,
    # high words zero, and leave the rest of the storage alone. Short rows, long rows, split rows.
    x = sample(shape, torch.float32, seed=11)
    d = x.to("dml")
    for reduce, want in ((torch.argmax, x.argmax(dim)), (torch.argmin, x.argmin(dim))):
        store = torch.full((30,), -7, dtype=torch.int64, device="dml")
        reduce(d, dim, out=store[3:23].view(shape[:2]))
        expected = torch.full((30,), -7, dtype=torch.int64)
        expected[3:23] = want.flatten()
        assert torch.equal(store.cpu(), expected), (reduce, store.cpu(), expected)
    # (5, 4) views with strides (1, 9) from element 1: max wants its two outputs' strides equal.
    values = torch.empty((shape[1], 9), device="dml")[:, 1:1 + shape[0]].t()
    store = torch.full((shape[1], 9), -7, dtype=torch.int64, device="dml")
    torch.max(d, dim, out=(values, store[:, 1:1 + shape[0]].t()))
    expected = torch.full((shape[1], 9), -7, dtype=torch.int64)
    expected[:, 1:1 + shape[0]] = x.max(dim).indices.t()
    assert torch.equal(store.cpu(), expected) and torch.equal(values.cpu(), x.amax(dim))

# ---- long rows: split into slices, partial results combined by a second pass -----------------------
LONG_CASES = [((70000,), None), ((70001,), None), ((3, 40000), 1), ((3, 40001), 1), ((40000, 3), 0),
              ((2, 200, 150), (1, 2))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", LONG_CASES, ids=str)
def test_long_rows_split_into_slices(dtype, shape, dim):
    x = sample(shape, dtype, seed=7)
    if not dtype.is_floating_point and dtype != torch.bool:
        x = x % 5
    d = x.to("dml")
    n = x.numel()
    dims = dim if dim is not None else tuple(range(x.dim()))
    close(d.sum(dim), x.sum(dim), dtype, n)
    close(d.amax(dims), x.amax(dims), dtype)
    close(d.amin(dims), x.amin(dims), dtype)
    close(d.count_nonzero(dim), x.count_nonzero(dim), dtype)
    if dtype != torch.bool and (dim is None or isinstance(dim, int)):
        # Slices keep their best index; ties (x % 5 has many) must still pick the first.
        assert torch.equal(d.argmax(dim).cpu(), x.argmax(dim)) and torch.equal(d.argmin(dim).cpu(), x.argmin(dim))
    close(d.any(dims) if dim is not None else d.any(), x.any(dims) if dim is not None else x.any(), dtype)
    close(d.all(dims) if dim is not None else d.all(), x.all(dims) if dim is not None else x.all(), dtype)
    if dtype.is_floating_point:
        close(d.mean(dim), x.mean(dim), dtype)
        close(d.nansum(dim), x.nansum(dim), dtype, n)
        for order in (1, 2, float("inf"), 3):
            wide = x.double() if dtype == torch.float64 else x.float()
            expected = torch.linalg.vector_norm(wide, order, dims).to(dtype)
            close(torch.linalg.vector_norm(d, order, dims), expected, dtype, n)
        for correction in (0, 1):
            close(d.var(dim, correction=correction), x.double().var(dim, correction=correction).to(dtype), dtype)
        close(d.std(dim), x.double().std(dim).to(dtype), dtype)
        near_one = 1 + x.float() / 100  # a product of 70000 such values stays finite
        close(near_one.to("dml").prod(dim) if dim is not None and isinstance(dim, int) else near_one.to("dml").prod(),
              near_one.prod(dim) if dim is not None and isinstance(dim, int) else near_one.prod(), torch.float32)


def test_long_rows_strided_input_and_nan():
    x = sample((300, 400), torch.float32, seed=8)
    t, dt = x.t(), x.to("dml").t()  # reduced dim has stride 400
    close(dt.sum(1), t.sum(1), torch.float32, 300)
    close(dt.sum(), t.sum(), torch.float32, x.numel())
    x[123, 45] = float("nan")
    d = x.to("dml")
    assert d.amax().isnan().item() and d.amin().isnan().item() and d.sum().isnan().item()
    close(d.nansum(), x.nansum(), torch.float32, x.numel())
    x[123, 45] = float("inf")
    assert d.to("cpu").isnan().any() and x.to("dml").amax().item() == float("inf")


def test_long_rows_take_the_split_kernels():
    import torch_dml
    d = torch.ones(50000, device="dml")
    assert d.sum().item() == 50000
    names = torch_dml._C._compiled_kernels(0)
    tail = "/sg" if torch_dml._C._has_feature(0, "subgroup") else ""
    assert f"reduce/sum/f32>f32/o1r1/wg/partial{tail}/v4" in names, names  # unit-stride rows: vec4 loads
    assert "reduce/sum/f32>f32/o1r1/thread/combine" in names, names  # 13 partial results
    odd = torch.ones(50001, device="dml")
    assert odd.sum().item() == 50001 and odd[1:].sum().item() == 50000
    assert d.argmax().item() == 0 and d.var().item() == 0
    names = torch_dml._C._compiled_kernels(0)
    for kernel in ("argmax/f32>f32/o1r1/wg/partial", "argmax/f32>f32/o1r1/thread/combine",
                   "var/f32>f32/o1r1/wg/partial", "var/f32>f32/o1r1/thread/combine"):
        assert "reduce/" + kernel in names, (kernel, names)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64] + ([torch.float64] if F64 else []), ids=str)
def test_rows_of_many_slices_combine_in_a_workgroup(dtype):
    # 300000 elements make 74 slices, so the combining pass takes a workgroup per row too.
    x = sample((2, 300000), dtype, seed=10)
    x[0, 123456] = x[0].max() + 1
    x[1, 299999] = x[1].min() - 1
    d = x.to("dml")
    assert torch.equal(d.argmax(1).cpu(), x.argmax(1)) and torch.equal(d.argmin(1).cpu(), x.argmin(1))
    values, indices = d.max(1)
    assert torch.equal(indices.cpu(), x.max(1).indices) and torch.equal(values.cpu(), x.max(1).values)
    if dtype.is_floating_point:
        shifted = x + 1000  # a large mean: the slices' own means keep the deviations exact
        close(shifted.to("dml").var(1), shifted.double().var(1).to(dtype), dtype)
        close(torch.std_mean(d, 1)[0], x.double().std(1).to(dtype), dtype)


def test_workgroup_memory_path_without_subgroups():
    # The path for adapters without subgroup operations, in a process where the feature is off.
    from helpers import run_python
    result = run_python("""
import torch, torch_dml
torch_dml._C._set_strict(True)
assert not torch_dml._C._has_feature(0, "subgroup")
x = torch.randn(3, 50000)
x[1, 7] = float("nan")
d = x.to("dml")
for got, want in ((d.sum(1), x.sum(1)), (d.amax(1), x.amax(1)), (d.amin(1), x.amin(1)), (d.mean(1), x.mean(1)),
                  (d[0].sum(), x[0].sum()), (d[:, :200].sum(1), x[:, :200].sum(1)), (d.any(1), x.any(1))):
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=1e-4, atol=1e-3)
names = torch_dml._C._compiled_kernels(0)
assert "reduce/sum/f32>f32/o1r1/wg/partial/v4" in names and not any("/sg" in n for n in names), names
print("ok")
""", TORCH_DML_DISABLE_FEATURES="subgroup")
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr


# ---- inputs larger than one storage binding (128 MiB on lavapipe, 2 GiB on an H100) ---------------
@pytest.fixture(scope="module")
def big():
    import torch_dml
    limit = torch_dml._C._adapters(True)[0]["limits"]["maxStorageBufferBindingSize"]
    if limit > 512 * 1024 * 1024:
        pytest.skip(f"the adapter binds {limit >> 20} MiB at once: an input past that is too large to test here")
    n = int(limit * 1.2) // 4 // 4000 * 4000  # float32 elements, a fifth more than one binding holds
    x = torch.rand(n, generator=torch.Generator().manual_seed(9)) - 0.5
    return x, x.to("dml")


def test_inputs_beyond_one_binding_reduce_natively(big):
    x, d = big
    wide = x.double()
    close(d.sum(), wide.sum().float(), torch.float32, x.numel())
    close(d.view(4, -1).sum(1), wide.view(4, -1).sum(1).float(), torch.float32, x.numel())       # row slices
    close(d.view(-1, 1000).amax(-1), x.view(-1, 1000).amax(-1), torch.float32)                    # a workgroup per row
    close(d.view(-1, 4).mean(1), x.view(-1, 4).mean(1), torch.float32)                            # a thread per row
    close(d.view(8, 5, -1).norm(dim=(1, 2)), wide.view(8, 5, -1).norm(dim=(1, 2)).float(), torch.float32)
    assert d.amax().item() == x.amax().item() and d.amin().item() == x.amin().item()
    # argmax/argmin and var/std split rows too, so a row beyond one binding runs natively.
    assert d.argmax().item() == x.argmax().item() and d.argmin().item() == x.argmin().item()
    assert torch.equal(d.view(4, -1).max(1).indices.cpu(), x.view(4, -1).max(1).indices)
    torch.testing.assert_close(d.var().cpu(), wide.var().float(), rtol=1e-5, atol=0)
    torch.testing.assert_close(d.view(2, -1).std(1).cpu(), wide.view(2, -1).std(1).float(), rtol=1e-5, atol=0)


def test_inputs_beyond_one_binding_the_kernel_cannot_window_fall_back(big):
    import torch_dml
    _, d = big
    # Columns of a large matrix each span the whole buffer: no window fits, so the CPU fallback runs.
    with pytest.raises(torch_dml.FallbackError, match="sum"):
        d.view(4, -1).sum(0)
    with pytest.raises(torch_dml.FallbackError, match="argmax"):
        d.view(4, -1).argmax(0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", [((7,), None), ((5, 9), 1), ((5, 9), 0), ((4, 300), -1), ((), None), ((), 0)],
                         ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_aminmax_is_native(dtype, shape, dim, keepdim):
    x = sample(shape, dtype, seed=5)
    actual = torch.aminmax(x.to("dml"), dim=dim, keepdim=keepdim)
    expected = torch.aminmax(x, dim=dim, keepdim=keepdim)
    close(actual.min, expected.min, dtype)
    close(actual.max, expected.max, dtype)


def test_aminmax_nan_out_and_errors():
    x = torch.tensor([[1.0, float("nan"), -2.0], [4.0, 0.5, -1.0]])
    d = x.to("dml")
    for actual, expected in zip(torch.aminmax(d, dim=1), torch.aminmax(x, dim=1)):
        torch.testing.assert_close(actual.cpu(), expected, equal_nan=True)
    lo, hi = torch.empty(0, device="dml"), torch.empty(5, device="dml")
    torch.aminmax(d, dim=0, keepdim=True, out=(lo, hi))
    assert lo.shape == hi.shape == (1, 3)
    torch.testing.assert_close(hi.cpu(), x.amax(0, keepdim=True), equal_nan=True)
    with pytest.raises(RuntimeError, match="empty dimension"):
        torch.aminmax(torch.empty(0, 3, device="dml"))
    with pytest.raises(IndexError):
        torch.aminmax(torch.empty(0, 3, device="dml"), dim=0)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        torch.aminmax(d, dim=0, out=(torch.empty(0, dtype=torch.float64, device="dml"), hi))


def test_indices_into_a_strided_out(strict):
    # make_reduction refuses value and index outputs of different strides: an argmax into a column of a
    # wider tensor raised "expected both outputs to have same strides".
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(3))
    d = x.to("dml")
    for op, dim in ((torch.argmax, 0), (torch.argmin, 1)):
        expected = op(x, dim)
        column = torch.zeros(expected.numel(), 3, dtype=torch.long, device="dml")
        op(d, dim, out=column[:, 1])
        assert torch.equal(column[:, 1].cpu(), expected) and column[:, 0::2].count_nonzero().item() == 0
    values = torch.zeros(6, 2, device="dml")
    indices = torch.zeros(2, 6, dtype=torch.long, device="dml").t()  # row-major values, column-major indices
    torch.max(d, 0, out=(values[:, 0], indices[:, 1]))
    reference = x.max(0)
    assert torch.equal(values[:, 0].cpu(), reference.values) and torch.equal(indices[:, 1].cpu(), reference.indices)
    keep = torch.empty(6, 1, dtype=torch.long, device="dml").as_strided((6, 1), (1, 7))  # odd stride on a size-1 dim
    torch.argmax(d.t(), 1, keepdim=True, out=keep)
    assert torch.equal(keep.cpu(), x.t().argmax(1, keepdim=True))
