"""Random numbers on dml: per-device Philox generators, reproducible under torch.dml.manual_seed."""

import pytest
import torch
import torch_dml


def test_manual_seed_reproduces():
    torch.dml.manual_seed(123)
    a = torch.rand(16, device="dml").cpu()
    b = torch.randn(16, device="dml").cpu()
    torch.dml.manual_seed(123)
    assert torch.equal(torch.rand(16, device="dml").cpu(), a)
    assert torch.equal(torch.randn(16, device="dml").cpu(), b)
    torch.dml.manual_seed(124)
    assert not torch.equal(torch.rand(16, device="dml").cpu(), a)


def test_dml_seed_is_independent_of_cpu_seed():
    torch.dml.manual_seed(5)
    torch.default_generator.manual_seed(1)
    a = torch.rand(8, device="dml").cpu()
    torch.dml.manual_seed(5)
    torch.default_generator.manual_seed(2)
    assert torch.equal(torch.rand(8, device="dml").cpu(), a)


def test_torch_manual_seed_seeds_dml():
    torch.manual_seed(7)
    assert torch.dml.initial_seed() == 7
    a = torch.rand(4, device="dml").cpu()
    torch.manual_seed(7)
    assert torch.equal(torch.rand(4, device="dml").cpu(), a)


def test_rng_state_round_trip():
    torch.dml.manual_seed(9)
    torch.rand(3, device="dml")
    state = torch.dml.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() == 16
    a = torch.rand(5, device="dml").cpu()
    torch.dml.set_rng_state(state)
    assert torch.equal(torch.rand(5, device="dml").cpu(), a)
    with pytest.raises(RuntimeError, match="RNG state"):
        torch.dml.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def test_explicit_generator():
    g = torch.Generator(device="dml")
    assert g.device == torch.device("dml", 0)
    g.manual_seed(42)
    a = torch.rand(6, device="dml", generator=g).cpu()
    g.manual_seed(42)
    assert torch.equal(torch.rand(6, device="dml", generator=g).cpu(), a)


def test_fork_rng_restores_state():
    torch.dml.manual_seed(3)
    with torch.random.fork_rng(device_type="dml"):
        torch.rand(4, device="dml")
    after = torch.rand(4, device="dml").cpu()
    torch.dml.manual_seed(3)
    assert torch.equal(torch.rand(4, device="dml").cpu(), after)
    assert torch_dml.device_count() >= 1
