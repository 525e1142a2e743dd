"""Real model architectures, small enough to train a few steps on a software adapter: what the model-zoo
tests (tests/test_model_zoo.py) train against the CPU and what `python -m benchmarks.zoo_report` counts
native ops and fallbacks for. Each is the architecture's real shape (the layers, their order, the ops
they call), scaled down in width, depth and resolution.

A model is built on the CPU from a seed; `Model.inputs` makes the batch and `Model.loss` the scalar a
training step minimises, so a CPU copy and a dml copy train from the same start.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Model:
    name: str
    family: str            # what the architecture exercises, for the docs page
    build: Callable[[], nn.Module]
    inputs: Callable[[torch.Generator], tuple[torch.Tensor, ...]]
    loss: Callable[[nn.Module, tuple[torch.Tensor, ...]], torch.Tensor]
    optimizer: str = "sgd"  # "sgd" (momentum) or "adamw"
    # The forward arguments of an eval-mode run on a training batch (default: all but the target).
    eval_inputs: Callable[[tuple[torch.Tensor, ...]], tuple[torch.Tensor, ...]] = lambda batch: batch[:-1]


def _classify(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


def _images(n: int, channels: int, size: int, classes: int) -> Callable[[torch.Generator], tuple[torch.Tensor, ...]]:
    def make(g: torch.Generator) -> tuple[torch.Tensor, ...]:
        return torch.randn(n, channels, size, size, generator=g), torch.randint(0, classes, (n,), generator=g)
    return make


def _tokens(n: int, length: int, vocab: int) -> Callable[[torch.Generator], tuple[torch.Tensor, ...]]:
    def make(g: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (torch.randint(0, vocab, (n, length), generator=g),)
    return make


# ---- ResNet: conv, batch norm, ReLU, residual add, max pool, global average pool -------------------

class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)))


def resnet(classes: int = 10) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
        BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))


# ---- MobileNet: depthwise-separable convolutions, ReLU6 --------------------------------------------

def _depthwise_separable(cin: int, cout: int, stride: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU6(),
        nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU6())


def mobilenet(classes: int = 10) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(),
        _depthwise_separable(16, 32, 1), _depthwise_separable(32, 64, 2), _depthwise_separable(64, 64, 1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.0), nn.Linear(64, classes))


# ---- EfficientNet-style: inverted residual (MBConv), SiLU, squeeze-and-excite ----------------------

class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, reduced: int) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(channels, reduced, 1)
        self.expand = nn.Conv2d(reduced, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = x.mean((2, 3), keepdim=True)
        return x * torch.sigmoid(self.expand(F.silu(self.reduce(scale))))


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, expand: int, stride: int) -> None:
        super().__init__()
        mid = cin * expand
        self.block = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
            SqueezeExcite(mid, max(1, cin // 4)),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.block(x)
        return out + x if self.residual else out


def efficientnet(classes: int = 10) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU(),
        MBConv(16, 16, 1, 1), MBConv(16, 24, 4, 2), MBConv(24, 24, 4, 1),
        nn.Conv2d(24, 64, 1, bias=False), nn.BatchNorm2d(64), nn.SiLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))


# ---- UNet: encoder/decoder, max pool, bilinear upsampling, skip concatenation -----------------------

def _double_conv(cin: int, cout: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, classes: int = 3) -> None:
        super().__init__()
        self.down1, self.down2, self.bottom = _double_conv(3, 8), _double_conv(8, 16), _double_conv(16, 32)
        self.up2, self.up1 = _double_conv(32 + 16, 16), _double_conv(16 + 8, 8)
        self.head = nn.Conv2d(8, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        b = self.bottom(F.max_pool2d(d2, 2))
        u2 = self.up2(torch.cat([F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False), d2], 1))
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2, mode="nearest"), d1], 1))
        return self.head(u1)


def _segment(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


def _segmentation_batch(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return torch.randn(2, 3, 16, 16, generator=g), torch.randint(0, 3, (2, 16, 16), generator=g)


# ---- Transformers: ViT, GPT-style decoder, BERT-style encoder ---------------------------------------

class Attention(nn.Module):
    """Multi-head self-attention through F.scaled_dot_product_attention, as current models write it."""

    def __init__(self, dim: int, heads: int, causal: bool) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        n, t, d = x.shape
        q, k, v = self.qkv(x).view(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal and mask is None)
        return self.proj(out.transpose(1, 2).reshape(n, t, d))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, causal: bool) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = Attention(dim, heads, causal)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.attention(self.norm1(x), mask)
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, classes: int = 10, dim: int = 32, patch: int = 4, size: int = 16) -> None:
        super().__init__()
        self.patches = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.position = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(TransformerBlock(dim, 4, causal=False) for _ in range(2))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patches(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.position
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


class GPT(nn.Module):
    """Token and position embeddings, causal blocks under a lower-triangular mask made each forward,
    weight-tied head."""

    def __init__(self, vocab: int = 64, dim: int = 32, length: int = 16) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(length, dim)
        self.blocks = nn.ModuleList(TransformerBlock(dim, 4, causal=True) for _ in range(2))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tokens.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tokens(idx) + self.position(torch.arange(t, device=idx.device))
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=idx.device))
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))


def _all_but_last_token(batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return (batch[0][:, :-1],)


def _next_token(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    (idx,) = batch
    logits = model(idx[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))


class BERT(nn.Module):
    """Token, position and segment embeddings with padding, a padding attention mask, post-norm
    encoder layers (nn.TransformerEncoderLayer, GELU), masked-token head."""

    def __init__(self, vocab: int = 64, dim: int = 32, length: int = 16) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim, padding_idx=0)
        self.position = nn.Embedding(length, dim)
        self.segment = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        positions = torch.arange(t, device=idx.device)
        segments = (positions >= t // 2).long()
        x = self.norm(self.tokens(idx) + self.position(positions) + self.segment(segments))
        return self.head(self.encoder(x, src_key_padding_mask=idx == 0))


def _masked_tokens(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    (idx,) = batch
    masked = idx.clone()
    masked[:, ::4] = 1  # the [MASK] token
    logits = model(masked)
    return F.cross_entropy(logits[:, ::4].reshape(-1, logits.shape[-1]), idx[:, ::4].reshape(-1))


# ---- Recurrent: LSTM language model, GRU classifier -------------------------------------------------

class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.head(self.rnn(self.embed(idx))[0])


class GRUClassifier(nn.Module):
    def __init__(self, features: int = 8, dim: int = 32, classes: int = 5) -> None:
        super().__init__()
        self.rnn = nn.GRU(features, dim, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.rnn(x)[0][:, -1])


def _sequences(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return torch.randn(4, 12, 8, generator=g), torch.randint(0, 5, (4,), generator=g)


# ---- Diffusion-style residual block: group norm, SiLU, timestep embedding, attention-free ------------

class DiffusionBlock(nn.Module):
    def __init__(self, channels: int = 32, groups: int = 8, steps: int = 100) -> None:
        super().__init__()
        self.steps = steps
        self.stem = nn.Conv2d(3, channels, 3, 1, 1)
        self.norm1, self.norm2 = nn.GroupNorm(groups, channels), nn.GroupNorm(groups, channels)
        self.conv1, self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1), nn.Conv2d(channels, channels, 3, 1, 1)
        self.time = nn.Sequential(nn.Linear(channels, channels), nn.SiLU(), nn.Linear(channels, channels))
        self.out = nn.Conv2d(channels, 3, 3, 1, 1)
        self.channels = channels

    def embed_time(self, t: torch.Tensor) -> torch.Tensor:
        half = self.channels // 2
        dtype = self.stem.weight.dtype
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=dtype) / half)
        angles = t.to(dtype)[:, None] * freqs[None]
        return torch.cat([angles.sin(), angles.cos()], 1)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        r = self.conv1(F.silu(self.norm1(h))) + self.time(self.embed_time(t))[:, :, None, None]
        r = self.conv2(F.silu(self.norm2(r)))
        return self.out(h + r)


def _denoise(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    x, noise, t = batch
    return F.mse_loss(model(x + noise, t), noise)


def _noised(batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return batch[0] + batch[1], batch[2]


def _noisy_images(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 3, 16, 16, generator=g), torch.randn(2, 3, 16, 16, generator=g),
            torch.randint(0, 100, (2,), generator=g))


# ---- DCGAN: transposed convolutions, batch norm, LeakyReLU, Tanh, BCE on probabilities -------------

class GAN(nn.Module):
    """A generator and its discriminator; forward gives the discriminator's probabilities for the real
    images and for the generator's, which the discriminator's loss scores (its gradient reaches both)."""

    def __init__(self, noise: int = 16, width: int = 16) -> None:
        super().__init__()
        self.generator = nn.Sequential(
            nn.ConvTranspose2d(noise, 2 * width, 4, 1, 0, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.ConvTranspose2d(2 * width, width, 4, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.ConvTranspose2d(width, 3, 4, 2, 1, bias=False), nn.Tanh())
        self.discriminator = nn.Sequential(
            nn.Conv2d(3, width, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
            nn.Conv2d(width, 2 * width, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * width), nn.LeakyReLU(0.2),
            nn.Conv2d(2 * width, 1, 4, 1, 0, bias=False), nn.Sigmoid(), nn.Flatten())

    def forward(self, noise: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.discriminator(real), self.discriminator(self.generator(noise))])


def _discriminate(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    noise, real = batch
    scores = model(noise, real)
    labels = torch.cat([torch.ones(len(real), 1), torch.zeros(len(noise), 1)]).to(scores)
    return F.binary_cross_entropy(scores, labels)


def _gan_batch(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return torch.randn(4, 16, 1, 1, generator=g), torch.rand(4, 3, 16, 16, generator=g) * 2 - 1


# ---- (2+1)D video classifier: conv3d split into spatial and temporal convolutions, 3-D pools --------

class VideoNet(nn.Module):
    def __init__(self, classes: int = 5, width: int = 16) -> None:
        super().__init__()
        def block(cin: int, cout: int, stride: tuple[int, int, int]) -> nn.Module:
            return nn.Sequential(
                nn.Conv3d(cin, cout, (1, 3, 3), (1, stride[1], stride[2]), (0, 1, 1), bias=False),
                nn.BatchNorm3d(cout), nn.ReLU(),
                nn.Conv3d(cout, cout, (3, 1, 1), (stride[0], 1, 1), (1, 0, 0), bias=False),
                nn.BatchNorm3d(cout), nn.ReLU())
        self.stem = nn.Sequential(nn.Conv3d(3, width, 3, 1, 1, bias=False), nn.BatchNorm3d(width), nn.ReLU(),
                                  nn.MaxPool3d((1, 2, 2)))  # C3D's first pool: space only
        self.blocks = nn.Sequential(block(width, width, (1, 1, 1)), block(width, 2 * width, (2, 2, 2)))
        self.pool = nn.AdaptiveAvgPool3d(1)  # torchvision's video ResNets end so
        self.head = nn.Linear(2 * width, classes)

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.blocks(self.stem(clips))).flatten(1))


def _clips(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return torch.randn(2, 3, 4, 16, 16, generator=g), torch.randint(0, 5, (2,), generator=g)


MODELS = [
    Model("resnet", "conv, batch norm, residual, max/avg pool", resnet, _images(4, 3, 16, 10), _classify),
    Model("mobilenet", "depthwise conv, ReLU6", mobilenet, _images(4, 3, 16, 10), _classify),
    Model("efficientnet", "MBConv, SiLU, squeeze-excite", efficientnet, _images(4, 3, 16, 10), _classify),
    Model("unet", "max pool, bilinear/nearest upsampling, concat", UNet, _segmentation_batch, _segment),
    Model("vit", "patch conv, attention, layer norm, GELU", ViT, _images(2, 3, 16, 10), _classify, "adamw"),
    Model("gpt", "embedding, causal attention, tied head", GPT, _tokens(2, 17, 64), _next_token, "adamw",
          _all_but_last_token),
    Model("bert", "embeddings with padding, padding mask, post-norm encoder", BERT, _tokens(2, 16, 64),
          _masked_tokens, "adamw", lambda batch: batch),
    Model("lstm", "2-layer LSTM language model", LSTMLanguageModel, _tokens(2, 12, 64), _next_token, "sgd",
          _all_but_last_token),
    Model("gru", "bidirectional GRU classifier", GRUClassifier, _sequences, _classify),
    Model("diffusion", "group norm, SiLU, timestep embedding", DiffusionBlock, _noisy_images, _denoise, "adamw",
          _noised),
    Model("dcgan", "transposed conv, LeakyReLU, Tanh, BCE", GAN, _gan_batch, _discriminate, "adamw", lambda batch: batch),
    Model("video", "(2+1)D conv3d, batch norm 3-D, 3-D max/avg pool", VideoNet, _clips, _classify),
]
BY_NAME = {m.name: m for m in MODELS}

# The aten operators each model still runs on the CPU fallback (training, then eval). The target is
# none; tests/test_model_zoo.py fails when a model's set changes either way, so this stays true.
KNOWN_FALLBACKS: dict[str, set[str]] = {
    "resnet": set(),
    "mobilenet": set(),
    "efficientnet": set(),
    "unet": set(),
    "vit": set(),
    "gpt": set(),
    "bert": set(),
    "lstm": set(),
    "gru": set(),
    "diffusion": set(),
    "dcgan": set(),
    "video": set(),
}


def optimizer_for(model: Model, module: nn.Module, kind: str | None = None) -> torch.optim.Optimizer:
    if (kind or model.optimizer) == "adamw":
        return torch.optim.AdamW(module.parameters(), lr=1e-3)
    return torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)


@dataclass
class Trained:
    losses: list[float]
    grads: dict[str, torch.Tensor]      # after the last step, on the CPU
    state: dict[str, torch.Tensor]      # parameters and buffers after training, on the CPU
    eval_output: torch.Tensor           # eval-mode forward on the first batch, on the CPU


def train(model: Model, device: str | torch.device, steps: int, seed: int = 0, optimizer: str | None = None,
          dtype: torch.dtype = torch.float32) -> Trained:
    """Builds the model from `seed` on the CPU, moves it to `device` (its floating tensors to `dtype`),
    trains `steps` steps (one fresh batch each) with its optimizer (or `optimizer`) and runs it once in
    eval mode."""
    torch.manual_seed(seed)
    module = model.build().to(device=device, dtype=dtype)
    optimizer = optimizer_for(model, module, optimizer)
    generator = torch.Generator().manual_seed(seed + 1)

    def place(t: torch.Tensor) -> torch.Tensor:
        return t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device)

    batches = [tuple(place(t) for t in model.inputs(generator)) for _ in range(steps)]
    losses = []
    module.train()
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        loss = model.loss(module, batch)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    grads = {name: p.grad.detach().cpu() for name, p in module.named_parameters() if p.grad is not None}
    module.eval()
    with torch.no_grad():
        output = module(*model.eval_inputs(batches[0]))
    state = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    return Trained(losses, grads, state, output.detach().cpu())


def step_ops(model: Model, device: str | torch.device, seed: int = 0) -> tuple[dict[str, int], dict[str, int]]:
    """The aten operators one training step (forward, backward, optimizer) calls on `device`, with
    their call counts, after a first step has warmed up the optimizer state; and, on dml, those of
    them that ran through the CPU fallback."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: dict[str, int] = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func.name())
            self.calls[name] = self.calls.get(name, 0) + 1
            return func(*args, **(kwargs or {}))

    on_dml = torch.device(device).type == "dml"
    if on_dml:
        import torch_dml
    torch.manual_seed(seed)
    module = model.build().to(device)
    optimizer = optimizer_for(model, module)
    batch = tuple(t.to(device) for t in model.inputs(torch.Generator().manual_seed(seed + 1)))

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        model.loss(module, batch).backward()
        optimizer.step()

    step()
    recorder = Recorder()
    if on_dml:
        torch_dml.reset_fallback_counts()
    with recorder:
        step()
    return recorder.calls, (torch_dml.fallback_counts() if on_dml else {})
