"""Ufunc methods: ``np.add.outer``, ``np.add.reduce``, ``np.maximum.accumulate``,
``np.add.reduceat``, for every ufunc of the ``numpy`` namespace.

Four ops, each taking the ufunc's *name* as its first canonical argument:

* ``ufunc_outer(name, A, B, dtype=None)``
* ``ufunc_reduce(name, a, axis=<tuple|None|int on 0-d>, dtype=None, keepdims=False, [initial])``
* ``ufunc_accumulate(name, a, axis=<int>, dtype=None)``
* ``ufunc_reduceat(name, a, indices=<tuple>, axis=<int>, dtype=None)``

A bound method such as ``np.add.outer`` is a new object on every attribute access, so it cannot
be found by identity in the registry. Capture resolves it with :func:`lookup_ufunc_method`
(``ufunc, "outer"``) or :func:`lookup_bound_method` (the bound method itself), then binds with the
ufunc prepended: ``op.canonical((ufunc, *args), kwargs)``. ``ufunc.at`` mutates its first
argument and is not registered (lookups return None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exc import Unsupported
from ._args import axis_index, axis_tuple, dtype_kw, freeze, ndim_of, reject_out
from .registry import OpDef, register

# every ufunc of the numpy namespace, by its __name__ (np.abs -> "absolute")
UFUNCS: dict[str, np.ufunc] = {
    u.__name__: u for u in (getattr(np, a) for a in dir(np)) if isinstance(u, np.ufunc)
}


def _resolve(ufunc: Any) -> np.ufunc:
    """A ufunc from a ufunc object or its name; Unsupported for ufuncs outside ``numpy``."""
    name = ufunc if isinstance(ufunc, str) else getattr(ufunc, "__name__", None)
    found = UFUNCS.get(name) if isinstance(name, str) else None
    if found is None or (not isinstance(ufunc, str) and found is not ufunc):
        raise Unsupported(f"methods of the ufunc {ufunc!r} are not supported "
                          f"(only numpy's own ufuncs)")
    return found


def _binary(ufunc: np.ufunc, what: str, *, single_output: bool = True) -> None:
    if ufunc.nin != 2:
        raise ValueError(f"{what} only supported for binary functions")
    if single_output and ufunc.nout != 1:
        raise ValueError(f"{what} only supported for functions returning a single value")


def _check_kwargs(kwargs: dict, allowed: set, what: str) -> None:
    unknown = set(kwargs) - allowed
    if unknown:
        raise Unsupported(f"ufunc.{what} with keyword(s) {sorted(unknown)} is not supported")


# ---------------------------------------------------------------- outer


def _outer_normalize(ufunc, A, B, /, **kwargs):
    uf = _resolve(ufunc)
    _binary(uf, "outer product", single_output=False)  # divmod.outer: a tuple, as NumPy
    _check_kwargs(kwargs, {"dtype", "out", "casting"}, "outer")
    reject_out(kwargs.get("out"), f"{uf.__name__}.outer")
    if kwargs.get("casting", "same_kind") != "same_kind":
        raise Unsupported("ufunc.outer with casting other than 'same_kind'")
    return (uf.__name__, freeze(A), freeze(B)), dtype_kw(kwargs.get("dtype"))


def _outer(name: str, A: Any, B: Any, dtype: np.dtype | None = None) -> Any:
    return UFUNCS[name].outer(A, B, dtype=dtype)


# ---------------------------------------------------------------- reduce

_NO_VALUE = object()


def _reduce_axis(a: Any, axis: Any) -> Any:
    ndim = ndim_of(a)
    if axis is None or ndim == 0:
        return axis  # 0-d: NumPy accepts axis 0 / (); let it judge
    if isinstance(axis, (tuple, list)):
        return axis_tuple(axis, ndim, sort=True)
    return (axis_index(axis, ndim),)


def _reduce_normalize(ufunc, array, axis=0, dtype=None, out=None, keepdims=False,
                      initial=_NO_VALUE, where=True):
    uf = _resolve(ufunc)
    _binary(uf, "reduce")
    reject_out(out, f"{uf.__name__}.reduce")
    if where is not True:
        raise Unsupported("ufunc.reduce(where=...) is not supported")
    kwargs: dict[str, Any] = {"axis": _reduce_axis(array, axis), **dtype_kw(dtype),
                              "keepdims": bool(keepdims)}
    if initial is not _NO_VALUE:
        kwargs["initial"] = initial
    return (uf.__name__, freeze(array)), kwargs


def _reduce(name: str, a: Any, axis: Any = 0, dtype: np.dtype | None = None,
            keepdims: bool = False, **initial: Any) -> Any:
    return UFUNCS[name].reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, **initial)


# ---------------------------------------------------------------- accumulate / reduceat


def _scan_axis(array: Any, axis: Any, what: str) -> int:
    if axis is None or isinstance(axis, (tuple, list)):
        raise ValueError(f"{what} does not allow multiple axes")
    ndim = ndim_of(array)
    if ndim == 0:
        raise TypeError(f"cannot {what} on a scalar")
    return axis_index(axis, ndim)


def _accumulate_normalize(ufunc, array, axis=0, dtype=None, out=None):
    uf = _resolve(ufunc)
    _binary(uf, "accumulate")
    reject_out(out, f"{uf.__name__}.accumulate")
    return (uf.__name__, freeze(array)), {"axis": _scan_axis(array, axis, "accumulate"),
                                          **dtype_kw(dtype)}


def _accumulate(name: str, a: Any, axis: int = 0, dtype: np.dtype | None = None) -> Any:
    return UFUNCS[name].accumulate(a, axis=axis, dtype=dtype)


def _reduceat_normalize(ufunc, array, indices, axis=0, dtype=None, out=None):
    uf = _resolve(ufunc)
    _binary(uf, "reduceat")
    reject_out(out, f"{uf.__name__}.reduceat")
    return (uf.__name__, freeze(array), freeze(indices)), {
        "axis": _scan_axis(array, axis, "reduceat"), **dtype_kw(dtype)}


def _reduceat(name: str, a: Any, indices: Any, axis: int = 0,
              dtype: np.dtype | None = None) -> Any:
    return UFUNCS[name].reduceat(a, indices, axis=axis, dtype=dtype)


METHOD_OPS: dict[str, OpDef] = {
    "outer": register("ufunc_outer", _outer, kind="extern", normalize=_outer_normalize,
                      doc="np.<ufunc>.outer(A, B, dtype)"),
    "reduce": register("ufunc_reduce", _reduce, kind="extern", normalize=_reduce_normalize,
                       doc="np.<ufunc>.reduce(a, axis, dtype, keepdims, [initial]); NumPy's "
                           "default axis is 0, not None"),
    "accumulate": register("ufunc_accumulate", _accumulate, kind="extern",
                           normalize=_accumulate_normalize,
                           doc="np.<ufunc>.accumulate(a, axis, dtype)"),
    "reduceat": register("ufunc_reduceat", _reduceat, kind="extern",
                         normalize=_reduceat_normalize,
                         doc="np.<ufunc>.reduceat(a, indices, axis, dtype)"),
}


def lookup_ufunc_method(ufunc: Any, method_name: str) -> OpDef | None:
    """The op for ``ufunc.<method_name>`` (``np.add, "outer"``), or None when unsupported.

    Bind its arguments with the ufunc first: ``op.canonical((ufunc, *args), kwargs)``.
    """
    if not isinstance(ufunc, np.ufunc) or UFUNCS.get(ufunc.__name__) is not ufunc:
        return None
    return METHOD_OPS.get(method_name)


def lookup_bound_method(fn: Any) -> tuple[OpDef, np.ufunc] | None:
    """``(op, ufunc)`` for a bound ufunc method object such as ``np.add.outer``, else None."""
    ufunc = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if not isinstance(ufunc, np.ufunc) or not isinstance(name, str):
        return None
    op = lookup_ufunc_method(ufunc, name)
    return None if op is None else (op, ufunc)


__all__ = ["UFUNCS", "METHOD_OPS", "lookup_ufunc_method", "lookup_bound_method"]
