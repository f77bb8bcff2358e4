"""Pointwise ops: every unary/binary NumPy ufunc numba can evaluate on scalars, plus
``where``, ``clip``, ``astype``, ``copy`` and friends.

Lowering is a numba scalar expression; the numba backend casts each result to the node's
dtype, so integer wrap-around and float32 rounding match NumPy.
"""

from __future__ import annotations

import operator

import numpy as np

from ..exc import Unsupported
from .registry import NUMPY_ONLY_ALL, register

# ufuncs numba cannot evaluate on scalars, or that return several values
_NOT_POINTWISE = {"matmul", "matvec", "vecmat", "vecdot", "frexp", "modf", "ldexp",
                  "heaviside", "isnat", "bitwise_count", "divmod"}

# operator dunder -> ufunc name (reflected forms are derived by the proxy)
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
    "eq": "equal", "ne": "not_equal",
}
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "invert": "invert", "abs": "absolute"}

_UFUNC_KWARGS = {"dtype", "casting", "out"}


def _ufunc_normalizer(ufunc: np.ufunc):
    def normalize(*args, **kwargs):
        unknown = set(kwargs) - _UFUNC_KWARGS
        if unknown:
            raise Unsupported(f"np.{ufunc.__name__} with keyword(s) {sorted(unknown)} is not supported")
        if len(args) != ufunc.nin:
            raise Unsupported(f"np.{ufunc.__name__} with {len(args)} positional arguments "
                              f"(expected {ufunc.nin}; pass out= by keyword)")
        if kwargs.pop("casting", "same_kind") != "same_kind":
            raise Unsupported(f"np.{ufunc.__name__} with casting other than 'same_kind'")
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = np.dtype(kwargs["dtype"])
        else:
            kwargs.pop("dtype", None)
        return args, kwargs
    return normalize


_UFUNC_METHODS = {"conjugate": ("conj", "conjugate")}  # ndarray methods that are ufuncs

# cheap enough to recompute in a later sweep instead of keeping their values (``OpDef.cheap``)
_CHEAP = {"add", "subtract", "multiply", "negative", "positive", "absolute", "fabs", "square",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "logical_xor", "logical_not", "maximum", "minimum",
          "fmax", "fmin", "sign", "conjugate", "bitwise_and", "bitwise_or", "bitwise_xor",
          "invert", "divide"}
COMPARISONS = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
# ``OpDef.python_int``: on Python ints, 64-bit arithmetic is Python's as is ("exact"), or after
# a check of the operands or the result ("checked": overflow, a zero divisor, a negative shift)
_PYTHON_INT = {
    **{name: "exact" for name in (*COMPARISONS, "bitwise_and", "bitwise_or", "bitwise_xor",
                                  "invert", "positive", "maximum", "minimum", "logical_not",
                                  "logical_and", "logical_or", "logical_xor")},
    **{name: "checked" for name in ("add", "subtract", "multiply", "negative", "absolute",
                                    "floor_divide", "remainder", "power", "left_shift",
                                    "right_shift")}}
# ``OpDef.python``: the Python operator an op is on Python numbers (``ops/python_scalars.py``)
_PYTHON = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "power": operator.pow, "left_shift": operator.lshift, "right_shift": operator.rshift,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge, "equal": operator.eq, "not_equal": operator.ne,
    "negative": operator.neg, "positive": operator.pos, "absolute": abs,
    "invert": operator.invert, "maximum": max, "minimum": min,
}
# ufuncs whose numba scalar loops differ from NumPy for these dtype kinds (``OpDef.numpy_only``)
_NUMPY_ONLY = {"reciprocal": "iu", "spacing": "fiub", "lcm": "iub", "nextafter": NUMPY_ONLY_ALL,
               "float_power": NUMPY_ONLY_ALL}


def _template(name: str, nin: int) -> str:
    return f"np.{name}(" + ", ".join(f"{{{i}}}" for i in range(nin)) + ")"


