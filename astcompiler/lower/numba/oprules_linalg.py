"""Numba loop rules of contractions (``dot``, ``@``, ``outer``) and ``np.linalg``.

With SciPy installed numba's ``np.dot`` and ``np.linalg`` call BLAS/LAPACK; without it loops of
our own (``region_ops.CONTRACTIONS``) compute integer and small float contractions, and large
float matrix products are left to a host loop calling NumPy. Operands are cast to NumPy's result
dtype first, as NumPy does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph import Node
from .oprules_common import LoopEmitter, NotLowerable, all_nodes, dtype_of, mutates
from .region_ops import CONTRACTIONS, NORM2, OUTER, UFUNC_OUTER, scipy_blas
from .scalar import type_name

_CONTRACTION_HELPERS = {(1, 1): "_ac_dot", (2, 1): "_ac_matvec", (1, 2): "_ac_vecmat",
                        (2, 2): "_ac_matmul"}


def _cast_to(emitter: LoopEmitter, value: Any, result: np.dtype) -> str:
    if dtype_of((value,)) == result:
        return emitter.value(value)
    return f"{emitter.value(value)}.astype({type_name(result)})"


def contraction_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.dot``/``@`` of vectors and matrices: numba's BLAS-backed ``np.dot`` for float
    and complex results when SciPy is installed, loops of our own otherwise."""
    (a, b), result = node.args[:2], np.dtype(node.meta.dtype)
    ndims = tuple(x.meta.ndim if isinstance(x, Node) and x.meta else np.ndim(x) for x in (a, b))
    helper = _CONTRACTION_HELPERS.get(ndims)
    if helper is None or node.kwargs or result.kind not in "iufc" or result.itemsize < 4:
        raise NotLowerable(f"{node.target} of {ndims}-d arrays of {result.name}")
    x, y = (_cast_to(emitter, v, result) for v in (a, b))
    if result.kind in "fc" and scipy_blas():
        blas = f"np.dot(np.ascontiguousarray({x}), np.ascontiguousarray({y}))"
        uncast = (x, y) == (emitter.value(a), emitter.value(b))
        exact = numpy_contraction(emitter, node) if uncast else None
        if exact is not None:
            # NumPy's BLAS call (and its routine, its order) follows the operands' layouts:
            # numba's np.dot on C-contiguous operands is that call; other layouts run NumPy
            return (f"({blas} if {x}.flags.c_contiguous and {y}.flags.c_contiguous "
                    f"else {exact})")
        return blas
    if ndims == (2, 2) and result.kind in "fc" and not _small_matmul(a, b):
        # our loops run at a third of BLAS's speed there: a host loop calls NumPy instead
        raise NotLowerable("matmul of large or dynamic matrices without SciPy's BLAS")
    emitter.helpers.add(CONTRACTIONS)
    dtype = type_name(result)
    out = {(1, 1): f"{dtype}(0)", (2, 1): f"np.zeros({x}.shape[0], {dtype})",
           (1, 2): f"np.zeros({y}.shape[1], {dtype})",
           (2, 2): f"np.zeros(({x}.shape[0], {y}.shape[1]), {dtype})"}[ndims]
    return f"{helper}({x}, {y}, {out})"


def numpy_contraction(emitter: LoopEmitter, node: Node) -> str | None:
    """A NumPy step computing ``node`` (``loop_numpy.step_source``: an ``objmode`` block),
    added to the module's helpers; its call, or None where the step has no source."""
    from .loop_numpy import NUMPY_STEP, step_source  # (loop_numpy imports the kernel writer)
    a, b = node.args[:2]
    if not (isinstance(a, Node) and isinstance(b, Node)):
        return None
    operands = [a] if a is b else [a, b]  # (``x @ x``: the step takes x once)
    name = f"_ac_numpy_{node.name}_{len(emitter.helpers)}"
    source = step_source(name, operands, [node], [], [node], True,
                         f"{node.target} as NumPy calls BLAS on these layouts")
    if source is None:
        return None
    emitter.helpers.update({NUMPY_STEP, source})
    return f"{name}({', '.join(emitter.value(v) for v in operands)})"


