"""``torch.compile(model)`` with no arguments (Inductor) on dml: models from the zoo train one step and
evaluate as they do eagerly on dml, shapes that change recompile once into a dynamic graph, the compiled
graph calls dml's ATen kernels, the loop nodes Inductor makes itself compute what the CPU computes, and
``import torch_dml`` does not import Inductor."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.testing import CompileCounterWithBackend
from torch._inductor.utils import run_and_get_code

from benchmarks import zoo

# A few of the zoo's models: a GPT block (attention backward makes Inductor write loop nodes of its
# own), a ResNet (convolutions, batch norm's running statistics written back into the module).
# Compiling one takes ten to twenty seconds on two CPU cores.
MODELS = ["gpt", "resnet"]


@pytest.fixture(autouse=True)
def fresh_compiler() -> Iterator[None]:
    """Every test compiles for real: Inductor's on-disk caches are shared by every process on the
    machine, and a hit skips the passes under test."""
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        yield
    torch._dynamo.reset()


def _train_step(model: zoo.Model, module: torch.nn.Module, parameters: torch.nn.Module,
                batch: tuple[torch.Tensor, ...]) -> tuple[float, dict[str, torch.Tensor]]:
    loss = model.loss(module, batch)
    loss.backward()
    return loss.item(), {name: p.grad.cpu() for name, p in parameters.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_trains_compiled_like_eager(name: str, dml: torch.device) -> None:
    model = zoo.BY_NAME[name]
    batch = tuple(t.to(dml) for t in model.inputs(torch.Generator().manual_seed(1)))
    torch.manual_seed(0)
    eager = model.build().to(dml)
    torch.manual_seed(0)
    compiled_module = model.build().to(dml)
    compiled = torch.compile(compiled_module)

    eager_loss, eager_grads = _train_step(model, eager, eager, batch)
    loss, grads = _train_step(model, compiled, compiled_module, batch)

    assert loss == pytest.approx(eager_loss, rel=1e-5, abs=1e-6)
    assert grads.keys() == eager_grads.keys()
    for key, grad in eager_grads.items():
        torch.testing.assert_close(grads[key], grad, rtol=1e-4, atol=1e-5, msg=lambda m, k=key: f"grad {k}: {m}")
    for key, value in eager.state_dict().items():   # batch norm's running statistics, written by the graph
        torch.testing.assert_close(compiled_module.state_dict()[key].cpu(), value.cpu(), rtol=1e-4, atol=1e-5)

    eager.eval()
    compiled_module.eval()
    with torch.no_grad():
        inputs = model.eval_inputs(batch)
        torch.testing.assert_close(compiled(*inputs).cpu(), eager(*inputs).cpu(), rtol=1e-4, atol=1e-5)


def test_changing_shapes_recompile_once_into_a_dynamic_graph(dml: torch.device) -> None:
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16)).to(dml)
    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(mlp, backend=counter)
    for rows in (2, 3, 5, 7):
        x = torch.randn(rows, 8, generator=torch.Generator().manual_seed(rows)).to(dml)
        torch.testing.assert_close(compiled(x).detach().cpu(), mlp(x).detach().cpu(), rtol=1e-5, atol=1e-6)
    # The first shape compiles a static graph, the second a dynamic one that serves every later size.
    assert counter.frame_count == 2


def test_compiled_graph_calls_dml_aten_kernels(dml: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    """With WGSL generation off, every ATen op is a call of its eager kernel (stage one)."""
    from torch_dml.compile import config

    monkeypatch.setattr(config, "wgsl", False)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(dml)
    x = torch.randn(3, 8).to(dml)
    with torch.no_grad():
        out, (code, *_) = run_and_get_code(torch.compile(mlp), x)
        torch.testing.assert_close(out.cpu(), mlp(x).cpu())
    assert "torch.ops.aten.addmm.default" in code and "torch.ops.aten.relu.default" in code
    assert "dml_eager_kernel" not in code   # nothing left for the loop-node path


def test_announces_itself_once(dml: torch.device, caplog: pytest.LogCaptureFixture) -> None:
    from torch_dml.compile import fallback_pass

    fallback_pass._announced = False
    with caplog.at_level(logging.INFO, logger="torch_dml.compile"):
        torch.compile(lambda x: x.sin() + 1)(torch.ones(4).to(dml))
        torch.compile(lambda x: x.cos() * 2)(torch.ones(5).to(dml))
    lines = [r.getMessage() for r in caplog.records if r.name == "torch_dml.compile"]
    assert len(lines) == 1, lines
    assert "torch.compile on dml" in lines[0] and "eager kernel" in lines[0]


def _many_loop_kinds(x: torch.Tensor, rows: torch.Tensor, table: torch.Tensor) -> tuple[torch.Tensor, ...]:
    variance, mean = torch.var_mean(x, dim=1)
    return (
        torch.softmax(x * 2 + 1, dim=-1),        # pointwise, max and sum reductions
        F.pad(x, (1, 2)),                         # masked reads
        variance, mean,                           # welford reduction
        x.argmax(dim=-1),
        table[rows],                              # indirect indexing
        torch.cat([x, x.exp()], dim=0),
        (x > 0).any(dim=1),
        x.transpose(0, 1).contiguous(),           # strided copy
        x.sum() + x.amax(),
        x[:, ::2] * 3,
    )


@pytest.mark.parametrize("wgsl", [False, True], ids=["eager-ops", "wgsl"])
def test_loop_nodes_compute_what_the_cpu_computes(dml: torch.device, monkeypatch: pytest.MonkeyPatch,
                                                  wgsl: bool) -> None:
    """With the pass that sends ATen ops to eager kernels switched off, Inductor lowers every op to loop
    nodes; each must run, as eager ops or (where it can) as a generated WGSL kernel, to the CPU's numbers."""
    from torch_dml.compile import config, fallback_pass

    monkeypatch.setattr(config, "wgsl", wgsl)
    monkeypatch.setattr(fallback_pass.EagerKernelsPass, "__call__", lambda self, gm: None)
    g = torch.Generator().manual_seed(0)
    x, table, rows = torch.randn(4, 6, generator=g), torch.randn(5, 3, generator=g), torch.tensor([0, 3, 1, 3])
    expected = _many_loop_kinds(x, rows, table)
    actual, (code, *_) = run_and_get_code(torch.compile(_many_loop_kinds), x.to(dml), rows.to(dml), table.to(dml))
    assert "dml_eager_kernel" in code
    assert ("dml_wgsl_kernel" in code) == wgsl
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5, msg=lambda m, i=index: f"output {i}: {m}")


