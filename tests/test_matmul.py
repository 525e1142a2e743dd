"""The matmul family on the native GEMM kernel (strict mode: a fallback fails the test)."""

import os

import pytest
import torch
import torch_dml
from helpers import kernels_of, wide_tiles_from

pytestmark = pytest.mark.usefixtures("strict")


@pytest.fixture
def wide_tiles():
    """The 128x128 kernel for every output of at least 128x128, however few its workgroups."""
    with wide_tiles_from(1):
        yield

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if torch_dml.has_float64_support(0) else [])
TOLERANCE = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (3e-2, 3e-2),
             torch.float64: (1e-12, 1e-13)}


def reference(fn, *tensors):
    """The CPU result at the kernel's accumulation precision (float32, float64 for float64) from the
    same (rounded) inputs, cast to the input dtype."""
    result = fn(*[t if t.dtype == torch.float64 else t.float() for t in tensors])
    return result.to(tensors[0].dtype)


def check(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype, k: int = 1) -> None:
    assert actual.device.type == "dml" and actual.dtype == expected.dtype and actual.shape == expected.shape
    rtol, atol = TOLERANCE[dtype]
    atol *= max(1.0, k / 16)  # another summation order: rounding grows with the length of the dot products
    torch.testing.assert_close(actual.cpu().double(), expected.double(), rtol=rtol, atol=atol)


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (64, 64, 64), (65, 17, 130), (128, 300, 33)])
def test_mm(dtype, m, k, n):
    a, b = rand(m, k, dtype=dtype, seed=1), rand(k, n, dtype=dtype, seed=2)
    check(torch.mm(a.to("dml"), b.to("dml")), reference(torch.mm, a, b), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_transposed_and_strided_operands(dtype):
    a, b = rand(40, 30, dtype=dtype, seed=3), rand(50, 40, dtype=dtype, seed=4)
    da, db = a.to("dml"), b.to("dml")
    check(da.t() @ db.t(), reference(torch.mm, a.t(), b.t()), dtype)
    check(da[::2, 1::3] @ db[1:11, ::5], reference(torch.mm, a[::2, 1::3], b[1:11, ::5]), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_bmm_and_baddbmm(dtype):
    a, b, c = rand(4, 9, 6, dtype=dtype, seed=5), rand(4, 6, 11, dtype=dtype, seed=6), rand(9, 11, dtype=dtype, seed=7)
    check(torch.bmm(a.to("dml"), b.to("dml")), reference(torch.bmm, a, b), dtype)
    check(torch.baddbmm(c.to("dml"), a.to("dml"), b.to("dml"), beta=0.5, alpha=2.0),
          reference(lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), c, a, b), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_addmm_addmv_dot_and_linear(dtype):
    bias, x, w = rand(7, dtype=dtype, seed=8), rand(5, 3, dtype=dtype, seed=9), rand(7, 3, dtype=dtype, seed=10)
    check(torch.addmm(bias.to("dml"), x.to("dml"), w.to("dml").t(), beta=2.0, alpha=0.5),
          reference(lambda b, x, w: torch.addmm(b, x, w.t(), beta=2.0, alpha=0.5), bias, x, w), dtype)
    check(torch.nn.functional.linear(x.to("dml"), w.to("dml"), bias.to("dml")),
          reference(torch.nn.functional.linear, x, w, bias), dtype)
    v = rand(3, dtype=dtype, seed=11)
    check(torch.mv(w.to("dml"), v.to("dml")), reference(torch.mv, w, v), dtype)
    check(torch.addmv(bias.to("dml"), w.to("dml"), v.to("dml")), reference(torch.addmv, bias, w, v), dtype)
    u = rand(3, dtype=dtype, seed=12)
    check(torch.dot(u.to("dml"), v.to("dml")), reference(torch.dot, u, v), dtype)


def test_in_place_addmm_and_out_resize():
    c, a, b = rand(4, 6, seed=13), rand(4, 5, seed=14), rand(5, 6, seed=15)
    dc = c.to("dml")
    dc.addmm_(a.to("dml"), b.to("dml"))
    check(dc, c.addmm(a, b), torch.float32)
    out = torch.empty(0, device="dml")
    torch.mm(a.to("dml"), b.to("dml"), out=out)
    check(out, a @ b, torch.float32)


def test_beta_zero_ignores_nan_addend():
    c = torch.full((3, 3), float("nan"))
    a, b = rand(3, 2, seed=16), rand(2, 3, seed=17)
    check(torch.addmm(c.to("dml"), a.to("dml"), b.to("dml"), beta=0), torch.addmm(c, a, b, beta=0), torch.float32)


def test_matmul_composites_and_empty_k():
    a, b = rand(2, 3, 4, 5, seed=18), rand(5, 6, seed=19)
    check(a.to("dml") @ b.to("dml"), a @ b, torch.float32)
    check(torch.einsum("bij,bjk->bik", a[0].to("dml"), rand(3, 5, 2, seed=20).to("dml")),
          torch.einsum("bij,bjk->bik", a[0], rand(3, 5, 2, seed=20)), torch.float32)
    check(torch.mm(torch.empty(3, 0, device="dml"), torch.empty(0, 4, device="dml")), torch.zeros(3, 4), torch.float32)


def test_shape_errors_match_cpu():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(torch.ones(2, 3, device="dml"), torch.ones(4, 5, device="dml"))


@pytest.mark.skipif(not torch_dml.has_float64_support(0), reason="the adapter has no shader-f64")
def test_float64_keeps_float64_precision_and_scalars():
    # float64 accumulates in float64, with alpha and beta at full precision (a float32 alpha of 1/3
    # would be 1e-8 off).
    a, b, c = rand(33, 70, dtype=torch.float64, seed=5), rand(70, 20, dtype=torch.float64, seed=6), rand(20, dtype=torch.float64, seed=7)
    got = torch.addmm(c.to("dml"), a.to("dml"), b.to("dml"), beta=1 / 7, alpha=1 / 3).cpu()
    torch.testing.assert_close(got, torch.addmm(c, a, b, beta=1 / 7, alpha=1 / 3), rtol=1e-13, atol=1e-14)
    v = rand(70, dtype=torch.float64, seed=8)
    torch.testing.assert_close(torch.dot(v.to("dml"), v.to("dml")).cpu(), torch.dot(v, v), rtol=1e-14, atol=0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_addbmm_sums_the_batch_products(dtype):
    c, b1, b2 = rand(3, 4, dtype=dtype, seed=9), rand(5, 3, 6, dtype=dtype, seed=10), rand(5, 6, 4, dtype=dtype, seed=11)
    expected = reference(lambda x, y, z: torch.addbmm(x, y, z, beta=0.5, alpha=2.0), c, b1, b2)
    dc, d1, d2 = c.to("dml"), b1.to("dml"), b2.to("dml")
    check(torch.addbmm(dc, d1, d2, beta=0.5, alpha=2.0), expected, dtype, 30)
    check(torch.addbmm(dc, d1.transpose(1, 2).contiguous().transpose(1, 2), d2, beta=0.5, alpha=2.0), expected, dtype, 30)
    out = torch.empty(0, dtype=dtype, device="dml")
    torch.addbmm(dc[0], d1, d2, beta=0.5, alpha=2.0, out=out)  # a broadcast addend, a resized out
    check(out, reference(lambda x, y, z: torch.addbmm(x, y, z, beta=0.5, alpha=2.0), c[0], b1, b2), dtype, 30)
    dc.addbmm_(d1, d2)
    check(dc, reference(torch.addbmm, c, b1, b2), dtype, 30)
    empty = torch.addbmm(dc, d1[:0], d2[:0], beta=0.5)
    check(empty, (dc.cpu() * 0.5), dtype)
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes"):
        torch.addbmm(dc, d1, d1)
    with pytest.raises(RuntimeError, match="expanded size"):
        torch.zeros(3, 5, dtype=dtype, device="dml").addbmm_(d1, d2)
    grown = torch.ones(1, dtype=dtype, device="dml").addbmm_(d1, d2)  # resized in place, as on the CPU
    check(grown, reference(torch.addbmm, torch.ones(1, dtype=dtype), b1, b2), dtype, 30)
    if dtype in (torch.float16, torch.bfloat16):
        # One batch at a time, rounded after each: the CPU's own arithmetic, bit for bit.
        assert torch.equal(torch.addbmm(dc, d1, d2).cpu(), torch.addbmm(dc.cpu(), b1, b2))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8], ids=str)
def test_integer_matmul_is_exact_and_wraps_like_the_cpu(dtype):
    g = torch.Generator().manual_seed(12)
    high = 2**40 if dtype == torch.int64 else 100
    a = torch.randint(-high if dtype != torch.uint8 else 0, high, (17, 70), generator=g).to(dtype)
    b = torch.randint(-high if dtype != torch.uint8 else 0, high, (70, 9), generator=g).to(dtype)
    c = torch.randint(0, 50, (9,), generator=g).to(dtype)
    da, db, dc = a.to("dml"), b.to("dml"), c.to("dml")
    assert torch.equal((da @ db).cpu(), a @ b)  # int8 products wrap: the same ring as the CPU's
    assert torch.equal(torch.addmm(dc, da, db, beta=3, alpha=2).cpu(), torch.addmm(c, a, b, beta=3, alpha=2))
    assert torch.equal(torch.addmm(dc, da, db, beta=0.5, alpha=2.9).cpu(), torch.addmm(c, a, b, beta=0.5, alpha=2.9))
    assert torch.equal(torch.bmm(da.view(1, 17, 70), db.view(1, 70, 9)).cpu(), torch.bmm(a.view(1, 17, 70), b.view(1, 70, 9)))
    assert torch.equal(torch.mv(da, db[:, 0]).cpu(), torch.mv(a, b[:, 0]))
    assert torch.equal(torch.dot(da[0], db[:, 1]).cpu(), torch.dot(a[0], b[:, 1]))


def test_bool_matmul_goes_to_the_counted_fallback():
    a = torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(torch_dml.FallbackError, match="aten::mm"):
        torch.mm(a.to("dml"), a.t().to("dml"))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("m,k,n", [(128, 8, 128), (256, 64, 384), (200, 77, 131), (129, 300, 255)])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
@pytest.mark.usefixtures("wide_tiles")
def test_large_tile_kernel_every_layout_and_ragged_edges(dtype, m, k, n, layout):
    # The 128x128 register-blocked kernel's global loads follow each operand's unit-stride dimension,
    # so both layouts of each operand are checked.
    a = rand(k, m, dtype=dtype, seed=21).t() if layout[0] == "t" else rand(m, k, dtype=dtype, seed=21)
    b = rand(n, k, dtype=dtype, seed=22).t() if layout[1] == "t" else rand(k, n, dtype=dtype, seed=22)
    da = a.t().contiguous().to("dml").t() if layout[0] == "t" else a.to("dml")
    db = b.t().contiguous().to("dml").t() if layout[1] == "t" else b.to("dml")
    check(da @ db, reference(torch.mm, a, b), dtype, k)
    bias = rand(n, dtype=dtype, seed=23)
    check(torch.addmm(bias.to("dml"), da, db, beta=0.5, alpha=2.0),
          reference(lambda c, x, y: torch.addmm(c, x, y, beta=0.5, alpha=2.0), bias, a, b), dtype, k)


LAYOUT_NAMES = {"nn": "", "tn": "/a_t", "nt": "/b_t", "tt": "/a_t/b_t"}


def in_fresh_buffer(t: torch.Tensor, transposed: bool, shift: int) -> torch.Tensor:
    """t on dml in a buffer of its own, `shift` elements in; `transposed`: stored as t.t()."""
    stored = t.t() if transposed else t
    flat = torch.zeros(stored.numel() + shift, dtype=t.dtype).to("dml")
    flat[shift:].copy_(stored.reshape(-1).to("dml"))
    view = flat[shift:].view(stored.shape)
    return view.t() if transposed else view


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.cpu().view(torch.int16 if t.element_size() == 2 else torch.int32)


# Aligned operands whose unit-stride extent is a multiple of 4 load four elements per vector load
# (variants /a_v, /b_v); shifted one element they take the scalar loads. Both feed the same values to
# the same FMAs in the same order, so the results agree bit for bit on every driver; a quad put in the
# wrong place of the tile would not. 128x2064x132 also runs split-K.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("m,k,n", [(132, 72, 136), (128, 2064, 132)])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
@pytest.mark.usefixtures("wide_tiles")
def test_large_tile_quad_loads_match_the_scalar_loads_bit_for_bit(dtype, m, k, n, layout):
    a = rand(k, m, dtype=dtype, seed=26).t() if layout[0] == "t" else rand(m, k, dtype=dtype, seed=26)
    b = rand(n, k, dtype=dtype, seed=27).t() if layout[1] == "t" else rand(k, n, dtype=dtype, seed=27)
    quads = in_fresh_buffer(a, layout[0] == "t", 0) @ in_fresh_buffer(b, layout[1] == "t", 0)
    scalars = in_fresh_buffer(a, layout[0] == "t", 1) @ in_fresh_buffer(b, layout[1] == "t", 1)
    name = "gemm128/" + {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    compiled = torch_dml._C._compiled_kernels(0)
    assert name + LAYOUT_NAMES[layout] + "/a_v/b_v" in compiled and name + LAYOUT_NAMES[layout] in compiled
    assert torch.equal(bits(quads), bits(scalars))
    check(quads, reference(torch.mm, a, b), dtype, k)


@pytest.mark.usefixtures("wide_tiles")
def test_large_tile_kernel_batched_and_named():
    a, b = rand(3, 130, 40, seed=24), rand(3, 40, 140, seed=25)
    da, db = a.to("dml"), b.to("dml")
    check(torch.bmm(da, db), torch.bmm(a, b), torch.float32)
    # This product's own dispatch (what the process compiled before depends on the tests run before it).
    assert kernels_of(lambda: torch.bmm(da, db))[0].startswith("gemm128/f32")


def test_the_family_has_its_own_kernels():
    # mv, matmul, linear and einsum are composites over these.
    for overload in ("mm.out", "addmm.out", "bmm.out", "baddbmm.out", "addmv.out", "dot", "addbmm", "addbmm_",
                     "addbmm.out"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + overload, "PrivateUse1"), overload


# The 128x128 kernel does twice the FMAs per workgroup-memory read, but a quarter of the workgroups: on
# a large GPU a product of few 128-tiles runs faster on the 64x64 kernel (kernels/wide_tile.h). Tested
# here with a GPU's floor, whatever the adapter.
@pytest.mark.parametrize("m,k,n,batch,wide", [
    (2048, 128, 384, 1, False),   # a transformer's projection: 48 wide tiles
    (1024, 1024, 1024, 1, False),  # 64
    (2048, 64, 2048, 1, True),     # 256: every SM of an H100 gets two
    (256, 64, 256, 64, True),      # batches count: 4 tiles x 64
    (256, 64, 256, 63, False),
])
def test_the_wide_tile_is_taken_only_where_its_workgroups_fill_a_large_gpu(m, k, n, batch, wide):
    a, b = torch.ones(batch, m, k, device="dml"), torch.ones(batch, k, n, device="dml")
    product = (lambda: torch.bmm(a, b)) if batch > 1 else (lambda: a[0] @ b[0])
    with wide_tiles_from(256):
        kernels = kernels_of(product)  # 1024^3 on the 64x64 tile also runs split-K (kernels/split_k.h)
    assert kernels[0].startswith("gemm128/f32" if wide else "gemm/f32"), kernels
    assert all(k.startswith("gemm_split_sum/") for k in kernels[1:]), kernels
    with wide_tiles_from(1):
        assert kernels_of(product)[0].startswith("gemm128/f32")
    assert torch.equal(product().cpu(), torch.full((batch, m, n) if batch > 1 else (m, n), float(k)))


def test_each_adapter_has_its_own_wide_tile_floor():
    """A GPU wants a few wide workgroups per compute unit; a CPU adapter's few threads fill with a few."""
    cpu = torch_dml._C._adapter(0)["adapter_type"] == "cpu"
    floor = torch_dml._C._wide_tile_groups(0)
    assert floor == (2 * (os.cpu_count() or 1) if cpu else 256)
    with wide_tiles_from(7):
        assert torch_dml._C._wide_tile_groups(0) == 7
    assert torch_dml._C._wide_tile_groups(0) == floor


def dispatches_of(fn):
    """The result of fn() and the number of dispatches it recorded."""
    before = torch_dml._C._stream_counters(0)[0]
    result = fn()
    return result, torch_dml._C._stream_counters(0)[0] - before


# Long-K products with few output tiles run split-K: slices of K as separate workgroups writing partial
# tiles, then a pass adding them up in a fixed order. K=1000 and 2050 are no multiple of any slice depth;
# 130x129 takes the 128x128 kernel for float32 (wide_tiles).
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("m,k,n", [(64, 8192, 64), (3, 1000, 5), (130, 2050, 129), (1, 4099, 1)])
@pytest.mark.usefixtures("wide_tiles")
def test_split_k_long_k(dtype, m, k, n):
    a, b = rand(m, k, dtype=dtype, seed=31), rand(k, n, dtype=dtype, seed=32)
    da, db = a.to("dml"), b.to("dml")
    got, dispatches = dispatches_of(lambda: da @ db)
    check(got, reference(torch.mm, a, b), dtype, k)
    # The slices' pass and the sum's, plus the cast to the narrower float.
    assert dispatches == (2 if dtype in (torch.float32, torch.float64) else 3)
    assert torch.equal((da @ db).cpu(), got.cpu())  # the same order of additions on every run


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_split_k_transposed_strided_and_addmm(dtype):
    a, b = rand(1500, 40, dtype=dtype, seed=33), rand(70, 3000, dtype=dtype, seed=34)
    da, db = a.to("dml"), b.to("dml")
    check(da.t() @ db.t()[::2], reference(lambda x, y: x.t() @ y.t()[::2], a, b), dtype, 1500)
    check(da[::3, 1::2].t() @ db[1:, ::6].t()[:500], reference(lambda x, y: x[::3, 1::2].t() @ y[1:, ::6].t()[:500], a, b),
          dtype, 500)
    bias = rand(70, dtype=dtype, seed=35)
    dbias = bias.to("dml")
    for beta, alpha in ((0.5, 2.0), (1.0, 1.0), (0.0, -1.5)):
        got, dispatches = dispatches_of(lambda beta=beta, alpha=alpha: torch.addmm(dbias, da.t(), db.t()[::2], beta=beta,
                                                                                 alpha=alpha))
        expected = reference(lambda c, x, y: torch.addmm(c, x.t(), y.t()[::2], beta=beta, alpha=alpha), bias, a, b)  # noqa: B023
        check(got, expected, dtype, 1500)
        # The bias, alpha and beta are applied by the pass that adds the slices: no extra dispatch.
        assert dispatches == (2 if dtype in (torch.float32, torch.float64) else 3)
    linear = torch.nn.functional.linear(da.t(), db[:, :1500], dbias)
    check(linear, reference(lambda x, w, c: torch.nn.functional.linear(x.t(), w[:, :1500], c), a, b, bias), dtype, 1500)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_split_k_bmm_baddbmm_and_out(dtype):
    a, b, c = rand(3, 17, 2000, dtype=dtype, seed=36), rand(3, 2000, 9, dtype=dtype, seed=37), rand(17, 9, dtype=dtype, seed=38)
    da, db, dc = a.to("dml"), b.to("dml"), c.to("dml")
    got, dispatches = dispatches_of(lambda: torch.bmm(da, db))
    check(got, reference(torch.bmm, a, b), dtype, 2000)
    assert dispatches == (2 if dtype in (torch.float32, torch.float64) else 3)
    check(torch.baddbmm(dc, da, db, beta=0.5, alpha=2.0),
          reference(lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), c, a, b), dtype, 2000)
    check(torch.bmm(da.transpose(1, 2).contiguous().transpose(1, 2), db), reference(torch.bmm, a, b), dtype, 2000)
    # out= into a transposed view: the sum pass writes through out's strides.
    out = torch.zeros(3, 9, 17, dtype=dtype, device="dml")
    torch.bmm(da, db, out=out.transpose(1, 2))
    check(out.transpose(1, 2), reference(torch.bmm, a, b), dtype, 2000)
    flat = torch.empty(0, dtype=dtype, device="dml")
    torch.mm(da[0], db[1], out=flat)
    check(flat, reference(torch.mm, a[0], b[1]), dtype, 2000)
    dc2 = dc.clone()
    dc2.addmm_(da[1], db[2], beta=0.25)
    check(dc2, reference(lambda c, x, y: torch.addmm(c, x, y, beta=0.25), c, a[1], b[2]), dtype, 2000)


def test_split_k_is_taken_only_for_few_tiles_over_a_long_k():
    a, b = torch.ones(64, 4096, device="dml"), torch.ones(4096, 64, device="dml")
    got, dispatches = dispatches_of(lambda: a @ b)
    assert dispatches == 2 and torch.equal(got.cpu(), torch.full((64, 64), 4096.0))
    assert "gemm_split_sum/f32" in torch_dml._C._compiled_kernels(0)
    _, short = dispatches_of(lambda: a[:, :256] @ b[:256])  # a short K: one pass
    assert short == 1
    many = torch.ones(300, 64, 1024, device="dml")  # enough tiles already: one pass
    got, batched = dispatches_of(lambda: torch.bmm(many, many.transpose(1, 2)))
    assert batched == 1 and torch.equal(got[299].cpu(), torch.full((64, 64), 1024.0))


def test_split_k_integers_stay_exact():
    g = torch.Generator().manual_seed(40)
    for dtype in (torch.int32, torch.int64, torch.int8):
        a = torch.randint(-100, 100, (5, 3001), generator=g).to(dtype)
        b = torch.randint(-100, 100, (3001, 6), generator=g).to(dtype)
        da, db = a.to("dml"), b.to("dml")
        got, dispatches = dispatches_of(lambda da=da, db=db: da @ db)
        assert torch.equal(got.cpu(), a @ b), dtype
        assert dispatches == (3 if dtype == torch.int8 else 2), dtype  # int8 accumulates in int32, then a cast
