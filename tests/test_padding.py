"""Reflection and replication padding (1-d, 2-d, 3-d) natively (strict mode), forward and backward:
the forward gathers along each padded dim, the backward sums the gradients of every output that read
one input position in position order (deterministic), equal to the CPU."""

import pytest
import torch
import torch.nn.functional as F
import torch_dml
from conftest import make_tensor

pytestmark = pytest.mark.usefixtures("strict")

CASES = [
    ("reflect", (3, 9), (2, 3)),
    ("reflect", (2, 3, 6, 7), (2, 1, 3, 0)),
    ("reflect", (3, 4, 5, 6), (1, 2, 3, 1, 0, 2)),
    ("replicate", (2, 3, 9), (4, 0)),
    ("replicate", (3, 5, 7), (2, 1, 3, 6)),
    ("replicate", (1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 3)),
]


@pytest.mark.parametrize("mode,shape,pad", CASES, ids=lambda c: str(c))
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.uint8], ids=str
)
def test_forward_equals_cpu(mode, shape, pad, dtype):
    x = make_tensor(shape, dtype)
    expected = F.pad(x, pad, mode=mode)
    actual = F.pad(x.to("dml"), pad, mode=mode)
    assert torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("mode,shape,pad", CASES, ids=lambda c: str(c))
def test_backward_equals_cpu(mode, shape, pad):
    x = make_tensor(shape, torch.float64)
    grad = make_tensor(F.pad(x, pad, mode=mode).shape, torch.float64, seed=1)
    cpu = x.clone().requires_grad_()
    F.pad(cpu, pad, mode=mode).backward(grad)
    dml = x.to("dml").requires_grad_()
    F.pad(dml, pad, mode=mode).backward(grad.to("dml"))
    # float64 sums of at most a few terms in the same order: equal to the CPU's up to its own order
    torch.testing.assert_close(dml.grad.cpu(), cpu.grad, rtol=1e-15, atol=1e-12)


def test_empty_batch_and_cropping():
    for x, pad in ((torch.empty(0, 3, 3), (1, 2)), (torch.randn(1, 3, 4, 4), (-1, 1, -2, 1))):
        assert torch.equal(F.pad(x.to("dml"), pad, mode="reflect").cpu(), F.pad(x, pad, mode="reflect"))


def test_a_conv_net_with_reflection_padding_trains_natively():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.ReflectionPad2d(1), torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
    net_dml = torch.nn.Sequential(torch.nn.ReflectionPad2d(1), torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).to("dml")
    net_dml.load_state_dict(net.state_dict())
    x = torch.randn(2, 3, 8, 8)
    net(x).square().sum().backward()
    net_dml(x.to("dml")).square().sum().backward()
    torch.testing.assert_close(net_dml[1].weight.grad.cpu(), net[1].weight.grad, rtol=1e-4, atol=1e-4)


def test_padding_the_cpu_refuses_raises_its_error():
    x = torch.ones(1, 2, 3, device="dml")
    with torch_dml.strict(False), pytest.raises(RuntimeError, match="[Pp]adding size should be less than"):
        F.pad(x, (3, 0), mode="reflect")