def test_import_leaves_inductor_unloaded() -> None:
    """Registration with Inductor waits until Inductor asks for it: importing it costs seconds."""
    probe = "import sys, torch, torch_dml; print('torch._inductor' in sys.modules, 'torch._dynamo' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"], result.stdout + result.stderr


def test_layer_norm_stays_one_eager_kernel(dml: torch.device) -> None:
    """Layer norm forward and backward are single fused kernels on dml; Inductor's decomposition (reductions
    that run as several eager ops each) is skipped for dml tensors."""
    import torch_dml.compile

    torch_dml.compile.register()   # before tracing, as Inductor's caches make it happen by default
    torch.manual_seed(0)
    norm = torch.nn.LayerNorm(24).to(dml)
    x = torch.randn(5, 24).to(dml).requires_grad_()
    _, codes = run_and_get_code(lambda: torch.compile(norm)(x).square().sum().backward())
    assert "aten.native_layer_norm.default" in codes[0]
    assert "aten.native_layer_norm_backward.default" in codes[1]
    grads = [t.grad.cpu() for t in (x, norm.weight, norm.bias)]
    for t in (x, norm.weight, norm.bias):
        t.grad = None
    norm(x).square().sum().backward()
    for got, t in zip(grads, (x, norm.weight, norm.bias), strict=True):
        torch.testing.assert_close(got, t.grad.cpu(), rtol=1e-5, atol=1e-5)
