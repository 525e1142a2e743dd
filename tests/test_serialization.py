"""torch.save / torch.load of dml tensors and modules."""

import io

import torch


def roundtrip(obj, map_location):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, map_location=map_location, weights_only=True)


def test_save_dml_load_dml_and_cpu():
    x = torch.randn(3, 4).to("dml")
    on_dml = roundtrip(x, "dml")
    assert on_dml.device.type == "dml" and torch.equal(on_dml.cpu(), x.cpu())
    on_cpu = roundtrip(x, "cpu")
    assert on_cpu.device.type == "cpu" and torch.equal(on_cpu, x.cpu())
    default = roundtrip(x, None)
    assert default.device == torch.device("dml", 0)


def test_state_dict_round_trip():
    model = torch.nn.Linear(3, 2).to("dml")
    state = roundtrip(model.state_dict(), "dml")
    fresh = torch.nn.Linear(3, 2).to("dml")
    fresh.load_state_dict(state)
    assert torch.equal(fresh.weight.cpu(), model.weight.cpu())


def test_cpu_checkpoint_loads_onto_dml():
    x = torch.arange(5, dtype=torch.int16)
    loaded = roundtrip(x, "dml:0")
    assert loaded.device == torch.device("dml", 0) and torch.equal(loaded.cpu(), x)
