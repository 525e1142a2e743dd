"""The `models` suite: training steps of full-size models, the figures issue 16's model targets are
stated in (ResNet-18 at batch 32 on 224x224 images against CUDA; a GPT-style decoder of 6 layers,
d=512, on 8x256 tokens). The quick profile runs the same code on toy sizes, so a lavapipe run checks
that the rows work; only the full profile (a GPU) says anything about speed.

The ResNet-18 here is the standard architecture (basic blocks, [2, 2, 2, 2], 64 to 512 channels), built
in this file so the suite needs no torchvision."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.suites import Case


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


def resnet18(classes: int = 1000, width: int = 64) -> nn.Module:
    widths = [width, width * 2, width * 4, width * 8]
    layers: list[nn.Module] = [nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                               nn.MaxPool2d(3, 2, 1)]
    cin = width
    for i, cout in enumerate(widths):
        stride = 1 if i == 0 else 2
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


class Decoder(nn.Module):
    """GPT-style: token and position embeddings, pre-norm causal self-attention blocks, tied head."""

    def __init__(self, vocab: int, d: int, heads: int, layers: int, length: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(length, d)
        block = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        length = ids.shape[1]
        h = self.tokens(ids) + self.positions(torch.arange(length, device=ids.device))
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=ids.device)
        h = self.blocks(h, mask=mask, is_causal=True)
        return self.norm(h) @ self.tokens.weight.t()


def _resnet_setup(quick: bool, device: str) -> tuple[nn.Module, torch.Tensor]:
    batch, size, width = (2, 32, 16) if quick else (32, 224, 64)
    torch.manual_seed(0)
    return resnet18(1000, width).to(device), torch.randn(batch, 3, size, size, device=device)


def _resnet_step(quick: bool) -> Callable[[str], Callable[[], object]]:
    def make(device: str) -> Callable[[], object]:
        model, x = _resnet_setup(quick, device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        y = torch.randint(0, 1000, (x.shape[0],), device=device)
        def step() -> object:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step
    return make


def _resnet_inference(quick: bool) -> Callable[[str], Callable[[], object]]:
    def make(device: str) -> Callable[[], object]:
        model, x = _resnet_setup(quick, device)
        model.eval()
        def forward() -> object:
            with torch.no_grad():
                return model(x)
        return forward
    return make


def _decoder_step(quick: bool) -> Callable[[str], Callable[[], object]]:
    vocab, d, heads, layers, batch, length = (256, 64, 4, 2, 2, 32) if quick else (8192, 512, 8, 6, 8, 256)
    def make(device: str) -> Callable[[], object]:
        torch.manual_seed(0)
        model = Decoder(vocab, d, heads, layers, length).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        ids = torch.randint(0, vocab, (batch, length + 1), device=device)
        def step() -> object:
            opt.zero_grad()
            logits = model(ids[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, vocab), ids[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            return loss
        return step
    return make


def models(quick: bool) -> Iterator[Case]:
    image = "batch 2, 32x32, width 16" if quick else "batch 32, 224x224"
    yield Case("models", "ResNet-18 training step (SGD)", image, "ms/step", _resnet_step(quick), 0.0)
    yield Case("models", "ResNet-18 inference", image, "ms/step", _resnet_inference(quick), 0.0)
    tokens = "2 layers d 64, 2x32 tokens" if quick else "6 layers d 512, 8x256 tokens"
    yield Case("models", "GPT-style decoder training step (AdamW)", tokens, "ms/step", _decoder_step(quick), 0.0)
