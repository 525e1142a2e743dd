"""python -m benchmarks.conv_layers [--batch N] [--size S] [--repeats R] [--channels-last] [--no-model|--no-layers]
                                  [--depthwise]

conv2d on dml for the distinct convolution shapes of ResNet-18 (at `size`x`size` input, ImageNet's 224
by default) and one ResNet-18 training step: per shape the forward and the forward + backward times
(median of `repeats`), the dispatches one call records and the bytes it allocates beyond its output
(the peak over the call minus what was allocated before it and what stays after). Numbers on lavapipe
are the CPU's: use them to compare two builds, not adapters.

--depthwise instead times the weight gradient alone (convolution_backward with output_mask (False, True,
False)) of depthwise layers of MobileNet / ConvNeXt shapes, at `batch`, in float32 and float16."""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
import torch_dml

from benchmarks import suites  # noqa: F401  (first: benchmarks.models imports it back)
from benchmarks.models import resnet18
from benchmarks.timing import measure


def resnet18_convs(size: int) -> list[tuple[str, int, int, int, int, int, int]]:
    """(name, in channels, out channels, input side, kernel, stride, padding) of each distinct conv."""
    s4, s8, s16, s32 = size // 4, size // 8, size // 16, size // 32
    return [
        ("stem 7x7/2", 3, 64, size, 7, 2, 3),
        ("layer1 3x3", 64, 64, s4, 3, 1, 1),
        ("layer2 3x3/2", 64, 128, s4, 3, 2, 1),
        ("layer2 1x1/2", 64, 128, s4, 1, 2, 0),
        ("layer2 3x3", 128, 128, s8, 3, 1, 1),
        ("layer3 3x3/2", 128, 256, s8, 3, 2, 1),
        ("layer3 3x3", 256, 256, s16, 3, 1, 1),
        ("layer4 3x3/2", 256, 512, s16, 3, 2, 1),
        ("layer4 3x3", 512, 512, s32, 3, 1, 1),
    ]


def counters() -> tuple[int, int]:
    return torch_dml._C._stream_counters(0)


def profile(fn) -> tuple[int, int]:
    """Dispatches recorded by one call of fn, and the bytes it allocated beyond what it leaves."""
    torch_dml.synchronize()
    torch_dml.reset_peak_memory_stats()
    start = counters()[0]
    result = fn()
    dispatches = counters()[0] - start
    torch_dml.synchronize()
    scratch = torch_dml.max_memory_allocated() - torch_dml.memory_allocated()
    del result
    return dispatches, max(scratch, 0)


def time_conv(x: torch.Tensor, w: torch.Tensor, stride: int, pad: int, repeats: int) -> str:
    """One row: forward and forward + backward times, dispatches and scratch of each."""
    grad = torch.randn_like(F.conv2d(x.detach(), w.detach(), None, stride, pad))
    wrt = (x, w) if x.requires_grad else (w,)

    def forward() -> torch.Tensor:
        with torch.no_grad():
            return F.conv2d(x, w, None, stride, pad)

    def both() -> object:
        return torch.autograd.grad(F.conv2d(x, w, None, stride, pad), wrt, grad)

    fwd = measure(forward, "dml", repeats=repeats, warmup=1)
    full = measure(both, "dml", repeats=repeats, warmup=1)
    fwd_dispatches, fwd_scratch = profile(forward)
    y = F.conv2d(x, w, None, stride, pad)
    bwd_dispatches, bwd_scratch = profile(lambda: torch.autograd.grad(y, wrt, grad, retain_graph=True))
    return (f"{fwd.median_s * 1e3:8.1f} {full.median_s * 1e3:11.1f} {fwd_dispatches:8d} {bwd_dispatches:8d} "
            f"{fwd_scratch / 2**20:14.2f} {bwd_scratch / 2**20:14.2f}")


