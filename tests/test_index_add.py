"""index_add (functional, in-place, out=), native (strict mode) for float, integer and bool dtypes,
against the CPU, deterministic; complex reaches the CPU through the counted fallback."""

import pytest
import torch
import torch_dml
from test_driver_portability import signed_remainders

pytestmark = pytest.mark.usefixtures("strict")

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if torch_dml.has_float64_support(0) else [])
EXACT = {torch.float32, torch.float64}


def randn(shape, dtype, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def close(actual, expected, exact):
    if exact:
        assert torch.equal(actual, expected)
    else:
        tolerance = {torch.float16: 1e-2, torch.bfloat16: 5e-2}.get(expected.dtype, 1e-6)
        torch.testing.assert_close(actual.double(), expected.double(), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_every_dim_with_repeats(dtype, dim):
    self = randn((5, 6, 7), dtype, 1)
    size = self.size(dim)
    index = torch.randint(0, size, (23,), generator=torch.Generator().manual_seed(2))
    shape = list(self.shape)
    shape[dim] = 23
    source = randn(shape, dtype, 3)
    expected = self.index_add(dim, index, source)
    actual = self.to("dml").index_add(dim, index.to("dml"), source.to("dml")).cpu()
    close(actual, expected, dtype in EXACT)
    # alpha scales each term (a product a driver may fuse into the sum: close, not bitwise).
    expected = self.index_add(dim, index.int(), source, alpha=-1.5)
    actual = self.to("dml").index_add(dim, index.int().to("dml"), source.to("dml"), alpha=-1.5).cpu()
    close(actual, expected, False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_in_place_out_and_strides(dtype):
    self = randn((6, 5), dtype, 4)
    index = torch.tensor([4, 0, 4, 4, 1, 5, 0])
    source = randn((7, 5), dtype, 5)
    d = self.to("dml")
    result = d.index_add_(0, index.to("dml"), source.to("dml"))
    assert result is d
    close(d.cpu(), self.clone().index_add_(0, index, source), dtype in EXACT)
    out = torch.empty(0, dtype=dtype, device="dml")
    torch.index_add(self.to("dml"), 0, index.to("dml"), source.to("dml"), out=out)
    close(out.cpu(), torch.index_add(self, 0, index, source), dtype in EXACT)
    # Transposed self and source, and a strided in-place target.
    t = self.t().to("dml")
    close(t.index_add(1, index.to("dml"), source.t().to("dml")).cpu(),
          self.t().index_add(1, index, source.t()), dtype in EXACT)
    big = torch.zeros(6, 10, dtype=dtype)
    dbig = big.to("dml")
    dbig[:, ::2].index_add_(0, index.to("dml"), source.to("dml"))
    big[:, ::2].index_add_(0, index, source)
    close(dbig.cpu(), big, dtype in EXACT)


def test_zero_dimensional_self_and_source():
    self, source = torch.tensor(1.5), torch.tensor(2.25)
    for index in [torch.tensor([0]), torch.tensor(0)]:
        expected = self.index_add(0, index, source, alpha=2)
        assert torch.equal(self.to("dml").index_add(0, index.to("dml"), source.to("dml"), alpha=2).cpu(), expected)


def test_empty_index_and_one_dimension():
    self = torch.randn(4)
    assert torch.equal(self.to("dml").index_add(0, torch.empty(0, dtype=torch.long, device="dml"),
                                                torch.empty(0, device="dml")).cpu(), self)
    index = torch.tensor([3, 3, 3, 0])
    source = torch.randn(4)
    assert torch.equal(self.to("dml").index_add(0, index.to("dml"), source.to("dml")).cpu(),
                       self.index_add(0, index, source))


def test_same_bits_every_run():
    self = torch.zeros(3, 256, device="dml")
    index = torch.randint(0, 3, (4096,), generator=torch.Generator().manual_seed(6)).to("dml")
    source = randn((4096, 256), torch.float32, 7).to("dml")
    first = self.index_add(0, index, source).cpu()
    for _ in range(3):
        assert torch.equal(self.index_add(0, index, source).cpu(), first)
    assert torch.equal(first, torch.zeros(3, 256).index_add(0, index.cpu(), source.cpu()))


def test_out_of_range_index_is_the_cpu_error():
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        torch.zeros(3, 2, device="dml").index_add_(0, torch.tensor([5], device="dml"), torch.ones(1, 2, device="dml"))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_int32_and_int64_wrap_as_on_the_cpu(dtype):
    info = torch.iinfo(dtype)
    self = torch.tensor([[info.max, 0], [5, -7], [info.min, 1]], dtype=dtype)
    index = torch.tensor([0, 2, 0, 1, 0])
    source = torch.tensor([[1, 2], [-1, 3], [info.max, -4], [6, 6], [-2, 9]], dtype=dtype)
    for alpha in [1, -3]:
        expected = self.index_add(0, index, source, alpha=alpha)
        assert torch.equal(self.to("dml").index_add(0, index.to("dml"), source.to("dml"), alpha=alpha).cpu(), expected)


SMALL = [torch.int8, torch.uint8, torch.int16, torch.bool]


def small_values(shape, dtype, seed):
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) < 0.3
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max + 1, shape, generator=generator, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", SMALL, ids=str)
@pytest.mark.parametrize("shape,dim", [((5, 6, 7), 0), ((5, 6, 7), 1), ((5, 6, 7), 2), ((3,), 0), ((9, 1), 0),
                                       ((2, 1001), 1)], ids=str)
def test_small_integers_and_bool_wrap_as_on_the_cpu(dtype, shape, dim):
    # Odd sizes leave the last word part-filled; values span the dtype, so sums wrap.
    self = small_values(shape, dtype, 1)
    index = torch.randint(0, shape[dim], (37,), generator=torch.Generator().manual_seed(2))
    source_shape = list(shape)
    source_shape[dim] = 37
    source = small_values(source_shape, dtype, 3)
    alphas = [1, True, False, 2] if dtype == torch.bool else [1, -3, 2]
    for alpha in alphas:
        expected = self.index_add(dim, index, source, alpha=alpha)
        actual = self.to("dml").index_add(dim, index.to("dml"), source.to("dml"), alpha=alpha).cpu()
        assert torch.equal(actual, expected), alpha


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_small_dtypes_in_place_strided_and_empty(dtype):
    base = small_values((7, 9), dtype, 4)
    index = torch.tensor([5, 0, 5, 2])
    source = small_values((4, 9), dtype, 5)
    # self starting mid-word (a slice from row 1), a strided column view, and an empty index.
    for view in [lambda t: t[1:], lambda t: t[:, ::2], lambda t: t.t()[::2].t()]:
        expected, actual = base.clone(), base.to("dml")
        src = source[:, : view(expected).size(1)]
        view(expected).index_add_(0, index, src)
        view(actual).index_add_(0, index.to("dml"), src.to("dml"))
        assert torch.equal(actual.cpu(), expected)
    empty = torch.empty(0, dtype=torch.long, device="dml")
    assert torch.equal(base.to("dml").index_add(0, empty, source[:0].to("dml")).cpu(), base)


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_small_dtypes_scatter_add_and_accumulating_put(dtype):
    # scatter_add, scatter_reduce("sum") and index_put(accumulate=True) sum on the same kernel.
    self, source = small_values((5, 7), dtype, 8), small_values((6, 7), dtype, 9)
    index = torch.randint(0, 5, (6, 7), generator=torch.Generator().manual_seed(10))
    d_self, d_source, d_index = self.to("dml"), source.to("dml"), index.to("dml")
    assert torch.equal(d_self.scatter_add(0, d_index, d_source).cpu(), self.scatter_add(0, index, source))
    for include_self in [True, False]:
        expected = self.scatter_reduce(0, index, source, "sum", include_self=include_self)
        actual = d_self.scatter_reduce(0, d_index, d_source, "sum", include_self=include_self)
        assert torch.equal(actual.cpu(), expected)
    rows = torch.tensor([0, 0, 3, 4, 0])
    expected = self.index_put((rows,), source[:5], accumulate=True)
    assert torch.equal(d_self.index_put((rows.to("dml"),), d_source[:5], accumulate=True).cpu(), expected)


def test_small_dtypes_same_bits_every_run():
    self = torch.zeros(3, 255, dtype=torch.int8, device="dml")
    index = torch.randint(0, 3, (4096,), generator=torch.Generator().manual_seed(6)).to("dml")
    source = small_values((4096, 255), torch.int8, 7).to("dml")
    first = self.index_add(0, index, source).cpu()
    for _ in range(3):
        assert torch.equal(self.index_add(0, index, source).cpu(), first)
    assert torch.equal(first, torch.zeros(3, 255, dtype=torch.int8).index_add(0, index.cpu(), source.cpu()))


def test_complex_reaches_the_cpu_counted():
    self = torch.zeros(3, 2, dtype=torch.complex64)
    index, source = torch.tensor([1, 1]), torch.full((2, 2), 1 + 2j, dtype=torch.complex64)
    with torch_dml.strict(False):
        torch_dml.reset_fallback_counts()
        actual = self.to("dml").index_add(0, index.to("dml"), source.to("dml")).cpu()
        # Counted under the overload called: each overload's generated kernel falls back to its own.
        assert torch_dml.fallback_counts() == {"aten::index_add": 1}
    assert torch.equal(actual, self.index_add(0, index, source))


def test_kernels_have_no_signed_remainder():
    # The integer variants sum in i32/i64: their index arithmetic must stay in u32.
    for dtype in [torch.int32, torch.int64, torch.float32, torch.int8, torch.int16]:
        self = torch.zeros(4, 3, dtype=dtype, device="dml")
        source = torch.ones(2, 3, dtype=dtype, device="dml")
        index = torch.tensor([1, 3], device="dml")
        self.index_add(0, index, source), self.index_add(0, index, source, alpha=2)
    names = [n for n in torch_dml._C._compiled_kernels(0) if n.startswith("index_add/")]
    assert {"index_add/i32", "index_add/i64/alpha", "index_add/f32/alpha"} <= set(names), names
    for name in names:
        assert not signed_remainders(torch_dml._C._compiled_kernel_source(0, name)), name
