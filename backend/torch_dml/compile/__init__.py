"""``torch.compile(model)`` on dml: the default backend, Inductor, wired to the device.

What it does. Inductor runs as on any device (Dynamo's capture, AOTAutograd's joint graph and
decompositions, Inductor's graph passes, memory planning and its Python wrapper), and every ATen op on
dml in the compiled graph is lowered to a call of that op (``fallback_pass.py``), that is, to dml's own
eager WGSL kernel. The few loop-level nodes Inductor creates by itself (layout copies, scatter
re-expansions) run as short sequences of eager ops (``eager_kernel.py``). No kernel is generated, so
nothing is fused: compiled dml models compute what eager ones compute, at about eager's speed.

Why this and not routing dml graphs to ``aot_eager``. Both run the same kernels. Registering dml as an
Inductor device uses the extension points Inductor offers out-of-tree devices
(``register_backend_for_device``, ``register_interface_for_device``, ``register_device_op_overrides``)
instead of replacing Inductor's entry point, keeps ``mode=``/``options=``/``dynamic=`` and Inductor's
caches working unchanged, and is the place a WGSL kernel generator plugs in later: the scheduling then
fuses and emits kernels for the nodes it now hands to eager ops.

Registration is lazy: importing Inductor costs about two seconds, so ``import torch_dml`` only leaves a
hook (``torch.dml.Scheduling``, which Inductor looks up the first time it needs a backend for the
private-use device) and ``register()`` runs from there.
"""

from __future__ import annotations

_registered = False


def register() -> None:
    """Makes dml an Inductor device. Idempotent."""
    global _registered
    if _registered:
        return
    from torch._dynamo.device_interface import register_interface_for_device
    from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen

    from torch_dml.compile.decompositions import keep_whole_on_dml
    from torch_dml.compile.device import DmlInterface, DmlOpOverrides
    from torch_dml.compile.fallback_pass import EagerKernelsPass
    from torch_dml.compile.scheduling import DmlScheduling

    register_interface_for_device("dml", DmlInterface)
    register_device_op_overrides("dml", DmlOpOverrides())
    register_backend_for_device("dml", DmlScheduling, PythonWrapperCodegen, device_custom_pass=EagerKernelsPass())
    keep_whole_on_dml()
    _registered = True
