"""What is measured: each case builds its inputs on a device and returns the callable to time plus the
work it does (bytes moved or floating-point operations), so rows compare across devices."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F


@dataclass
class Case:
    suite: str
    name: str
    size: str
    unit: str                      # "GB/s", "TFLOP/s", "us/op", "ms/step"
    make: Callable[[str], Callable[[], object]]
    work: float                    # bytes or FLOPs per call (0 for latency rows)
    inner: int = 1                 # calls per synchronisation
    accelerator_only: bool = False # host <-> device copies mean nothing on the CPU
    host_only: bool = False        # the calling thread's CPU time until the sync (host cost), not wall time
    peak: str = ""                 # the nominal figure it is held to (benchmarks/peaks.py); "" by its unit


def _elementwise(quick: bool) -> Iterator[Case]:
    sizes = [1 << 10, 1 << 16, 1 << 20] if quick else [1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24, 1 << 26]
    for n in sizes:
        for name, fn in (("add", torch.add), ("mul", torch.mul)):
            def make(device: str, n: int = n, fn: Callable = fn) -> Callable[[], object]:
                a, b = torch.rand(n, device=device), torch.rand(n, device=device)
                return lambda: fn(a, b)
            yield Case("elementwise", name, str(n), "GB/s", make, 12.0 * n)
        def make_exp(device: str, n: int = n) -> Callable[[], object]:
            a = torch.rand(n, device=device)
            return lambda: torch.exp(a)
        yield Case("elementwise", "exp", str(n), "GB/s", make_exp, 8.0 * n)
        def make_strided(device: str, n: int = n) -> Callable[[], object]:
            a = torch.rand(2 * n, device=device)[::2]
            return lambda: a.contiguous()
        yield Case("elementwise", "copy strided", str(n), "GB/s", make_strided, 8.0 * n)


def _reductions(quick: bool) -> Iterator[Case]:
    sizes = [1 << 16, 1 << 20] if quick else [1 << 16, 1 << 20, 1 << 24, 1 << 26]
    for n in sizes:
        for name, fn in (("sum", lambda t: t.sum()), ("amax", lambda t: t.amax()), ("mean", lambda t: t.mean()),
                         ("argmax", lambda t: t.argmax()), ("var", lambda t: t.var()),
                         ("sum last dim", lambda t: t.view(-1, 1024).sum(-1))):
            def make(device: str, n: int = n, fn: Callable = fn) -> Callable[[], object]:
                a = torch.rand(n, device=device)
                return lambda: fn(a)
            yield Case("reduction", name, str(n), "GB/s", make, 4.0 * n)
    # Row kernels: each row read once and written once is 8 bytes per float32 element.
    shapes = [(256, 1024)] if quick else [(64, 1024), (4096, 1024), (4096, 4096)]
    for rows, length in shapes:
        for name, fn in (("softmax", lambda t: torch.softmax(t, -1)),
                         ("layer_norm", lambda t: F.layer_norm(t, (t.shape[-1],)))):
            def make_row(device: str, fn: Callable = fn, rows: int = rows, length: int = length) -> Callable[[], object]:
                a = torch.rand(rows, length, device=device)
                return lambda: fn(a)
            yield Case("reduction", name, f"{rows}x{length}", "GB/s", make_row, 8.0 * rows * length)
    # Softmax over the channels of an NCHW tensor: a dim that is not the last.
    batch = 8 if quick else 32
    def make_channels(device: str, batch: int = batch) -> Callable[[], object]:
        a = torch.rand(batch, 256, 32, 32, device=device)
        return lambda: torch.softmax(a, 1)
    yield Case("reduction", "softmax dim 1", f"{batch}x256x32x32", "GB/s", make_channels, 8.0 * batch * 256 * 32 * 32)
    # ResNet's stem pool (3x3, stride 2, pad 1): the forward reads the input and writes values and int64
    # indices; the backward reads the gradient and indices and writes the input's gradient.
    batch = 2 if quick else 32
    image, pooled = batch * 64 * 112 * 112, batch * 64 * 56 * 56
    def make_pool(device: str, batch: int = batch) -> Callable[[], object]:
        a = torch.rand(batch, 64, 112, 112, device=device)
        return lambda: F.max_pool2d(a, 3, 2, 1, return_indices=True)
    yield Case("reduction", "max_pool2d 3x3/2", f"{batch}x64x112x112", "GB/s", make_pool, 4.0 * image + 12.0 * pooled)
    def make_pool_backward(device: str, batch: int = batch) -> Callable[[], object]:
        a = torch.rand(batch, 64, 112, 112, device=device)
        _, indices = F.max_pool2d(a, 3, 2, 1, return_indices=True)
        grad = torch.rand(batch, 64, 56, 56, device=device)
        return lambda: torch.ops.aten.max_pool2d_with_indices_backward(grad, a, [3, 3], [2, 2], [1, 1], [1, 1], False,
                                                                       indices)
    yield Case("reduction", "max_pool2d 3x3/2 backward", f"{batch}x64x112x112", "GB/s", make_pool_backward,
               4.0 * image + 12.0 * pooled)


def _gemm(quick: bool) -> Iterator[Case]:
    shapes = [(256, 256, 256), (512, 512, 512)] if quick else [
        (256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 64, 8192), (64, 8192, 64)]
    dtypes = [torch.float32] if quick else [torch.float32, torch.float16, torch.bfloat16]
    for dtype in dtypes:
        for m, k, n in shapes:
            def make(device: str, m: int = m, k: int = k, n: int = n, dtype: torch.dtype = dtype) -> Callable[[], object]:
                a = torch.rand(m, k, device=device).to(dtype)
                b = torch.rand(k, n, device=device).to(dtype)
                return lambda: a @ b
            name = str(dtype).removeprefix("torch.")
            yield Case("gemm", f"mm {name}", f"{m}x{k}x{n}", "TFLOP/s", make, 2.0 * m * k * n, peak=name)


def _overhead(quick: bool) -> Iterator[Case]:
    # Host cost per op: a chain of dependent tiny adds, synchronised once at the end.
    def make_chain(device: str) -> Callable[[], object]:
        a = torch.zeros(16, device=device)
        b = torch.ones(16, device=device)
        def chain() -> object:
            for _ in range(1000):
                a.add_(b)
            return a
        return chain
    yield Case("overhead", "1000 tiny add_", "16", "us/op", make_chain, 1000.0)
    # The host's share alone: Python, dispatcher, our recording and wgpu's, without the wait for the
    # device (the per-dispatch host cost target is about this figure).
    yield Case("overhead", "1000 tiny add_, host CPU time", "16", "us/op", make_chain, 1000.0, host_only=True)
    # The round trip a training loop's `loss.item()` pays: record, submit, wait, read one element back.
    def make_item(device: str) -> Callable[[], object]:
        a = torch.zeros(16, device=device)
        b = torch.ones(16, device=device)
        def round_trips() -> object:
            for _ in range(20):
                a.add_(b)[3].item()
            return a
        return round_trips
    yield Case("overhead", "tiny add_ + .item()", "16", "us/op", make_item, 20.0)
    for n in ([1 << 20] if quick else [1 << 20, 1 << 26]):
        def make_h2d(device: str, n: int = n) -> Callable[[], object]:
            host = torch.rand(n)
            return lambda: host.to(device)
        yield Case("copy", "host to device", str(n), "GB/s", make_h2d, 4.0 * n, accelerator_only=True,
                   peak="host link")
        def make_d2h(device: str, n: int = n) -> Callable[[], object]:
            on_device = torch.rand(n, device=device)
            return lambda: on_device.cpu()
        yield Case("copy", "device to host", str(n), "GB/s", make_d2h, 4.0 * n, accelerator_only=True,
                   peak="host link")


def _training(quick: bool) -> Iterator[Case]:
    batch = 32 if quick else 256
    def make_mlp(device: str) -> Callable[[], object]:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x, y = torch.rand(batch, 256, device=device), torch.randint(0, 10, (batch,), device=device)
        def step() -> object:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step
    yield Case("training", "MLP step", f"batch {batch}", "ms/step", make_mlp, 0.0)
    def make_block(device: str) -> Callable[[], object]:
        torch.manual_seed(0)
        block = torch.nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True).to(device)
        opt = torch.optim.SGD(block.parameters(), lr=0.01)
        x = torch.rand(8 if quick else 32, 64, 128, device=device)
        def step() -> object:
            opt.zero_grad()
            out = block(x).square().mean()
            out.backward()
            opt.step()
            return out
        return step
    yield Case("training", "transformer encoder block step", "seq 64, d 128", "ms/step", make_block, 0.0)
    # A recurrent language model's step: nn.LSTM runs one fused cell kernel each way per time step and layer.
    steps, rnn_batch, width = (8, 4, 64) if quick else (35, 32, 256)
    def make_lstm(device: str) -> Callable[[], object]:
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(width, width, num_layers=2).to(device)
        opt = torch.optim.SGD(lstm.parameters(), lr=0.01)
        x = torch.rand(steps, rnn_batch, width, device=device)
        def step() -> object:
            opt.zero_grad()
            out = lstm(x)[0].square().mean()
            out.backward()
            opt.step()
            return out
        return step
    yield Case("training", "2-layer LSTM step", f"{steps} steps, batch {rnn_batch}, {width} units", "ms/step",
               make_lstm, 0.0)


def _optimizer(quick: bool) -> Iterator[Case]:
    """One optimizer step over the 20 tensors of ten linear layers: the default foreach implementation
    against fused=True (`benchmarks/optimizer_step.py` also counts the launches)."""
    width = 64 if quick else 256
    kinds = (("Adam", torch.optim.Adam, {}), ("AdamW", torch.optim.AdamW, {"weight_decay": 0.01}),
             ("SGD momentum", torch.optim.SGD, {"momentum": 0.9}))
    for name, optimizer, extra in kinds:
        for fused in (False, True):
            def make(device: str, optimizer: type = optimizer, extra: dict = extra,
                     fused: bool = fused) -> Callable[[], object]:
                params = optimizer_params(device, width)
                opt = optimizer(params, lr=1e-3, fused=fused, foreach=not fused, **extra)
                return opt.step
            yield Case("optimizer", f"{name} {'fused' if fused else 'foreach'}", f"20 tensors, {width}x{width}",
                       "ms/step", make, 0.0)


def optimizer_params(device: str, width: int, layers: int = 10) -> list[torch.Tensor]:
    """The weights and biases of `layers` width x width linear layers, with gradients."""
    torch.manual_seed(0)
    params = [p.detach().requires_grad_() for _ in range(layers)
              for p in torch.nn.Linear(width, width).to(device).parameters()]
    for p in params:
        p.grad = torch.randn_like(p)
    return params


# Full-size models live in their own file; it imports Case from here, so the import comes after it.
from benchmarks.models import models as _models

SUITES = {"elementwise": _elementwise, "reduction": _reductions, "gemm": _gemm, "overhead": _overhead,
          "training": _training, "optimizer": _optimizer, "models": _models}


# Also timed 20 calls per synchronisation: one call per sync adds a submit and a wait to every call,
# which hides how fast the kernels stream when the queue stays full (issue 16).
BATCHED = {("elementwise", "add"), ("reduction", "sum")}


def cases(quick: bool, suites: list[str]) -> list[Case]:
    chosen = [case for name in suites for case in SUITES[name](quick)]
    return [c for case in chosen
            for c in ([case, replace(case, inner=20)] if (case.suite, case.name) in BATCHED else [case])]
