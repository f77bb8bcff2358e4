"""Numba loop rule of reductions (``sum``, ``mean``, ``max``, ``argmin``, ``var``, ...).

In fused kernels a reduction is its ``OpDef.reduction`` accumulator (``scalar.lower_reduction``,
``cpu.py``). In loop code a whole-array reduction without keywords is numba's NumPy function
(the op table's ``reduction_call``); with ``axis``, ``keepdims``, ``dtype`` or ``ddof`` a loop
helper built from the same ``ReductionDef`` (``region_ops.reduction_source``), in NumPy's result
and accumulator dtypes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from .oprules_common import NOT_MINE, LoopEmitter, LoopRule, NotLowerable
from .region_ops import reduction_source
from .scalar import accumulator


def reduction(call: str | None, complex_ok: bool = False, inexact_only: bool = False
              ) -> LoopRule:
    """The loop rule of a reduction: ``call`` (``np.sum``) where numba's function computes
    NumPy's result, else a loop helper. ``complex_ok``: complex values reduce (sums, products,
    means; orders of complex numbers are NumPy's lexicographic ones: not lowered);
    ``inexact_only``: a float or complex result only (mean, var, std)."""
    def rule(emitter: LoopEmitter, node: Node) -> Any:
        op = REGISTRY[node.target]
        if op.reduction is None:
            return NOT_MINE
        target, (a,), kwargs = node.target, node.args, node.kwargs
        if kwargs.get("out") is not None or not isinstance(a, Node) or a.meta is None:
            raise NotLowerable(f"{target} with out= or of a constant")
        axis, keepdims, ddof = kwargs.get("axis"), kwargs.get("keepdims"), kwargs.get("ddof", 0)
        if call is not None and axis is None and not keepdims \
                and kwargs.get("dtype") is None and not ddof:
            return f"{call}({emitter.value(a)})"
        source, result = np.dtype(a.meta.dtype), np.dtype(node.meta.dtype)
        if "c" in (source.kind, result.kind) and not complex_ok:
            raise NotLowerable(f"{target} of complex numbers")  # lexicographic order, |z|**2
        if inexact_only and result.kind not in "fc":
            raise NotLowerable(f"{target} with an integer dtype")
        if accumulator(op.reduction.accumulate, source, result) is None:
            raise NotLowerable(f"{target} of {source.name} to {result.name}")
        ndim = a.meta.ndim
        axes = tuple(range(ndim)) if axis is None else \
            ((axis,) if isinstance(axis, int) else tuple(axis))
        name = (f"_ac_{target}_{ndim}d_axes{''.join(map(str, axes))}{'_keep' if keepdims else ''}"
                f"_{source.name}_{result.name}")
        emitter.helpers.add("\n\n" + reduction_source(name, op.reduction, ndim, axes,
                                                      bool(keepdims), source, result,
                                                      op.no_identity))
        return f"{name}({emitter.value(a)}, {emitter.value(ddof)})"
    return rule
