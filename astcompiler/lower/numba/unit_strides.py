"""Inner loops over strided views that LLVM vectorizes: a run-time unit-stride test.

numba types a 2-d slice such as ``u[1:-1, 2:]`` as layout ``'A'`` and reads it through its
run-time strides, so the innermost loop of a stencil over such views loads with gathers. Under a
branch on ``view.strides[-1] == itemsize`` LLVM knows the stride and emits packed loads; the
``else`` branch is the same loop for other strides. Both branches compute the same values in the
same order, so the test only decides the speed (measured: a 2048x2048 Jacobi interior over four
views went from gathers to packed ``vaddpd``, see ``docs/performance.md``).

The test is emitted only in pointwise kernels of two or more dims that read a view or store into
one (other arrays reach numba contiguous and typed ``'C'``), inside the loop around the innermost
one so that a ``prange`` body sees it too.
"""

from __future__ import annotations

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from .plan import KernelPlan


def unit_stride_test(kernel: KernelPlan, names: dict[Node, str]) -> str | None:
    """``a.strides[-1] == 8 and ...`` over the kernel's arrays of its full rank whose last axis
    it walks (``names``: their parameter names), or None when none of them may be a view."""
    if kernel.style != "pointwise" or kernel.masked is not None or len(kernel.shape) < 2 \
            or kernel.shape[-1] == 1:
        return None
    arrays = [n for n in names if n.meta is not None and not n.meta.scalar
              and len(n.meta.shape) == len(kernel.shape) and n.meta.shape[-1] != 1]
    if kernel.store_into is None and not any(_view(n) for n in arrays):
        return None
    return " and ".join(f"{names[n]}.strides[-1] == {np.dtype(n.meta.dtype).itemsize}"
                        for n in arrays) or None


def _view(node: Node) -> bool:
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.kind == "view"
