"""Loads the C++ core and wires the ``dml`` name into PyTorch, in the order PyTorch requires.

Order matters: the rename and ``torch.dml`` must exist before any tensor touches the device (lazy
device init imports ``torch.<name>``), and the hooks, guard and allocator must be registered in the same
step, or even CPU ``pin_memory()`` breaks once PrivateUse1 is the accelerator.
"""

from __future__ import annotations

import os
import sys
import warnings

import torch
import torch_dml_autoload

BACKEND_NAME = "dml"


def _quiet_mesa() -> None:
    """Mesa's Vulkan drivers (lavapipe, RADV, ANV) print "error: XDG_RUNTIME_DIR is invalid or not set in
    the environment" on first use where the variable is missing (a server, a container, a CI job), which
    reads as a failure. A private per-user directory, as the XDG spec describes it (owned, mode 0700),
    keeps the import silent; a valid one already set is left alone."""
    if not sys.platform.startswith("linux") or os.path.isdir(os.environ.get("XDG_RUNTIME_DIR", "")):
        return
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"torch-dml-runtime-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return
    os.environ["XDG_RUNTIME_DIR"] = path


def register() -> None:
    if torch._C._get_privateuse1_backend_name() == BACKEND_NAME and hasattr(torch, BACKEND_NAME):
        return  # already wired (importlib.reload, or autoload followed by an explicit import)
    _quiet_mesa()
    from torch_dml import _C, _wgpu_library

    library = _wgpu_library.find()

    try:
        _C._load_wgpu(library)
    except RuntimeError as error:
        raise ImportError(f"torch_dml: cannot load wgpu-native from {library}: {error}") from error

    torch.utils.rename_privateuse1_backend(BACKEND_NAME)
    from torch_dml import device_module

    torch._register_device_module(BACKEND_NAME, device_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)

    from torch_dml import _multiprocessing

    _multiprocessing.register()

    from torch_dml import _fallback

    _fallback._init_from_environment()

    if torch.distributed.is_available():  # builds without it have no Gloo to stage through
        from torch_dml import distributed

        distributed.register()

    others = torch_dml_autoload.other_accelerators()
    if others:
        warnings.warn(torch_dml_autoload.sharing_warning(others), UserWarning, stacklevel=2)
