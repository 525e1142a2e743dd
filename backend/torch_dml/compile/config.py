"""Whether torch.compile on dml generates WGSL kernels for fused pointwise nodes (TORCH_DML_INDUCTOR_WGSL,
read when a graph compiles; set ``torch_dml.compile.config.wgsl`` to change it within a process)."""

from __future__ import annotations

import os

wgsl: bool = os.environ.get("TORCH_DML_INDUCTOR_WGSL", "1") != "0"
