"""Float sums whose NumPy order kernels do not reproduce: they run as NumPy steps.

NumPy adds a float sum (``sum``, ``mean``, ``var``, ``std``) whose summands are cast
(``dtype=`` another float, integer inputs of ``mean``/``var``/``std``) in buffered chunks of 8192
cast elements, each chunk pairwise, and a sum over several axes that are not the trailing ones
(``x.mean(axis=(0, 2))``) in the order of its iterator's coalesced, reordered axes. Kernels add
neither order, so the CPU target's kernels do not take these reductions (``numpy_order_only``,
called by its ``accept`` vetoes in ``__init__.py`` and ``loop_kernels.py``): each is a local
NumPy step and the rest of the graph still fuses. Integer sums are exact in any order and stay;
the CUDA target keeps its own accumulators (no bit promise).

A whole-array float sum of stored data (an input or a view of one, nothing computed per element)
has nothing to fuse, and NumPy's own pairwise loop is faster than the kernels' (its intrinsics
emit eight vector accumulators directly): ``numpy_faster_sum`` makes it a NumPy step at the top
level and in host loops (its bits are NumPy's by definition). Row and column sums stay in kernels:
there they fuse with their consumers (softmax, layernorm).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["numpy_faster_sum", "numpy_order_only", "numpy_sum_order"]


def _axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (int(axis) % ndim,) if ndim else ()
    if isinstance(axis, tuple) and all(isinstance(a, (int, np.integer)) for a in axis):
        return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()
    return None


def numpy_order_only(merge: str | None, source: np.dtype, result: np.dtype, axis: Any,
                     ndim: int) -> bool:
    """Whether a reduction with this ``merge`` (float sums: ``"{a} + {b}"``) from ``source`` to
    ``result`` over ``axis`` of an ``ndim``-d operand must run with NumPy to give its bits."""
    if merge != "{a} + {b}" or result.kind not in "fc":
        return False
    if source != result:  # a cast summand: NumPy's buffered chunks of 8192
        return True
    axes = _axes(axis, ndim)
    if axes is None:
        return True
    return len(axes) >= 2 and axes != tuple(range(ndim - len(axes), ndim))


def numpy_sum_order(node: Any, rule: Any) -> bool:
    """``numpy_order_only`` of a reduction node and its kernel rule (a ``ReductionRule``);
    False for any other rule, and with ``config.pairwise_sums`` off."""
    from ...config import config

    source = node.args[0] if node.args else None
    if not config.pairwise_sums or not hasattr(rule, "merge") or not hasattr(rule, "input_dtype") \
            or getattr(source, "meta", None) is None:
        return False
    return numpy_order_only(rule.merge, np.dtype(rule.input_dtype), np.dtype(rule.result_dtype),
                            node.kwargs.get("axis"), len(source.meta.shape))


def _stored(value: Any) -> bool:
    """Is ``value`` a graph input, or a chain of views of one?"""
    from ...ops.registry import REGISTRY

    while getattr(value, "op", None) == "call" and value.target in REGISTRY \
            and REGISTRY[value.target].kind == "view" and value.args:
        value = value.args[0]
    return getattr(value, "op", None) == "placeholder"


def numpy_faster_sum(node: Any, rule: Any) -> bool:
    """A whole-array float sum (or mean) of stored data, which NumPy adds faster than a kernel."""
    from ...config import config

    source = node.args[0] if node.args else None
    if not config.pairwise_sums or getattr(rule, "merge", None) != "{a} + {b}" \
            or getattr(source, "meta", None) is None or not _stored(source):
        return False
    result, ndim = np.dtype(rule.result_dtype), len(source.meta.shape)
    if result.kind not in "fc" or np.dtype(rule.input_dtype) != result or ndim == 0:
        return False
    if getattr(rule, "two_pass", False):
        return False
    return _axes(node.kwargs.get("axis"), ndim) == tuple(range(ndim))