def depthwise_convs() -> list[tuple[str, int, int, int, int, int, int]]:
    """(name, channels, channel multiplier, input side, kernel, stride, padding) of depthwise layers."""
    return [
        ("dw 64@56 3x3", 64, 1, 56, 3, 1, 1),
        ("dw 64@56 3x3 x2", 64, 2, 56, 3, 1, 1),
        ("dw 128@28 3x3/2", 128, 1, 28, 3, 2, 1),
        ("dw 256@14 7x7", 256, 1, 14, 7, 1, 3),
        ("dw 256@14 7x7 x2", 256, 2, 14, 7, 1, 3),
    ]


def depthwise_weight_grad_row(x: torch.Tensor, w: torch.Tensor, stride: int, pad: int, repeats: int) -> str:
    """The weight gradient's time, dispatches and scratch for one depthwise layer."""
    channels = x.shape[1]
    grad = torch.randn_like(F.conv2d(x, w, None, stride, pad, 1, channels))

    def weight_grad() -> object:
        return torch.ops.aten.convolution_backward(grad, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0],
                                                   channels, [False, True, False])[1]

    timing = measure(weight_grad, "dml", repeats=repeats, warmup=1)
    dispatches, scratch = profile(weight_grad)
    return f"{timing.median_s * 1e3:8.1f} {dispatches:5d} {scratch / 2**20:10.2f}"


def time_depthwise_weight_grad(batch: int, repeats: int, fmt: torch.memory_format) -> None:
    print(f"{'depthwise grad_weight':22s} {'dtype':>8s} {'ms':>8s} {'disp':>5s} {'scratch MB':>10s}")
    for name, channels, mult, side, k, stride, pad in depthwise_convs():
        for dtype in (torch.float32, torch.float16):
            x = torch.randn(batch, channels, side, side).to(dtype).to("dml").to(memory_format=fmt)
            w = torch.randn(channels * mult, 1, k, k).mul(0.1).to(dtype).to("dml")
            print(f"{name:22s} {str(dtype).split('.')[-1]:>8s} {depthwise_weight_grad_row(x, w, stride, pad, repeats)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--no-model", action="store_true", help="only the per-conv rows")
    parser.add_argument("--no-layers", action="store_true", help="only the training step")
    parser.add_argument("--depthwise", action="store_true", help="only depthwise layers' weight gradients")
    args = parser.parse_args()
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    torch.manual_seed(0)
    if args.depthwise:
        time_depthwise_weight_grad(args.batch, args.repeats, fmt)
        return
    print(f"batch {args.batch}, {args.size}x{args.size}, {'channels_last' if args.channels_last else 'NCHW'}")
    print(f"{'conv':14s} {'fwd ms':>8s} {'fwd+bwd ms':>11s} {'fwd disp':>8s} {'bwd disp':>8s} "
          f"{'fwd scratch MB':>14s} {'bwd scratch MB':>14s}")
    for name, cin, cout, side, k, stride, pad in [] if args.no_layers else resnet18_convs(args.size):
        # The stem's input is the image, which needs no gradient in training.
        x = torch.randn(args.batch, cin, side, side).to("dml").to(memory_format=fmt).requires_grad_(cin != 3)
        w = torch.randn(cout, cin, k, k).mul(0.05).to("dml").requires_grad_()
        print(f"{name:14s} {time_conv(x, w, stride, pad, args.repeats)}")
    if args.no_model:
        return
    model = resnet18(1000, 64).to("dml").to(memory_format=fmt)
    x = torch.randn(args.batch, 3, args.size, args.size).to("dml").to(memory_format=fmt)
    y = torch.randint(0, 1000, (args.batch,)).to("dml")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    timing = measure(step, "dml", repeats=args.repeats, warmup=1)
    dispatches, _ = profile(step)
    print(f"ResNet-18 training step: {timing.median_s * 1e3:.0f} ms, {dispatches} dispatches, "
          f"fallbacks {torch_dml.fallback_counts()}")


if __name__ == "__main__":
    main()
