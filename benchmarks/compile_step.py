"""python -m benchmarks.compile_step [--steps N] [--models a,b]: kernels launched and time per training step
(forward + backward) on dml, eager against torch.compile with stage one (every ATen op an eager kernel,
TORCH_DML_INDUCTOR_WGSL=0) and with generated WGSL for fused pointwise nodes (the default)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
import torch_dml
from torch import nn

from benchmarks import zoo


def _block() -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """The zoo's GPT block (pre-norm causal attention, GELU MLP) on a (4, 64, 64) batch."""
    block = zoo.TransformerBlock(64, 4, causal=True)
    x = torch.randn(4, 64, 64, generator=torch.Generator().manual_seed(0)).to("dml")
    return block.to("dml"), lambda module: module(x).square().mean()


def _mlp() -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """A GELU MLP with a residual, tanh head, on a (256, 128) batch."""
    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.up, self.down = nn.Linear(128, 512), nn.Linear(512, 128)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(x + self.down(nn.functional.gelu(self.up(x))) * 0.5)

    x = torch.randn(256, 128, generator=torch.Generator().manual_seed(0)).to("dml")
    return MLP().to("dml"), lambda module: (module(x) - 0.1).square().mean()


def _gpt() -> tuple[nn.Module, Callable[[nn.Module], torch.Tensor]]:
    """The zoo's whole GPT (two blocks, embeddings, tied head) and its next-token loss."""
    model = zoo.BY_NAME["gpt"]
    batch = tuple(t.to("dml") for t in model.inputs(torch.Generator().manual_seed(1)))
    torch.manual_seed(0)
    return model.build().to("dml"), lambda module: model.loss(module, batch)


MODELS = {"gpt-block": _block, "mlp": _mlp, "gpt": _gpt}


def measure(name: str, mode: str, steps: int) -> tuple[int, int, float]:
    """(kernels per step, generated kernels per step, median ms per step) after an untimed first step."""
    from torch_dml.compile import config

    torch._dynamo.reset()
    config.wgsl = mode == "wgsl"
    torch.manual_seed(0)
    module, loss = MODELS[name]()
    run = module if mode == "eager" else torch.compile(module)

    def step() -> None:
        module.zero_grad(set_to_none=True)
        loss(run).backward()

    step()
    torch.dml.synchronize()
    dispatched, generated = torch_dml._C._stream_counters(0)[0], torch_dml._C._generated_launches()
    step()
    torch.dml.synchronize()
    kernels = torch_dml._C._stream_counters(0)[0] - dispatched
    generated = torch_dml._C._generated_launches() - generated
    times = []
    for _ in range(steps):
        torch.dml.synchronize()
        started = time.perf_counter()
        step()
        torch.dml.synchronize()
        times.append(time.perf_counter() - started)
    return kernels, generated, sorted(times)[len(times) // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compile_step", description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    torch._inductor.config.fx_graph_cache = False   # every run compiles: a cache hit would measure older code
    torch._functorch.config.enable_autograd_cache = False
    # What the first compile of a process does when Inductor's caches are on (they register dml before
    # tracing); with them off, registration would wait until the first graph is traced.
    import torch_dml.compile
    torch_dml.compile.register()
    print(f"adapter: {torch.dml.get_device_name(0)}")
    print(f"{'model':10} {'mode':9} {'kernels/step':>12} {'generated':>9} {'ms/step':>8}")
    for name in args.models.split(","):
        for mode in ("eager", "stage-one", "wgsl"):
            kernels, generated, ms = measure(name, mode, args.steps)
            print(f"{name:10} {mode:9} {kernels:12d} {generated:9d} {ms:8.2f}", flush=True)


if __name__ == "__main__":
    main()