def _register_ufuncs() -> list[str]:
    seen: dict[int, str] = {}
    names = []
    for attr in sorted(dir(np)):
        ufunc = getattr(np, attr)
        if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.nin not in (1, 2):
            continue
        if ufunc.__name__ in _NOT_POINTWISE or id(ufunc) in seen:
            continue
        seen[id(ufunc)] = ufunc.__name__
        name = ufunc.__name__
        register(name, ufunc, kind="pointwise", scalar=_template(name, ufunc.nin),
                 methods=_UFUNC_METHODS.get(name, ()),
                 normalize=_ufunc_normalizer(ufunc), aliases=(ufunc,), ufunc=ufunc,
                 cheap=name in _CHEAP, comparison=name in COMPARISONS, python=_PYTHON.get(name),
                 python_int=_PYTHON_INT.get(name), numpy_only=_NUMPY_ONLY.get(name, ""),
                 doc=f"np.{name}, elementwise")
        names.append(name)
    return names


UFUNC_NAMES = _register_ufuncs()


def _where_normalize(condition, x=None, y=None):
    if x is None or y is None:
        raise Unsupported("np.where with one argument (np.nonzero) has a data-dependent shape")
    return (condition, x, y), {}


register("where", np.where, kind="pointwise", scalar="({1} if {0} else {2})", cheap=True,
         normalize=_where_normalize, aliases=(np.where,), doc="np.where(c, x, y)")


def _clip_normalize(a, a_min=None, a_max=None, out=None, **kwargs):
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    if kwargs:
        raise Unsupported(f"np.clip with keyword(s) {sorted(kwargs)} is not supported")
    if a_min is None and a_max is None:
        raise Unsupported("np.clip needs a_min or a_max")
    extra = {"out": out} if out is not None else {}
    return (a, a_min, a_max), extra


def _clip_impl(a, a_min, a_max, out=None):
    return np.clip(a, a_min, a_max, out=out)


register("clip", _clip_impl, kind="pointwise", normalize=_clip_normalize,
         aliases=(np.clip,), methods=("clip",),
         scalar="np.minimum(np.maximum({0}, {1}), {2})", cheap=True,
         doc="np.clip(a, lo, hi); a None bound is skipped")


def _round_normalize(a, decimals=0, out=None):
    if out is not None:
        return (a,), {"decimals": decimals, "out": out}
    return (a,), {"decimals": decimals}


def _round_impl(a, decimals=0, out=None):
    return np.round(a, decimals, out=out)


register("round", _round_impl, kind="pointwise", normalize=_round_normalize,
         aliases=(np.round, np.around), methods=("round",),
         scalar="np.round({0}, {decimals})", doc="np.round(a, decimals), half to even")


def _astype_normalize(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if casting != "unsafe":
        if not np.can_cast(getattr(a, "dtype", np.asarray(a).dtype), dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {a.dtype} to {np.dtype(dtype)} "
                            f"according to the rule {casting!r}")
    return (a, np.dtype(dtype)), {} if copy else {"copy": False}


def _astype_impl(a, dtype, copy=True):
    return np.asarray(a).astype(dtype, copy=copy) if not isinstance(a, np.generic) \
        else a.astype(dtype)


def _astype_returns_input(args: tuple, kwargs: dict) -> bool:
    return kwargs.get("copy", True) is False  # NumPy returns the input when no cast is needed


register("astype", _astype_impl, kind="pointwise", normalize=_astype_normalize,
         returns_input=_astype_returns_input,
         methods=("astype",), scalar="{0}", cheap=True, doc="a.astype(dtype): a cast, fused as one")


def _copy_normalize(a, order="K", **kwargs):
    if order not in ("K", "C", "A", "F"):
        raise Unsupported(f"copy(order={order!r}) is not supported")
    return (a,), {"order": order} if order != "K" else {}


def _copy_impl(a, order="K"):
    return np.array(a, copy=True, order=order)


register("copy", _copy_impl, kind="pointwise", normalize=_copy_normalize, order_arg=True,
         aliases=(np.copy,), methods=("copy",), method_kwargs=(("order", "C"),), scalar="{0}",
         cheap=True, doc="a fresh copy")


__all__ = ["UFUNC_NAMES", "BINARY_OPERATORS", "UNARY_OPERATORS", "COMPARISONS"]
