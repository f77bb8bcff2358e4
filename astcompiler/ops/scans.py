"""Scans along an axis: cumsum, cumprod (and their nan- and array-API forms), diff.

All ``extern`` (NumPy's loops, so float rounding is NumPy's sequential order).
Canonical form: ``op(a, axis=<int or None>, dtype=<np.dtype or None>)``; ``diff`` is
``diff(a, n=<int>, axis=<int>, [prepend=..., append=...])``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._args import axis_index, dtype_kw, freeze, ndim_of, optional_axis, reject_out
from .registry import register


def _scan_normalizer(fname: str):
    def normalize(a, axis=None, dtype=None, out=None):
        reject_out(out, fname)
        return (freeze(a),), {"axis": optional_axis(axis, ndim_of(a)), **dtype_kw(dtype)}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _scan_impl(fn):
    def impl(a: Any, axis: int | None = None, dtype: np.dtype | None = None) -> np.ndarray:
        return fn(a, axis=axis, dtype=dtype)
    impl.__name__ = f"_{fn.__name__}"
    return impl


for _fn, _methods in ((np.cumsum, ("cumsum",)), (np.cumprod, ("cumprod",)),
                      (np.nancumsum, ()), (np.nancumprod, ())):
    register(_fn.__name__, _scan_impl(_fn), kind="extern",
             normalize=_scan_normalizer(_fn.__name__), aliases=(_fn,), methods=_methods,
             doc=f"np.{_fn.__name__}(a, axis, dtype): axis None scans the flattened array")


def _cumulative_normalizer(fname: str):
    def normalize(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        reject_out(out, fname)
        ndim = ndim_of(x)
        if axis is None and ndim > 1:
            raise ValueError("axis must be specified for multi-dimensional arrays")
        canon_axis = None if axis is None else axis_index(axis, max(ndim, 1))
        return (freeze(x),), {"axis": canon_axis, **dtype_kw(dtype),
                              "include_initial": bool(include_initial)}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _cumulative_impl(fn):
    def impl(x: Any, axis: int | None = None, dtype: np.dtype | None = None,
             include_initial: bool = False) -> np.ndarray:
        return fn(x, axis=axis, dtype=dtype, include_initial=include_initial)
    impl.__name__ = f"_{fn.__name__}"
    return impl


for _name in ("cumulative_sum", "cumulative_prod"):
    _fn = getattr(np, _name, None)
    if _fn is not None:
        register(_name, _cumulative_impl(_fn), kind="extern",
                 normalize=_cumulative_normalizer(_name), aliases=(_fn,),
                 doc=f"np.{_name}(x, axis, dtype, include_initial) (array API)")


_NO_VALUE = object()


def _diff_normalize(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    ndim = ndim_of(a)
    if ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    n = int(n) if isinstance(n, (int, np.integer)) else n
    if isinstance(n, int) and n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    kwargs: dict[str, Any] = {"n": n, "axis": axis_index(axis, ndim)}
    if prepend is not _NO_VALUE:
        kwargs["prepend"] = freeze(prepend)
    if append is not _NO_VALUE:
        kwargs["append"] = freeze(append)
    return (freeze(a),), kwargs


def _diff(a: Any, n: int = 1, axis: int = -1, **ends: Any) -> np.ndarray:
    return np.diff(a, n=n, axis=axis, **ends)


register("diff", _diff, kind="extern", normalize=_diff_normalize, aliases=(np.diff,),
         doc="np.diff(a, n, axis, [prepend], [append])")

__all__: list[str] = []