def _small_matmul(a: Any, b: Any, limit: int = 32 ** 3) -> bool:
    """Static shapes with at most ``limit`` multiply-adds: loops beat a NumPy call there."""
    shapes = [x.meta.shape if isinstance(x, Node) else np.shape(x) for x in (a, b)]
    dims = (shapes[0][0], shapes[0][1], shapes[1][1])
    return all(isinstance(d, int) for d in dims) and dims[0] * dims[1] * dims[2] <= limit


def outer_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.outer`` of vectors: ``a[i] * b[j]`` with both cast to NumPy's result dtype."""
    result = np.dtype(node.meta.dtype)
    if node.kwargs or any(not isinstance(v, Node) or v.meta is None or v.meta.ndim != 1
                          for v in node.args) or result.kind not in "biufc":
        raise NotLowerable("outer of other than two vectors")
    x, y = (_cast_to(emitter, v, result) for v in node.args)
    emitter.helpers.add(OUTER)
    return (f"_ac_outer({x}, {y}, np.empty(({x}.shape[0], {y}.shape[0]), "
            f"{type_name(result)}))")


def ufunc_outer_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.<ufunc>.outer(a, b)`` of vectors: the ufunc on every pair, in the result dtype."""
    args = node.args
    ufunc_name = args[0] if isinstance(args[0], str) else getattr(args[0], "__name__", "")
    emitter.helpers.add(UFUNC_OUTER.format(name=ufunc_name, dtype=type_name(node.meta.dtype)))
    return f"_ac_outer_{ufunc_name}({emitter.value(args[1])}, {emitter.value(args[2])})"


def lapack(function: str) -> Any:
    """``np.linalg.solve``/``inv`` (``function``) through numba's LAPACK bindings (SciPy), in
    NumPy's precision (float32 and complex64 computed in double, as ``numpy.linalg`` does). Its
    LinAlgError messages differ from NumPy's (and it rejects NaN input NumPy accepts): the graph
    then reruns with NumPy, so only a graph that writes to no array may hold them."""
    def rule(emitter: LoopEmitter, node: Node) -> str:
        target, result = node.target, np.dtype(node.meta.dtype)
        ndims = tuple(a.meta.ndim if isinstance(a, Node) and a.meta else np.ndim(a)
                      for a in node.args)
        if not scipy_blas():
            raise NotLowerable(f"{target} without SciPy's LAPACK")
        if any(mutates(n) for n in all_nodes(emitter.graph)):
            raise NotLowerable(f"{target} in a graph that writes to arrays")
        if ndims[0] != 2 or (len(ndims) == 2 and ndims[1] not in (1, 2)) \
                or result.kind not in "fc" or result.itemsize < 4:
            raise NotLowerable(f"{target} of {ndims}-d arrays of {result.name}")
        # NumPy's linalg computes single precision in double and rounds the result once
        compute = np.dtype(np.float64 if result.kind == "f" else np.complex128)
        operands = ", ".join(
            f"np.ascontiguousarray({emitter.value(a)})" if dtype_of((a,)) == compute else
            f"np.ascontiguousarray({emitter.value(a)}).astype({type_name(compute)})"
            for a in node.args)
        call = f"{function}({operands})"
        if function == "np.linalg.inv":  # NumPy's inv is gesv against the identity (numba: getri)
            a = f"np.ascontiguousarray({emitter.value(node.args[0])})"
            call = (f"np.linalg.solve({operands}, np.eye({a}.shape[0], "
                    f"dtype={type_name(compute)}))")
        if compute != result:
            call = f"{call}.astype({type_name(result)})"
        return f"np.ascontiguousarray({call})" if node.meta.ndim == 2 else call  # LAPACK: F order
    return rule


def norm_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.linalg.norm(x)`` (2-norm of the flattened array) as NumPy computes it:
    ``sqrt(dot(x, x))`` with BLAS (SciPy) for float32/float64 arrays."""
    (x,), kwargs = node.args, node.kwargs
    dtype = dtype_of((x,))
    if not scipy_blas() or kwargs.get("ord") is not None or kwargs.get("axis") is not None \
            or kwargs.get("keepdims") or dtype is None or dtype.kind != "f" \
            or dtype.itemsize < 4 or not isinstance(x, Node) or not x.meta.ndim:
        raise NotLowerable("linalg_norm with ord/axis/keepdims, of ints or without BLAS")
    emitter.helpers.add(NORM2)
    return f"_ac_norm2({emitter.value(x)})"
