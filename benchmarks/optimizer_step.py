"""python -m benchmarks.optimizer_step [--width N] [--layers N] [--steps N]: kernel launches and time per
optimizer step on dml, foreach (torch.optim's default) against fused=True, for the weights and biases of
`--layers` linear layers (ten: 20 tensors)."""

from __future__ import annotations

import argparse
import time

import torch
import torch_dml

from benchmarks.suites import optimizer_params

KINDS = (("Adam", torch.optim.Adam, {}), ("AdamW", torch.optim.AdamW, {"weight_decay": 0.01}),
         ("SGD momentum", torch.optim.SGD, {"momentum": 0.9}))


def measure(optimizer: type, extra: dict, fused: bool, width: int, layers: int, steps: int) -> tuple[int, float]:
    """(launches per step, median ms per step), the state created by a first, untimed step."""
    params = optimizer_params("dml", width, layers)
    opt = optimizer(params, lr=1e-3, fused=fused, foreach=not fused, **extra)
    opt.step()
    torch.dml.synchronize()
    before = torch_dml._C._stream_counters(0)[0]
    opt.step()
    launches = torch_dml._C._stream_counters(0)[0] - before
    times = []
    for _ in range(steps):
        torch.dml.synchronize()
        started = time.perf_counter()
        opt.step()
        torch.dml.synchronize()
        times.append(time.perf_counter() - started)
    return launches, sorted(times)[len(times) // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.optimizer_step", description=__doc__)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    print(f"{torch_dml.device_name(0)}; {2 * args.layers} tensors, "
          f"{args.layers * (args.width + 1) * args.width} parameters")
    print(f"{'optimizer':<14} {'mode':<8} {'launches/step':>13} {'ms/step':>9}")
    for name, optimizer, extra in KINDS:
        for fused in (False, True):
            launches, ms = measure(optimizer, extra, fused, args.width, args.layers, args.steps)
            print(f"{name:<14} {'fused' if fused else 'foreach':<8} {launches:>13} {ms:>9.2f}")


if __name__ == "__main__":
    main()
