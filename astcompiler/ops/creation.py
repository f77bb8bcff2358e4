"""Creation ops: new arrays from shapes, ranges, constants and other arrays' metadata.

Canonical forms resolve what the call leaves implicit: shapes are tuples (of ints or symbolic
sizes), dtypes are ``np.dtype`` objects (NumPy's default made explicit), ``order`` appears only
when it is not the default. Every creation op returns a fresh array on each call (kind
``creation``: never merged by CSE), except ``asarray``/``ascontiguousarray``, which return their
input when no conversion is needed and are therefore declared ``view``.

``empty``/``empty_like`` keep NumPy's semantics: the values are undefined. Compare only shape and
dtype of their results (a backend may hand back zeros or garbage).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exc import Unsupported
from ._args import (as_dim, as_dtype, as_shape, axis_index, check_order, contains_proxy,
                    dtype_kw, dtype_of, freeze, is_array, is_proxy, ndim_of, reject_device,
                    reject_like)
from .registry import register
from .sizes import same_as_first, shape_argument

# ---------------------------------------------------------------- zeros / ones / empty / full


def _order_kw(order: Any, default: str = "C", allowed: tuple = ("C", "F")) -> dict:
    order = check_order(order, allowed, default)
    return {} if order == default else {"order": order}


def _filled_normalizer(fname: str, default_dtype: Any):
    def normalize(shape, dtype=default_dtype, order="C", *, device=None, like=None):
        reject_device(device, fname)
        reject_like(like, fname)
        return (as_shape(shape), np.dtype(dtype)), _order_kw(order)
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _zeros(shape: tuple, dtype: np.dtype, order: str = "C") -> np.ndarray:
    return np.zeros(shape, dtype, order=order)


def _ones(shape: tuple, dtype: np.dtype, order: str = "C") -> np.ndarray:
    return np.ones(shape, dtype, order=order)


def _empty(shape: tuple, dtype: np.dtype, order: str = "C") -> np.ndarray:
    return np.empty(shape, dtype, order=order)


register("zeros", _zeros, kind="creation", shape_rule=shape_argument, normalize=_filled_normalizer("zeros", float),
         aliases=(np.zeros,), doc="np.zeros(shape, dtype)")
register("ones", _ones, kind="creation", shape_rule=shape_argument, normalize=_filled_normalizer("ones", None),
         aliases=(np.ones,), doc="np.ones(shape, dtype)")
register("empty", _empty, kind="creation", shape_rule=shape_argument, normalize=_filled_normalizer("empty", float),
         aliases=(np.empty,), doc="np.empty(shape, dtype): values are undefined")


def _fill_dtype(fill_value: Any) -> np.dtype | None:
    """The dtype NumPy infers for a fill value, when it can be known without array data."""
    dtype = dtype_of(fill_value)
    if dtype is not None:
        return dtype
    if isinstance(fill_value, (bool, int, float, complex)):
        return np.asarray(fill_value).dtype
    return None  # e.g. a symbolic size: the impl decides


def _full_normalize(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    reject_device(device, "full")
    reject_like(like, "full")
    dtype = as_dtype(dtype) if dtype is not None else _fill_dtype(fill_value)
    return (as_shape(shape), freeze(fill_value), dtype), _order_kw(order)


def _full(shape: tuple, fill_value: Any, dtype: np.dtype | None, order: str = "C") -> np.ndarray:
    return np.full(shape, fill_value, dtype, order=order)


register("full", _full, kind="creation", shape_rule=shape_argument, normalize=_full_normalize, aliases=(np.full,),
         doc="np.full(shape, fill_value, dtype); fill_value may be an array (broadcast)")

# ---------------------------------------------------------------- *_like


def _like_kwargs(a: Any, dtype: Any, order: Any, shape: Any) -> dict:
    dtype = as_dtype(dtype) if dtype is not None else dtype_of(a)
    kwargs: dict[str, Any] = {"dtype": dtype}
    kwargs.update(_order_kw(order, "K", ("C", "F", "A", "K")))
    if shape is not None:
        kwargs["shape"] = as_shape(shape)
    return kwargs


def _like_normalizer(fname: str):
    def normalize(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        reject_device(device, fname)
        return (freeze(a),), _like_kwargs(a, dtype, order, shape)
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _like_impl(fn):
    def impl(a, dtype=None, order="K", shape=None):
        return fn(a, dtype=dtype, order=order, shape=shape)
    impl.__name__ = f"_{fn.__name__}"
    return impl


for _fn in (np.zeros_like, np.ones_like, np.empty_like):
    register(_fn.__name__, _like_impl(_fn), kind="creation", shape_rule=same_as_first,
             normalize=_like_normalizer(_fn.__name__), aliases=(_fn,),
             doc=f"np.{_fn.__name__}(a, dtype, order, shape): a fresh array"
                 + (" with undefined values" if _fn is np.empty_like else ""))


def _full_like_normalize(a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                         device=None):
    reject_device(device, "full_like")
    return (freeze(a), freeze(fill_value)), _like_kwargs(a, dtype, order, shape)


def _full_like(a: Any, fill_value: Any, dtype=None, order="K", shape=None) -> np.ndarray:
    return np.full_like(a, fill_value, dtype=dtype, order=order, shape=shape)


register("full_like", _full_like, kind="creation", shape_rule=same_as_first, normalize=_full_like_normalize,
         aliases=(np.full_like,), doc="np.full_like(a, fill_value, dtype, order, shape)")

# ---------------------------------------------------------------- ranges


def _range_bound(value: Any, fname: str) -> Any:
    if is_proxy(value):
        raise Unsupported(f"np.{fname} with a bound computed from array data "
                          f"(data-dependent shape) is not supported")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


_NO_START = object()


def _arange_normalize(start_or_stop=_NO_START, /, stop=None, step=1, *, dtype=None,
                      device=None, like=None, start=_NO_START):
    reject_device(device, "arange")
    reject_like(like, "arange")
    if start_or_stop is not _NO_START and start is not _NO_START:
        raise TypeError("arange() got multiple values for argument 'start'")
    first = start if start_or_stop is _NO_START else start_or_stop
    if first is _NO_START:
        first = None
    if stop is None:
        if first is None:
            raise TypeError("arange() requires stop to be specified.")
        first, stop = 0, first
    elif first is None:
        first = 0
    bounds = tuple(_range_bound(v, "arange") for v in (first, stop, step))
    return bounds, dtype_kw(dtype)


def _arange(start: Any, stop: Any, step: Any, dtype: np.dtype | None = None) -> np.ndarray:
    return np.arange(start, stop, step, dtype=dtype)


register("arange", _arange, kind="creation", normalize=_arange_normalize, aliases=(np.arange,),
         doc="np.arange(start, stop, step, dtype): all three bounds explicit")


def _space_axis(start: Any, stop: Any, axis: Any) -> int:
    ndim = max(ndim_of(start), ndim_of(stop)) + 1
    return axis_index(axis, ndim, "destination")


def _samples(num: Any) -> Any:
    if isinstance(num, (int, np.integer)) and not isinstance(num, bool) and num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return as_dim(num)


def _linspace_normalize(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
                        *, device=None):
    reject_device(device, "linspace")
    if retstep:
        raise Unsupported("np.linspace(retstep=True) returns a tuple; not supported yet")
    kwargs = {"endpoint": bool(endpoint), **dtype_kw(dtype),
              "axis": _space_axis(start, stop, axis)}
    return (freeze(start), freeze(stop), _samples(num)), kwargs


def _linspace(start, stop, num, endpoint=True, dtype=None, axis=0) -> np.ndarray:
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)


register("linspace", _linspace, kind="creation", normalize=_linspace_normalize,
         aliases=(np.linspace,), doc="np.linspace(start, stop, num, endpoint, dtype, axis)")


def _logspace_normalize(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    kwargs = {"endpoint": bool(endpoint), "base": freeze(base), **dtype_kw(dtype),
              "axis": _space_axis(start, stop, axis)}
    return (freeze(start), freeze(stop), _samples(num)), kwargs


def _logspace(start, stop, num, endpoint=True, base=10.0, dtype=None, axis=0) -> np.ndarray:
    return np.logspace(start, stop, num, endpoint=endpoint, base=base, dtype=dtype, axis=axis)


register("logspace", _logspace, kind="creation", normalize=_logspace_normalize,
         aliases=(np.logspace,), doc="np.logspace(start, stop, num, endpoint, base, dtype, axis)")


def _geomspace_normalize(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    kwargs = {"endpoint": bool(endpoint), **dtype_kw(dtype),
              "axis": _space_axis(start, stop, axis)}
    return (freeze(start), freeze(stop), _samples(num)), kwargs


def _geomspace(start, stop, num, endpoint=True, dtype=None, axis=0) -> np.ndarray:
    return np.geomspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)


register("geomspace", _geomspace, kind="creation", normalize=_geomspace_normalize,
         aliases=(np.geomspace,), doc="np.geomspace(start, stop, num, endpoint, dtype, axis)")

# ---------------------------------------------------------------- eye / identity / tri


def _offset(k: Any) -> Any:
    """A diagonal offset: an int (TypeError for floats, as NumPy); symbolic values kept."""
    if isinstance(k, (bool, np.bool_)):
        return int(k)
    if isinstance(k, (int, np.integer)):
        return int(k)
    if isinstance(k, (float, complex, str, np.floating)) or is_array(k):
        raise TypeError(f"{type(k).__name__!r} object cannot be interpreted as an integer")
    return k


def _eye_normalize(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    reject_device(device, "eye")
    reject_like(like, "eye")
    n = as_dim(N)
    m = n if M is None else as_dim(M)
    return (n, m, _offset(k), np.dtype(dtype)), _order_kw(order)


def _eye(N: Any, M: Any, k: Any, dtype: np.dtype, order: str = "C") -> np.ndarray:
    return np.eye(N, M, k, dtype=dtype, order=order)


register("eye", _eye, kind="creation", normalize=_eye_normalize, aliases=(np.eye,),
         doc="np.eye(N, M, k, dtype): M and dtype explicit")


def _identity_normalize(n, dtype=None, *, like=None):
    reject_like(like, "identity")
    return (as_dim(n), np.dtype(dtype)), {}


def _identity(n: Any, dtype: np.dtype) -> np.ndarray:
    return np.identity(n, dtype)


register("identity", _identity, kind="creation", normalize=_identity_normalize,
         aliases=(np.identity,), doc="np.identity(n, dtype)")


def _tri_normalize(N, M=None, k=0, dtype=float, *, like=None):
    reject_like(like, "tri")
    n = as_dim(N)
    m = n if M is None else as_dim(M)
    return (n, m, _offset(k), np.dtype(dtype)), {}


def _tri(N: Any, M: Any, k: Any, dtype: np.dtype) -> np.ndarray:
    return np.tri(N, M, k, dtype)


register("tri", _tri, kind="creation", normalize=_tri_normalize, aliases=(np.tri,),
         doc="np.tri(N, M, k, dtype): ones at and below the k-th diagonal")

# ---------------------------------------------------------------- array / asarray / constant


def _data(obj: Any) -> Any:
    """The data argument of array/asarray: nested lists become tuples (proxies kept)."""
    return freeze(obj)


def _array_normalize(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0,
                     ndmax=0, like=None):
    reject_like(like, "array")
    if copy is not True:
        raise Unsupported("np.array(..., copy=False/None) is not supported; use np.asarray")
    if ndmax:
        raise Unsupported("np.array(..., ndmax=...) is not supported")
    kwargs: dict[str, Any] = dtype_kw(dtype)
    kwargs.update(_order_kw(order, "K", ("C", "F", "A", "K")))
    if ndmin:
        kwargs["ndmin"] = int(ndmin)
    return (_data(object),), kwargs


def _array(data: Any, dtype: np.dtype | None = None, order: str = "K", ndmin: int = 0):
    return np.array(data, dtype=dtype, order=order, ndmin=ndmin, copy=True)


register("array", _array, kind="creation", normalize=_array_normalize, aliases=(np.array,),
         doc="np.array(data, dtype): a fresh array on every call. data is a (nested) tuple of "
             "constants and/or array values (capture maps proxies inside it to nodes)")


def _asarray_normalize(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    reject_device(device, "asarray")
    reject_like(like, "asarray")
    kwargs: dict[str, Any] = dtype_kw(dtype)
    kwargs.update(_order_kw(order, "K", ("C", "F", "A", "K")))
    if copy is not None:
        kwargs["copy"] = bool(copy)
    return (_data(a),), kwargs


def _asarray(data: Any, dtype: np.dtype | None = None, order: str = "K",
             copy: bool | None = None) -> np.ndarray:
    return np.asarray(data, dtype=dtype, order=order, copy=copy)


def _asarray_is_its_input(args: tuple, kwargs: dict) -> bool:
    """``np.asarray(a)`` of an array of the same dtype, in any order but ``C``/``F``, without
    ``copy=True``: NumPy returns ``a`` itself."""
    dtype = kwargs.get("dtype")
    return kwargs.get("order", "K") in ("K", "A") and kwargs.get("copy") is not True and (
        dtype is None or np.dtype(dtype) == args[0].dtype)


register("asarray", _asarray, kind="view", normalize=_asarray_normalize,
         aliases=(np.asarray, np.asanyarray), identity_on_arrays=_asarray_is_its_input,
         doc="np.asarray(a, dtype): returns a itself when no conversion is needed "
             "(hence kind 'view': the result may alias its input)")


def _ascontiguousarray_normalize(a, dtype=None, *, like=None):
    reject_like(like, "ascontiguousarray")
    return (_data(a),), dtype_kw(dtype)


def _ascontiguousarray(data: Any, dtype: np.dtype | None = None) -> np.ndarray:
    return np.ascontiguousarray(data, dtype=dtype)


register("ascontiguousarray", _ascontiguousarray, kind="view",
         normalize=_ascontiguousarray_normalize, aliases=(np.ascontiguousarray,),
         doc="np.ascontiguousarray(a, dtype): a itself when already C-contiguous")


def _constant_normalize(value):
    if contains_proxy(value):
        raise Unsupported("constant() takes a concrete value, not an array proxy")
    return (value,), {}


def _constant(value: Any) -> Any:
    return value.copy()


register("constant", _constant, kind="creation", normalize=_constant_normalize, literal=True,
         doc="an ndarray constant baked into the graph; a fresh copy on each run so "
             "mutations never leak between calls")

__all__: list[str] = []


# ---------------------------------------------------------------- derivatives (autodiff/)
def _define_creation_vjps() -> None:
    from .registry import define_vjp

    def same_values(ctx, g):  # asarray / ascontiguousarray of an array: the values pass through
        x = ctx.args[0]
        return (g.astype(x.dtype) if np.dtype(x.dtype).kind in "fc" else None,)

    define_vjp("asarray", same_values)
    define_vjp("ascontiguousarray", same_values)


_define_creation_vjps()
