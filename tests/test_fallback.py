"""The CPU fallback: counted per op, warned about once, refused in strict mode."""

import pytest
import torch
import torch_dml
from helpers import run_python


# renorm / cummax have no native kernel yet; when they get one, pick other ops here.
def test_counts_by_overload():
    x = torch.arange(4.0, device="dml").view(2, 2)
    torch_dml.reset_fallback_counts()
    y = torch.renorm(x, 2, 0, 1.0)
    torch.renorm(x, 2, 0, 1.0, out=y)
    counts = torch_dml.fallback_counts()
    assert counts.get("aten::renorm.out") == 2
    assert torch.equal(y.cpu(), torch.arange(4.0).view(2, 2).renorm(2, 0, 1.0))
    torch_dml.reset_fallback_counts()
    assert torch_dml.fallback_counts() == {}


def test_strict_raises_fallback_error_naming_the_op():
    x = torch.arange(4.0, device="dml")
    with torch_dml.strict():
        assert torch_dml.is_strict()
        with pytest.raises(torch_dml.FallbackError, match=r"aten::renorm\.out") as raised:
            x.view(2, 2).renorm(2, 0, 1.0)
    assert isinstance(raised.value, NotImplementedError)
    assert torch_dml.device_name(0) in str(raised.value)
    assert not torch_dml.is_strict()
    assert torch.equal(x.view(2, 2).renorm(2, 0, 1.0).cpu(), torch.arange(4.0).view(2, 2).renorm(2, 0, 1.0))


class _RenormInBackward(torch.autograd.Function):
    """Forward native (a copy); backward runs an op without a kernel on the autograd engine's thread."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.renorm(2, 0, 1.0)


def test_strict_reaches_backward_threads():
    x = torch.arange(6.0, device="dml").view(2, 3).requires_grad_()
    with torch_dml.strict(), pytest.raises(NotImplementedError, match="renorm"):
        _RenormInBackward.apply(x).sum().backward()


def test_strict_from_environment():
    result = run_python(
        "import torch, torch_dml\n"
        "assert torch_dml.is_strict()\n"
        "x = torch.ones(2, device='dml')\n"
        "try:\n    x.view(2, 1).renorm(2, 0, 1.0)\nexcept torch_dml.FallbackError as e:\n    print('refused', e)\n",
        TORCH_DML_STRICT="1",
    )
    assert result.returncode == 0, result.stderr
    assert "refused" in result.stdout and "aten::renorm.out" in result.stdout


def test_warns_once_per_op():
    result = run_python(
        "import warnings, torch, torch_dml\n"
        "x = torch.ones(2, device='dml')\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3):\n        x.view(2, 1).renorm(2, 0, 1.0); x.cummax(0)\n"
        "print(sum('has no native dml kernel' in str(w.message) for w in seen))\n",
        TORCH_DML_FALLBACK_WARN="1",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "2"


def test_view_ops_never_fall_back_silently():
    x = torch.arange(12.0, device="dml")
    # unfold is a view op with only CPU/CUDA kernels: a copy would break aliasing, so it must either
    # be native (a real view) or refuse.
    try:
        view = x.unfold(0, 3, 3)
    except RuntimeError as error:
        assert "view" in str(error).lower()
    else:
        view.fill_(0.0)
        assert x.cpu().sum().item() == 0.0


def test_complex_conj_physical_in_place_and_svd_out_reach_the_fallback():
    # Their composite kernels call a DispatchStub for the device: an INTERNAL ASSERT without a route.
    a = torch.randn(3, 3, dtype=torch.complex64)
    d = a.to("dml")
    d.conj_physical_()
    assert torch.equal(d.cpu(), a.conj_physical())
    real = torch.randn(4, device="dml")
    with torch_dml.strict():
        assert real.conj_physical_() is real  # a no-op for real tensors, natively
    U, S, V = (torch.empty(0, dtype=t, device="dml") for t in (torch.complex64, torch.float32, torch.complex64))
    torch.svd(a.to("dml"), out=(U, S, V))
    torch.testing.assert_close(S.cpu(), torch.svd(a).S, rtol=1e-5, atol=1e-5)


def test_sparse_tensors_are_a_clear_error():
    dense = torch.eye(3)
    with pytest.raises(NotImplementedError, match="sparse tensors are not supported on dml"):
        dense.to_sparse().to("dml") + 1


def test_mode_with_out_runs_on_the_fallback():
    # mode.values' composite kernel accepts only CPU, CUDA and XPU tensors.
    x = torch.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]])
    values = torch.empty(0, device="dml")
    indices = torch.empty(0, dtype=torch.long, device="dml")
    torch.mode(x.to("dml"), 1, out=(values, indices))
    want = torch.mode(x, 1)
    assert torch.equal(values.cpu(), want.values) and torch.equal(indices.cpu(), want.indices)
