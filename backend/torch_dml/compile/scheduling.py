"""Inductor's scheduling for dml. Inductor's SIMD scheduling decides which loop nodes fuse; a fused group
of pointwise and reduction nodes becomes one generated WGSL kernel (``wgsl_kernel.py``). A node the
generator cannot write (an op, reduction or dtype it lacks, an index read from a tensor) fuses with
nothing and runs as a function of eager ops (``eager_kernel.py``), as every loop node does with
generation switched off."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import sympy
from torch._inductor.codegen.simd import SIMDScheduling
from torch._inductor.scheduler import BaseSchedulerNode, SchedulerNode
from torch._inductor.virtualized import V

from torch_dml.compile import config, eager_kernel
from torch_dml.compile.wgsl_kernel import MAX_OPERANDS, WgslKernel, supported

log = logging.getLogger("torch_dml.compile")

_names = itertools.count()


class DmlScheduling(SIMDScheduling):
    kernel_type = WgslKernel  # type: ignore[assignment]

    def __init__(self, scheduler: Any) -> None:
        super().__init__(scheduler)
        self._why_not: dict[str, str | None] = {}

    def _generated(self, node: BaseSchedulerNode) -> bool:
        if not config.wgsl:
            return False
        for snode in node.get_nodes():
            name = snode.get_name()
            if name not in self._why_not:
                self._why_not[name] = supported(snode)
                if self._why_not[name]:
                    log.debug("loop node %s runs as eager ops: %s", name, self._why_not[name])
            if self._why_not[name]:
                return False
        return True

    def _fusable(self, node1: BaseSchedulerNode, node2: BaseSchedulerNode) -> bool:
        if not (self._generated(node1) and self._generated(node2)):
            return False
        buffers = {dep.name for n in (node1, node2) for dep in n.read_writes.reads | n.read_writes.writes}
        return len(buffers) <= MAX_OPERANDS

    def can_fuse_vertical(self, node1: BaseSchedulerNode, node2: BaseSchedulerNode) -> bool:
        return self._fusable(node1, node2) and super().can_fuse(node1, node2)

    def can_fuse_horizontal(self, node1: BaseSchedulerNode, node2: BaseSchedulerNode) -> bool:
        return self._fusable(node1, node2) and super().can_fuse(node1, node2)

    @classmethod
    def get_tiling_and_scores(cls, node_schedule: Any, numel: sympy.Expr, reduction_numel: sympy.Expr = sympy.S.One,
                              coalesce_analysis: Any = None) -> tuple[dict[str, sympy.Expr], None]:
        # One thread per element over the flat range: the kernel has no tiles to choose.
        return cls.create_tiling([numel], [reduction_numel]), None

    def codegen_node(self, node: Any) -> None:
        if self._generated(node):
            super().codegen_node(node)
            return
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

    def define_kernel(self, src_code: str, node_schedule: Any, kernel: Any) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        name = f"dml_wgsl_kernel_{next(_names)}"
        wrapper.src_to_kernel[src_code] = name
        wrapper.add_import_once("from torch_dml.compile.wgsl_launch import WgslKernel as _dml_wgsl_kernel")
        log.debug("generated kernel %s:\n%s", name, src_code)
        wrapper.define_kernel(name, f"_dml_wgsl_kernel({name!r}, {src_code!r})", gpu=False)
        return name

    def codegen_template(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("torch.compile on dml has no kernel templates (max-autotune needs Triton)")

    def codegen_sync(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def benchmark_fused_nodes(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("torch.compile on dml does not benchmark kernels")
