"""The runtime side of a generated WGSL kernel: what the compiled module's wrapper calls."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

import torch

import torch_dml
from torch_dml.compile.wgsl_kernel import WORKGROUP_SIZE


class WgslKernel:
    def __init__(self, name: str, source: str) -> None:
        # The pipeline cache is per process and keyed by name: the hash keeps two graphs' kernel_0 apart.
        self.name = f"inductor_{name}_{hashlib.sha1(source.encode()).hexdigest()[:12]}"
        self.source = source

    def __call__(self, tensors: Sequence[torch.Tensor], scalars: Sequence[int], numel: int) -> None:
        numel = int(numel)
        if numel >= 2**31:
            raise RuntimeError(f"torch_dml: generated kernel {self.name} covers {numel} elements; its indices are "
                               "32-bit (at most 2^31 - 1). Compile with TORCH_DML_INDUCTOR_WGSL=0 for this model.")
        packed = struct.pack(f"<{len(scalars)}i", *(int(s) for s in scalars))
        groups = (numel + WORKGROUP_SIZE - 1) // WORKGROUP_SIZE
        torch_dml._C._launch_wgsl(self.name, self.source, list(tensors), packed, groups)
