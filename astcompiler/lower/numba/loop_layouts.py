"""NumPy's output layouts inside structured functions: ``empty_following``.

A wrapper allocates a kernel's outputs in the layout NumPy would give them (``runtime.k_order``:
a Fortran-ordered ``X * 1.0`` is Fortran-ordered). Loop code allocates inside the structured
function, in numba, so the same rule is an overload decided by the operands' numba types where
they tell (``C`` and ``F`` arrays) and at run time from their strides where they do not (``A``):

* every operand of the output's rank is a ``C`` array (or there is none): C order;
* every one is an ``F`` array: Fortran order (NumPy's trivial loop over Fortran-contiguous
  operands), so a loop that rebinds ``X = X * 1.0`` keeps an ``F`` type, and one numba type;
* ``C`` and ``F`` operands mixed: C order, as NumPy's iterator lets C order win where operands
  disagree;
* any ``A`` operand: NumPy's ``order="K"`` rule at run time on the strides (the result's numba
  type is then ``A``, as its operands' already is).

``empty_following(shape, dtype, operands)`` is ``np.empty`` in that layout; the ``*_like``
functions of loop code (``np.empty_like(X)`` & co.) are it with one operand, then filled.

Kernels loop over the last axis innermost, which is memory order for C arrays only: a 2-D
pointwise kernel over whole arrays (nothing broadcast) whose operands and outputs are all
``F`` arrays is called on their transposes (``call_in_memory_order``: ``C`` arrays, the same
elements), so Fortran-ordered loop code runs as fast as C-ordered.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

from .runtime import k_axis_order

__all__ = ["empty_following", "filled_following", "call_in_memory_order", "transposable",
           "IMPORT"]

IMPORT = ("\nfrom astcompiler.lower.numba.loop_layouts import call_in_memory_order, "
          "empty_following, filled_following\n")


def empty_following(shape: tuple, dtype: Any, operands: tuple) -> np.ndarray:
    """``np.empty(shape, dtype)`` in the layout NumPy gives a ufunc output of ``operands``
    (numba code only: the overload below)."""
    raise NotImplementedError("empty_following runs in numba code only")


@register_jitable
def filled_following(shape, dtype, operands, value):
    """``np.full(shape, value, dtype)`` in ``empty_following``'s layout (``np.zeros_like``)."""
    out = empty_following(shape, dtype, operands)
    out.fill(value)
    return out


_k_order_axes = register_jitable(k_axis_order)


def _runtime_source(ndim: int, ranks: list[tuple[int, int]]) -> str:
    """The overload's implementation for ``A`` operands: the operands' strides (as
    ``runtime.k_order`` takes them), NumPy's trivial C/F loop test, then its axis sort."""
    permuted = ", ".join(f"shape[order[{k}]]" for k in range(ndim))
    inverse = ", ".join(f"inverse[{k}]" for k in range(ndim))
    lines = ["def impl(shape, dtype, operands):",
             f"    strides = np.zeros(({len(ranks)}, {ndim}), np.int64)",
             "    c = True", "    f = True", "    same = True"]
    for row, (index, rank) in enumerate(ranks):
        lead = ndim - rank
        lines += [f"    a = operands[{index}]",
                  "    c = c and a.flags.c_contiguous",
                  "    f = f and a.flags.f_contiguous"]
        if lead:
            lines.append("    same = False")
        for axis in range(rank):
            lines += [f"    if a.shape[{axis}] != shape[{lead + axis}]:", "        same = False",
                      f"    if a.shape[{axis}] != 1:",
                      f"        strides[{row}, {lead + axis}] = "
                      f"abs(a.strides[{axis}]) // a.itemsize"]
    lines += ["    if same and c:", "        return np.empty(shape, dtype)",
              "    if same and f:", "        return np.empty(shape[::-1], dtype).T",
              "    order = _k_order_axes(shape, strides)",
              "    inverse = np.empty(len(order), np.int64)",
              "    for k in range(len(order)):", "        inverse[order[k]] = k",
              f"    return np.empty(({permuted},), dtype).transpose(({inverse},))"]
    return "\n".join(lines) + "\n"


@overload(empty_following)
def _empty_following(shape, dtype, operands):  # numba compares these names: no annotations
    ndim = len(shape)
    arrays = [(i, t) for i, t in enumerate(operands)
              if isinstance(t, types.Array) and t.ndim >= 1]
    full = [t for _, t in arrays if t.ndim == ndim]
    if ndim < 2 or not full or any(t.layout == "C" for t in full):
        return lambda shape, dtype, operands: np.empty(shape, dtype)
    if all(t.layout == "F" for t in full) and all(t.layout != "A" for _, t in arrays):
        return lambda shape, dtype, operands: np.empty(shape[::-1], dtype).T
    scope = {"np": np, "_k_order_axes": _k_order_axes}
    exec(_runtime_source(ndim, [(i, t.ndim) for i, t in arrays]), scope)  # noqa: S102
    return scope["impl"]


def transposable(kernel: Any, code: Any) -> bool:
    """A 2-D pointwise kernel (a ``plan.KernelPlan`` and its ``cpu.KernelCode``) whose every
    array operand and output has the iteration space's shape (nothing broadcast): the same
    kernel on their transposes computes the same elements, in memory order when they are
    Fortran-ordered (loop code: ``call_in_memory_order``; wrappers test the flags)."""
    if kernel.style != "pointwise" or len(kernel.shape) != 2 or code.returns or \
            kernel.store_into is not None or kernel.masked is not None or kernel.gathered:
        return False
    arrays = [n for n in [*code.inputs, *code.buffers] if n.meta is not None and n.meta.ndim]
    return bool(arrays) and all(tuple(n.meta.shape) == tuple(kernel.shape) and not n.meta.scalar
                                for n in arrays)


def call_in_memory_order(kernel: Any, arrays: tuple) -> None:
    """``kernel(*arrays)``, on the transposes when every 2-D array is an ``F`` array (numba
    code only: the overload below; the caller passes whole arrays of one shape)."""
    raise NotImplementedError("call_in_memory_order runs in numba code only")


@overload(call_in_memory_order)
def _call_in_memory_order(kernel, arrays):  # numba compares these names: no annotations
    wide = [isinstance(t, types.Array) and t.ndim == 2 for t in arrays]
    flip = any(wide) and all(t.layout == "F" for t, w in zip(arrays, wide) if w)
    args = ", ".join(f"arrays[{i}].T" if flip and w else f"arrays[{i}]"
                     for i, w in enumerate(wide))
    scope: dict[str, Any] = {}
    exec(f"def impl(kernel, arrays):\n    kernel({args})\n", scope)  # noqa: S102
    return scope["impl"]
