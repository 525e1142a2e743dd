"""index_add (functional, in-place, out=), native (strict mode) for float dtypes, against the CPU,
deterministic; other dtypes reach the CPU through the counted fallback."""

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


def test_small_integer_dtypes_reach_the_cpu_counted():
    self = torch.zeros(3, 2, dtype=torch.int8)
    index, source = torch.tensor([1, 1]), torch.full((2, 2), 100, dtype=torch.int8)
    with torch_dml.strict(False):
        torch_dml.reset_fallback_counts()
        actual = self.to("dml").index_add(0, index.to("dml"), source.to("dml")).cpu()
        assert torch_dml.fallback_counts().get("aten::index_add.out") == 1
    assert torch.equal(actual, self.index_add(0, index, source))


def test_kernels_have_no_signed_remainder():
    # The integer variants sum in i32/i64: their index arithmetic must stay in u32.
    for dtype in [torch.int32, torch.int64, torch.float32]:
        self = torch.zeros(4, 3, dtype=dtype, device="dml")
        source = torch.ones(2, 3, dtype=dtype, device="dml")
        index = torch.tensor([1, 3], device="dml")
        self.index_add(0, index, source), self.index_add(0, index, source, alpha=2)
    names = [n for n in torch_dml._C._compiled_kernels(0) if n.startswith("index_add/")]
    assert {"index_add/i32", "index_add/i64/alpha", "index_add/f32/alpha"} <= set(names), names
    for name in names:
        assert not signed_remainders(torch_dml._C._compiled_kernel_source(0, name)), name
