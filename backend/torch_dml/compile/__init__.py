"""``torch.compile(model)`` on dml: the default backend, Inductor, wired to the device.

What it does. Inductor runs as on any device (Dynamo's capture, AOTAutograd's joint graph and
decompositions, Inductor's graph passes, memory planning and its Python wrapper). Float32 pointwise ops on
dml are lowered to loop nodes, which Inductor's SIMD scheduling fuses; each fused group becomes one
generated WGSL kernel (``wgsl_kernel.py``, launched by ``wgsl_launch.py`` through
``torch_dml._C._launch_wgsl``). Every other ATen op on dml is lowered to a call of that op
(``fallback_pass.py``), that is, to dml's own eager WGSL kernel; ops with one fused eager kernel that
Inductor would decompose (layer norm, softmax, ...) are kept whole for dml (``decompositions.py``). Loop
nodes the generator cannot write (reductions, indirect indexing, other dtypes) run as short sequences of
eager ops (``eager_kernel.py``). ``config.wgsl`` (``TORCH_DML_INDUCTOR_WGSL=0``) switches generation off.

Why this and not routing dml graphs to ``aot_eager`` (which runs every op as its eager kernel).
Registering dml as an Inductor device uses the extension points Inductor offers out-of-tree devices
(``register_backend_for_device``, ``register_interface_for_device``, ``register_device_op_overrides``)
instead of replacing Inductor's entry point, keeps ``mode=``/``options=``/``dynamic=`` and Inductor's
caches working unchanged, and lets the scheduling (``scheduling.py``, a ``SIMDScheduling``) fuse and emit
kernels from Inductor's own loop IR.

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
