"""torch.autocast("dml"): matmul-class ops in the low-precision dtype, sensitive ops in float32."""

import torch


def test_autocast_dtype_default_and_policies():
    a = torch.randn(4, 4, device="dml")
    b = torch.randn(4, 4, device="dml")
    with torch.autocast("dml", dtype=torch.float16):
        assert torch.is_autocast_enabled("dml")
        product = a @ b
        assert product.dtype == torch.float16
        assert torch.mm(a, b).dtype == torch.float16
        assert torch.exp(product).dtype == torch.float32
        assert (a + b).dtype == torch.float32  # no policy: runs as given
    expected = (a.cpu().half().float() @ b.cpu().half().float())
    assert torch.allclose(product.float().cpu(), expected, atol=1e-2, rtol=1e-2)


def test_autocast_bfloat16():
    a = torch.randn(3, 5, device="dml")
    w = torch.randn(2, 5, device="dml")
    with torch.autocast("dml", dtype=torch.bfloat16):
        assert torch.nn.functional.linear(a, w).dtype == torch.bfloat16
