"""Inductor's scheduling for dml: no fusion, and each loop node written as a function of eager ops
(``eager_kernel.py``). In a graph whose ATen ops all fall back (``fallback_pass.py``) these are the few
nodes Inductor makes on its own; everything else reaches the wrapper as an extern ATen call."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

import sympy
from torch._inductor.scheduler import BaseSchedulerNode, BaseScheduling, SchedulerNode
from torch._inductor.utils import sympy_product
from torch._inductor.virtualized import V

from torch_dml.compile import eager_kernel

log = logging.getLogger("torch_dml.compile")

_names = itertools.count()


class DmlScheduling(BaseScheduling):
    def group_fn(self, sizes: Sequence[Sequence[sympy.Expr]]) -> tuple[sympy.Expr, ...]:
        return tuple(V.graph.sizevars.simplify(sympy_product(s)) for s in sizes)

    def can_fuse_vertical(self, node1: BaseSchedulerNode, node2: BaseSchedulerNode) -> bool:
        return False

    def can_fuse_horizontal(self, node1: BaseSchedulerNode, node2: BaseSchedulerNode) -> bool:
        return False

    def codegen_node(self, node: Any) -> None:
        wrapper = V.graph.wrapper_code
        wrapper.add_import_once("from torch_dml.compile.eager_kernel import define as _dml_eager_kernel")
        for snode in node.get_nodes():
            assert isinstance(snode, SchedulerNode), type(snode)
            snode.mark_run()
            ranges, reduction_ranges = snode.get_ranges()
            name = f"dml_eager_kernel_{next(_names)}"
            source, buffers, sizes = eager_kernel.write(name, snode._body, ranges, reduction_ranges)
            log.debug("loop node %s as eager ops:\n%s", snode.get_name(), source)
            wrapper.define_kernel(name, f"_dml_eager_kernel({source!r}, {name!r})", gpu=False)
            real = V.graph.scheduler.mutation_real_name
            wrapper.writeline(f"{name}({', '.join([real.get(b, b) for b in buffers] + sizes)})")
        self.free_buffers_in_scheduler()

    def codegen_template(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("torch.compile on dml has no kernel templates (max-autotune needs Triton)")

    def codegen_sync(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def benchmark_fused_nodes(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("torch.compile on dml does not benchmark kernels")
