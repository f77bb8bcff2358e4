"""Sorting and searching: sort, argsort, partition, argpartition, searchsorted, and the
in-place ``ndarray.sort``.

All are ``extern`` (NumPy's own algorithms, so ties and NaN placement are NumPy's), except the
method ``a.sort()``, which sorts ``a`` in place and returns None: it is the ``mutation`` op
``sort_`` (``np.sort`` and ``a.sort`` are different ops).

Canonical form: ``op(a, axis=<int or None>, [kind=..., stable=...])``; ``kind``/``stable`` appear
only when given (they select an algorithm, which matters for the order of ties in argsort).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exc import Unsupported
from ._args import axis_index, freeze, maybe, ndim_of
from .registry import register


def _sort_axis(a: Any, axis: Any) -> Any:
    """None (flatten) or a normalized axis; 0-d inputs keep theirs for NumPy to judge."""
    if axis is None:
        return None
    ndim = ndim_of(a)
    return axis if ndim == 0 else axis_index(axis, ndim)


def _reject_order(order: Any, fname: str) -> None:
    if order is not None:
        raise Unsupported(f"np.{fname}(order=...) on structured arrays is not supported")


def _check_kind(kind: Any, stable: Any) -> None:
    if kind is not None and stable is not None:
        raise ValueError("`kind` and keyword parameters can't be provided at the same time. "
                         "Use only one of them.")


def _sort_normalizer(fname: str):
    def normalize(a, axis=-1, kind=None, order=None, *, stable=None):
        _reject_order(order, fname)
        _check_kind(kind, stable)
        return (freeze(a),), {"axis": _sort_axis(a, axis), **maybe(kind=kind, stable=stable)}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _sort(a: Any, axis: int | None = -1, kind: str | None = None, stable: bool | None = None):
    return np.sort(a, axis=axis, kind=kind, stable=stable)


def _argsort(a: Any, axis: int | None = -1, kind: str | None = None,
             stable: bool | None = None):
    return np.argsort(a, axis=axis, kind=kind, stable=stable)


register("sort", _sort, kind="extern", normalize=_sort_normalizer("sort"), aliases=(np.sort,),
         doc="np.sort(a, axis): a sorted copy (a.sort() is the in-place op sort_)")
register("argsort", _argsort, kind="extern", normalize=_sort_normalizer("argsort"),
         aliases=(np.argsort,), methods=("argsort",), doc="np.argsort(a, axis, kind, stable)")


def _sort_inplace_normalize(a, axis=-1, kind=None, order=None, *, stable=None):
    _reject_order(order, "ndarray.sort")
    _check_kind(kind, stable)
    if axis is None:
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    return (freeze(a),), {"axis": axis_index(axis, ndim_of(a)), **maybe(kind=kind, stable=stable)}


def _sort_inplace(a: np.ndarray, axis: int = -1, kind: str | None = None,
                  stable: bool | None = None) -> None:
    a.sort(axis=axis, kind=kind, stable=stable)


register("sort_", _sort_inplace, kind="mutation", side_effects=True,
         normalize=_sort_inplace_normalize, methods=("sort",),
         doc="a.sort(axis, kind, stable): sorts a in place, returns None")


def _partition_normalizer(fname: str):
    def normalize(a, kth, axis=-1, kind="introselect", order=None):
        _reject_order(order, fname)
        if kind != "introselect":
            raise ValueError(f"{fname} kind must be 'introselect' (got {kind!r})")
        return (freeze(a), freeze(kth)), {"axis": _sort_axis(a, axis)}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _partition(a: Any, kth: Any, axis: int | None = -1) -> np.ndarray:
    return np.partition(a, kth, axis=axis)


def _argpartition(a: Any, kth: Any, axis: int | None = -1) -> np.ndarray:
    return np.argpartition(a, kth, axis=axis)


register("partition", _partition, kind="extern", normalize=_partition_normalizer("partition"),
         aliases=(np.partition,),
         doc="np.partition(a, kth, axis): a copy (a.partition() is in place: not registered)")
register("argpartition", _argpartition, kind="extern",
         normalize=_partition_normalizer("argpartition"), aliases=(np.argpartition,),
         methods=("argpartition",), doc="np.argpartition(a, kth, axis)")


def _searchsorted_normalize(a, v, side="left", sorter=None):
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    return (freeze(a), freeze(v)), {"side": side, **maybe(sorter=freeze(sorter))}


def _searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None):
    return np.searchsorted(a, v, side=side, sorter=sorter)


register("searchsorted", _searchsorted, kind="extern", normalize=_searchsorted_normalize,
         aliases=(np.searchsorted,), methods=("searchsorted",),
         doc="np.searchsorted(a, v, side, sorter): an intp index or array of indices")

__all__: list[str] = []
