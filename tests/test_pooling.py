"""max_pool2d forward (values and indices) and backward, native in strict mode, against the CPU."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml

CASES = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 1), (1, 0), (2, 1), False),
    (2, 3, 0, 1, True),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_max_pool2d_forward_backward_native(kernel, stride, padding, dilation, ceil_mode, dtype):
    torch.manual_seed(3)
    x = torch.randn(2, 3, 11, 10).to(dtype).requires_grad_()
    out, idx = F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
    grad = torch.randn(out.shape).to(dtype)
    out.backward(grad)
    d = x.detach().to("dml").requires_grad_()
    with torch_dml.strict():
        d_out, d_idx = F.max_pool2d(d, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
        d_out.backward(grad.to("dml"))
    assert torch.equal(d_out.cpu(), out.detach())
    assert torch.equal(d_idx.cpu(), idx)
    # Overlapping windows add several gradients into one element: the CPU rounds to bfloat16 at each
    # add, dml (like CUDA) adds in float32 and rounds once: allow a bfloat16 ulp or two.
    tol = {"rtol": 3e-2, "atol": 1e-2} if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(d.grad.cpu(), x.grad, **tol)


def test_max_pool2d_unbatched_and_module():
    x = torch.randn(4, 9, 9)
    with torch_dml.strict():
        actual = torch.nn.MaxPool2d(3, 2)(x.to("dml"))
    assert torch.equal(actual.cpu(), torch.nn.MaxPool2d(3, 2)(x))


def _dispatches() -> int:
    return torch_dml._C._stream_counters(0)[0]


def _pool_both(x: torch.Tensor, grad: torch.Tensor, *args, dispatches: list[int] | None = None, **kwargs):
    """Values, indices and the input's gradient of max_pool2d on x's device (with `dispatches`, the
    number of kernel dispatches of the forward and backward appended to it)."""
    x = x.detach().clone().requires_grad_()
    grad = grad.to(x.device)
    before = _dispatches()
    out, idx = F.max_pool2d(x, *args, return_indices=True, **kwargs)
    out.backward(grad)
    if dispatches is not None:
        dispatches.append(_dispatches() - before)
    return out.detach(), idx, x.grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_max_pool2d_matches_the_cpu_bit_for_bit(dtype):
    if dtype == torch.float64 and not torch_dml.has_float64_support(0):
        pytest.skip("the adapter has no float64")
    torch.manual_seed(5)
    # Rounded inputs make ties; overlapping windows (3x3, stride 2) add up to four gradients into one
    # element, in the CPU's order.
    x = (torch.randn(3, 4, 17, 13) * 4).round().to(dtype)
    grad = torch.randn(3, 4, 9, 7).to(dtype)
    want = _pool_both(x, grad, 3, 2, 1)
    dispatches = []
    with torch_dml.strict():
        got = _pool_both(x.to("dml"), grad, 3, 2, 1, dispatches=dispatches)
    # One kernel forward and one backward; a 16-bit dtype adds one rounding each.
    assert dispatches == [2 if dtype in (torch.float32, torch.float64) else 4]
    if dtype in (torch.float16, torch.bfloat16):
        # The CPU rounds a 16-bit gradient at each add; dml, like CUDA, adds in float32 and rounds once.
        exact = _pool_both(x.float(), grad.float(), 3, 2, 1)[2].to(dtype)
        assert torch.equal(got[2].cpu(), exact)
        torch.testing.assert_close(got[2].cpu(), want[2], rtol=2e-2, atol=2e-2)
        want, got = want[:2], got[:2]
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and torch.equal(g.cpu(), w), (w, g.cpu())


def test_max_pool2d_nan_inf_ties_and_subnormals_follow_the_cpu():
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[[[nan, 1.0, nan, 2.0], [-inf, -inf, 5.0, 5.0], [3e-45, 1e-45, -0.0, 0.0],
                        [-inf, -inf, -inf, -inf]]]])
    grad = torch.arange(1.0, 5.0).view(1, 1, 2, 2)
    for args in ((2,), (3, 1, 1), ((1, 2), (1, 2))):
        g = torch.ones(F.max_pool2d(x, *args).shape)
        want = _pool_both(x, g if args != (2,) else grad, *args)
        with torch_dml.strict():
            got = _pool_both(x.to("dml"), g if args != (2,) else grad, *args)
        for w, d in zip(want, got):
            assert torch.equal(d.cpu().nan_to_num(7.0), w.nan_to_num(7.0)), (args, w, d.cpu())


def test_max_pool2d_channels_last_and_views():
    torch.manual_seed(6)
    x = torch.randn(2, 8, 12, 10)
    grad = torch.randn(2, 8, 6, 5)
    want = _pool_both(x, grad, 2)
    with torch_dml.strict():
        got = _pool_both(x.to(memory_format=torch.channels_last).to("dml"), grad.to(memory_format=torch.channels_last), 2)
    for w, g in zip(want, got):
        assert torch.equal(g.cpu(), w)
    # The CPU keeps channels_last in the values, indices and gradient; so does dml.
    for t in got:
        assert t.is_contiguous(memory_format=torch.channels_last)
    # A view read in place: every other column of a wider tensor on the device.
    wide = torch.zeros(2, 8, 12, 20, device="dml")
    wide[..., ::2] = x.to("dml")
    wide.requires_grad_()
    view = wide[..., ::2]
    assert not view.is_contiguous()
    with torch_dml.strict():
        out, idx = F.max_pool2d(view, 2, return_indices=True)
        out.backward(grad.to("dml"))
    assert torch.equal(out.detach().cpu(), want[0]) and torch.equal(idx.cpu(), want[1])
    assert torch.equal(wide.grad[..., ::2].cpu(), want[2]) and not wide.grad[..., 1::2].cpu().any()


def test_max_pool2d_out_into_strided_tensors():
    torch.manual_seed(7)
    x = torch.randn(2, 3, 8, 8)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    d = x.to("dml")
    out = torch.zeros(2, 3, 4, 8, device="dml")[..., ::2]
    idx = torch.zeros(2, 3, 4, 4, 2, dtype=torch.long, device="dml")[..., 0]
    with torch_dml.strict():
        torch.ops.aten.max_pool2d_with_indices.out(d, [2, 2], [2, 2], [0, 0], [1, 1], False, out=out, indices=idx)
    assert torch.equal(out.cpu(), values) and torch.equal(idx.cpu(), indices)


def test_max_pool2d_backward_beyond_one_dispatch_row():
    # The backward's 17M threads (one per input element) are more than 65535 workgroups of 256: its
    # launch is a 2-D grid. (A forward as large would need indices beyond lavapipe's 128 MiB binding.)
    x = torch.randn(1, 17, 1000, 1000)
    grad = torch.randn(1, 17, 500, 500)
    want = _pool_both(x, grad, 2)
    with torch_dml.strict():
        got = _pool_both(x.to("dml"), grad, 2)
    for w, g in zip(want, got):
        assert torch.equal(g.cpu(), w)


def test_max_pool2d_past_one_binding_takes_the_fallback_before_writing():
    # Indices of 17M outputs (136 MB) exceed lavapipe's 128 MiB binding: the kernel declines, the
    # counted CPU fallback answers.
    if torch_dml.get_device_properties(0).limits["maxStorageBufferBindingSize"] >= 17 * 10**6 * 8:
        pytest.skip("the adapter binds the indices whole")
    x = torch.randn(1, 17, 1000, 1000)
    want = F.max_pool2d(x, 1, return_indices=True)
    torch_dml.reset_fallback_counts()
    got = F.max_pool2d(x.to("dml"), 1, return_indices=True)
    assert torch_dml.fallback_counts().get("aten::max_pool2d_with_indices.out", 0) == 1, torch_dml.fallback_counts()
    assert torch.equal(got[0].cpu(), want[0]) and torch.equal(got[1].cpu(), want[1])
