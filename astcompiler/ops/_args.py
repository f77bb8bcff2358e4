"""Argument helpers shared by the op families' normalizers.

A normalizer sees array *proxies* during capture: objects with ``.shape``, ``.ndim`` and
``.dtype`` and nothing else NumPy would accept. So these helpers never call NumPy on an array
argument; they only read those three attributes. Python and NumPy constants (ints, floats,
lists of numbers, real ``ndarray`` constants) may be inspected freely.

Sizes may be symbolic (a capture-time SymInt or a sympy expression in a proxy's shape): they are
kept as they are, never forced to ``int`` (which would specialize them).
"""

from __future__ import annotations

import inspect
import numbers
from typing import Any, Iterable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..exc import Unsupported


def is_array(x: Any) -> bool:
    """True for an ndarray or an array proxy (anything with ``shape`` and ``dtype``)
    that is not a NumPy scalar."""
    return not isinstance(x, np.generic) and hasattr(x, "shape") and hasattr(x, "dtype")


def is_proxy(x: Any) -> bool:
    """True for a capture-time array proxy (array-like but not a real ndarray)."""
    return is_array(x) and not isinstance(x, np.ndarray)


def ndim_of(x: Any) -> int:
    """Number of dimensions of an array, proxy, NumPy scalar, Python number or nested list."""
    if hasattr(x, "ndim"):
        return int(x.ndim)
    if isinstance(x, (list, tuple)):
        return 1 + (ndim_of(x[0]) if len(x) else 0)
    return 0


def dtype_of(x: Any) -> np.dtype | None:
    """The dtype of an array/proxy/NumPy scalar, else None (Python values: NumPy decides)."""
    dtype = getattr(x, "dtype", None)
    return None if dtype is None else np.dtype(dtype)


def as_dtype(dtype: Any) -> np.dtype | None:
    """``None`` stays None; everything else becomes an ``np.dtype`` (TypeError as NumPy)."""
    return None if dtype is None else np.dtype(dtype)


def _is_concrete_int(v: Any) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, np.timedelta64)


def as_dim(v: Any) -> Any:
    """One size: a Python int when concrete (ValueError if negative), symbolic sizes unchanged.

    Raises TypeError for floats/strings (as NumPy does) and ``Unsupported`` for an array proxy
    (a size read from array data makes the result's shape data-dependent).
    """
    if isinstance(v, bool) or isinstance(v, np.bool_):
        raise TypeError(f"expected a sequence of integers or a single integer, got {v!r}")
    if _is_concrete_int(v):
        v = int(v)
        if v < 0:
            raise ValueError("negative dimensions are not allowed")
        return v
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu":
        return as_dim(v.item())
    if is_proxy(v):
        raise Unsupported("a size computed from array data (data-dependent shape) is not supported")
    if isinstance(v, (numbers.Number, str, bytes, list, tuple, dict, type(None), np.generic)):
        raise TypeError(f"{type(v).__name__!r} object cannot be interpreted as an integer")
    return v  # a symbolic size (SymInt / sympy expression)


def as_shape(shape: Any) -> tuple:
    """A shape argument (an int or a sequence of ints/symbolic sizes) as a tuple."""
    if isinstance(shape, (tuple, list)):
        return tuple(as_dim(s) for s in shape)
    if isinstance(shape, np.ndarray) and shape.ndim == 1:
        return tuple(as_dim(s) for s in shape.tolist())
    return (as_dim(shape),)


def axis_index(axis: Any, ndim: int, name: str | None = None) -> int:
    """One axis in ``[0, ndim)`` (AxisError/TypeError as NumPy)."""
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{type(axis).__name__!r} object cannot be interpreted as an integer")
    if name is None:
        return int(normalize_axis_index(axis, ndim))
    return int(normalize_axis_index(axis, ndim, name))


def axis_tuple(axis: Any, ndim: int, *, sort: bool = False) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of axes in ``[0, ndim)`` (no duplicates)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    axes = tuple(int(a) for a in normalize_axis_tuple(axis, ndim))
    return tuple(sorted(axes)) if sort else axes


def optional_axis(axis: Any, ndim: int) -> int | None:
    """``None`` (flatten) or one normalized axis."""
    return None if axis is None else axis_index(axis, ndim)


def freeze(value: Any) -> Any:
    """Lists (nested) become tuples so canonical args are hashable; other values unchanged."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def contains_proxy(value: Any) -> bool:
    """True if ``value`` (possibly nested lists/tuples) holds an array proxy."""
    if isinstance(value, (list, tuple)):
        return any(contains_proxy(v) for v in value)
    return is_proxy(value)


def array_sequence(arrays: Any, fname: str) -> tuple:
    """The sequence argument of concatenate/stack/... as a tuple of its items."""
    if is_array(arrays):
        if is_proxy(arrays):
            raise Unsupported(f"np.{fname} of a single array (iterating over its first axis) "
                              f"is not supported; pass a list of arrays")
        return tuple(arrays)
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{fname}() argument must be a sequence of arrays")
    return tuple(freeze(a) for a in arrays)


def reject_out(out: Any, fname: str) -> None:
    """``out=`` is not captured by these ops (a graph break keeps NumPy's semantics)."""
    if out is not None:
        raise Unsupported(f"np.{fname}(..., out=...) is not supported")


def reject_like(like: Any, fname: str) -> None:
    if like is not None:
        raise Unsupported(f"np.{fname}(..., like=...) is not supported")


def check_casting(casting: str, fname: str) -> None:
    if casting != "same_kind":
        raise Unsupported(f"np.{fname}(casting={casting!r}) is not supported")


def check_order(order: Any, allowed: Iterable[str] = ("C", "F", "A", "K"),
                default: str = "C") -> str:
    """An ``order=`` argument, upper-cased; None is ``default`` (ValueError as NumPy)."""
    if order is None:
        return default
    if not isinstance(order, str) or order.upper() not in tuple(allowed):
        raise ValueError(f"order must be one of {', '.join(repr(o) for o in allowed)} "
                         f"(got {order!r})")
    return order.upper()


def reject_device(device: Any, fname: str) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"Device not understood. Only \"cpu\" is allowed, but received: {device}")


def maybe(**kwargs: Any) -> dict:
    """Keyword arguments whose value is not None (keeps canonical kwargs short)."""
    return {k: v for k, v in kwargs.items() if v is not None}


_SIGNATURES: dict[int, tuple[Any, inspect.Signature]] = {}


def signature_of(fn: Any) -> inspect.Signature:
    """``inspect.signature(fn)``, cached by identity."""
    hit = _SIGNATURES.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    sig = inspect.signature(fn)
    _SIGNATURES[id(fn)] = (fn, sig)
    return sig


def bind(fn: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Bind a call to ``fn``'s own signature (TypeError as a direct call would raise), with
    defaults applied; parameters left at NumPy's ``<no value>`` default are dropped."""
    bound = signature_of(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if v is not np._NoValue}


def dtype_kw(dtype: Any) -> dict:
    """``{"dtype": np.dtype}`` for an explicit dtype, ``{}`` for None (NumPy's default)."""
    return {} if dtype is None else {"dtype": np.dtype(dtype)}
