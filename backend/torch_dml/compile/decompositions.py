"""Ops Inductor would decompose that dml keeps whole: each has one fused eager kernel on dml (layer norm,
softmax, log-softmax and NLL loss, forward and backward; embedding backward; tril/triu), while their
decompositions are reductions, index arithmetic and scatters that the generator does not write and that
run as several eager ops each. The decomposition stays for every other device."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch.utils import _pytree

_aten = torch.ops.aten
KEPT_WHOLE = (_aten.native_layer_norm.default, _aten.native_layer_norm_backward.default, _aten._softmax.default,
              _aten._softmax_backward_data.default, _aten._log_softmax.default,
              _aten._log_softmax_backward_data.default, _aten.nll_loss_forward.default,
              _aten.nll_loss_backward.default, _aten.embedding_dense_backward.default, _aten.tril.default,
              _aten.triu.default)


def _on_dml(args: Any, kwargs: Any) -> bool:
    leaves = _pytree.tree_leaves((args, kwargs))
    return any(isinstance(v, torch.Tensor) and v.device.type == "dml" for v in leaves)


def _unless_dml(decompose: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(decompose)
    def decompose_off_dml(*args: Any, **kwargs: Any) -> Any:
        # NotImplemented tells the tracer to keep the op (proxy_tensor's decomposition protocol).
        return NotImplemented if _on_dml(args, kwargs) else decompose(*args, **kwargs)

    decompose_off_dml.dml_kept_whole = True  # type: ignore[attr-defined]
    return decompose_off_dml


def keep_whole_on_dml() -> None:
    """Wraps the decompositions of KEPT_WHOLE in Inductor's table and gives Inductor a lowering for the
    whole op (a call of it, which only dml graphs reach). Idempotent."""
    from torch._inductor.decomposition import decompositions, fast_random_decomps
    from torch._inductor.lowering import lowerings, make_fallback

    for op in KEPT_WHOLE:
        # fast_random_decomps() is a cached copy of the table (the one compile_fx uses by default).
        for table in (decompositions, fast_random_decomps()):
            decompose = table.get(op)
            if decompose is not None and not getattr(decompose, "dml_kept_whole", False):
                table[op] = _unless_dml(decompose)
        if op not in lowerings:
            make_fallback(op, warn=False, override_decomp=True)
