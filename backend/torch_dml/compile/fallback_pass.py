"""The post-grad pass Inductor runs on every graph that holds dml tensors: it marks each ATen call on dml
to be lowered as a call of the op itself (``should_fallback``, Inductor's own per-node switch), so the
compiled graph runs dml's eager kernels instead of loop-level IR that needs a kernel generator.

Passes that Inductor runs after this one (re-inplacing, scatter canonicalisation) can put in nodes the
mark did not see; Inductor lowers those to loops, and the scheduling (``scheduling.py``) runs them as
short sequences of eager ops. Correct either way, only slower.
"""

from __future__ import annotations

import logging

import torch
from torch._inductor.custom_graph_pass import CustomGraphModulePass
from torch.utils import _pytree

log = logging.getLogger("torch_dml.compile")

_announced = False


def _touches_dml(node: torch.fx.Node) -> bool:
    values = [node.meta.get("val")] + [arg.meta.get("val") for arg in node.all_input_nodes]
    return any(isinstance(v, torch.Tensor) and v.device.type == "dml" for v in _pytree.tree_leaves(values))


class EagerKernelsPass(CustomGraphModulePass):
    def __call__(self, gm: torch.fx.GraphModule) -> None:
        global _announced
        marked = 0
        for node in gm.graph.nodes:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and _touches_dml(node):
                node.meta["should_fallback"] = True
                marked += 1
        if marked and not _announced:
            _announced = True
            log.info(
                "torch.compile on dml: Inductor compiles the graph and calls dml's eager kernel for each "
                "ATen op (no generated WGSL kernels, so no fusion yet); see docs/compile.md"
            )

    def uuid(self) -> str:
        # Part of Inductor's FX-graph cache key: change it whenever what this pass does changes.
        return "torch_dml.compile.EagerKernelsPass/1"
