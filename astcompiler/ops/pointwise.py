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
# ``OpDef.fp_quiet`` "f": ufuncs that never raise an FP flag on real operands of their own dtype
# (sign changes, rounding to integers, max/min, classification)
_FP_QUIET = {"negative", "positive", "absolute", "fabs", "conjugate", "copysign", "signbit",
             "isnan", "isinf", "isfinite", "sign", "maximum", "minimum", "fmax", "fmin", "floor",
             "ceil", "trunc", "rint", "logical_and", "logical_or", "logical_xor", "logical_not"}
# ``OpDef.integer_division``: on integers they warn on a zero divisor (or raise on a negative power)
_INTEGER_DIVISIONS = {"floor_divide", "remainder", "fmod", "power"}
# ``OpDef.scalar_overflow``: as operators on NumPy integer scalars they warn where they wrap
_SCALAR_OVERFLOW = {"add", "subtract", "multiply", "negative", "absolute"}
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
                 fp_quiet="f" if name in _FP_QUIET else "",
                 integer_division=name in _INTEGER_DIVISIONS,
                 scalar_overflow=name in _SCALAR_OVERFLOW,
                 doc=f"np.{name}, elementwise")
        names.append(name)
    return names


UFUNC_NAMES = _register_ufuncs()


def _where_normalize(condition, x=None, y=None):
    if x is None or y is None:
        raise Unsupported("np.where with one argument (np.nonzero) has a data-dependent shape")
    return (condition, x, y), {}


register("where", np.where, kind="pointwise", scalar="({1} if {0} else {2})", cheap=True,
         fp_quiet="fc",
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


# ---------------------------------------------------------------- derivatives (autodiff/)
def _define_pointwise_vjps() -> None:
    from .derivatives import binary, sum_to, unary, zero_rule
    from .registry import define_vjp

    ln2, ln10 = float(np.log(2.0)), float(np.log(10.0))
    unaries = {
        "negative": lambda x, z: -1.0, "positive": lambda x, z: 1.0,
        "exp": lambda x, z: z, "exp2": lambda x, z: z * ln2, "expm1": lambda x, z: z + 1.0,
        "log": lambda x, z: 1.0 / x, "log2": lambda x, z: 1.0 / (x * ln2),
        "log10": lambda x, z: 1.0 / (x * ln10), "log1p": lambda x, z: 1.0 / (x + 1.0),
        "sin": lambda x, z: np.cos(x), "cos": lambda x, z: -np.sin(x),
        "tan": lambda x, z: 1.0 + z * z, "tanh": lambda x, z: 1.0 - z * z,
        "sinh": lambda x, z: np.cosh(x), "cosh": lambda x, z: np.sinh(x),
        "arcsin": lambda x, z: 1.0 / np.sqrt(1.0 - x * x),
        "arccos": lambda x, z: -1.0 / np.sqrt(1.0 - x * x),
        "arctan": lambda x, z: 1.0 / (1.0 + x * x),
        "arcsinh": lambda x, z: 1.0 / np.sqrt(x * x + 1.0),
        "arccosh": lambda x, z: 1.0 / np.sqrt(x * x - 1.0),
        "arctanh": lambda x, z: 1.0 / (1.0 - x * x),
        "sqrt": lambda x, z: 0.5 / z, "cbrt": lambda x, z: 1.0 / (3.0 * z * z),
        "square": lambda x, z: 2.0 * x, "absolute": lambda x, z: np.sign(x),
        "fabs": lambda x, z: np.sign(x), "reciprocal": lambda x, z: -(z * z),
    }
    for name, derivative in unaries.items():
        define_vjp(name, unary(derivative))
    for name in ("floor", "ceil", "trunc", "rint", "sign", "round"):
        define_vjp(name, zero_rule)

    def pow_dy(g, x, y, z):
        return g * z * np.log(np.where(x > 0, x, 1.0))

    def half_ties(g, x, y, z, first):  # maximum/minimum: a tie splits the gradient (as JAX)
        wins = (x > y) if first else (y > x)  # selects from g: float32 stays float32
        return np.where(wins, g, np.where(x == y, 0.5 * g, 0.0))

    def half_ties_min(g, x, y, z, first):
        wins = (x < y) if first else (y < x)
        return np.where(wins, g, np.where(x == y, 0.5 * g, 0.0))

    binaries = {
        "add": (lambda g, x, y, z: g, lambda g, x, y, z: g),
        "subtract": (lambda g, x, y, z: g, lambda g, x, y, z: -g),
        "multiply": (lambda g, x, y, z: g * y, lambda g, x, y, z: g * x),
        "divide": (lambda g, x, y, z: g / y, lambda g, x, y, z: -g * z / y),
        "power": (lambda g, x, y, z: g * y * np.power(x, y - 1), pow_dy),
        "maximum": (lambda g, x, y, z: half_ties(g, x, y, z, True),
                    lambda g, x, y, z: half_ties(g, x, y, z, False)),
        "minimum": (lambda g, x, y, z: half_ties_min(g, x, y, z, True),
                    lambda g, x, y, z: half_ties_min(g, x, y, z, False)),
        "arctan2": (lambda g, x, y, z: g * y / (x * x + y * y),
                    lambda g, x, y, z: -g * x / (x * x + y * y)),
        "hypot": (lambda g, x, y, z: g * x / z, lambda g, x, y, z: g * y / z),
        "logaddexp": (lambda g, x, y, z: g * np.exp(x - z), lambda g, x, y, z: g * np.exp(y - z)),
    }
    symmetric = {"add", "multiply", "maximum", "minimum", "hypot", "logaddexp"}
    for name, (dx, dy) in binaries.items():
        define_vjp(name, binary(dx, dy, symmetric=name in symmetric))

    def where_vjp(ctx, g):
        c, x, y = ctx.args
        gx = sum_to(np.where(c, g, 0.0), x) if ctx.want(1) else None
        gy = sum_to(np.where(c, 0.0, g), y) if ctx.want(2) else None
        return None, gx, gy

    def clip_vjp(ctx, g):
        a, lo, hi = ctx.args
        inside = np.ones_like(a, dtype=bool) if lo is None else a >= lo
        if hi is not None:
            inside = inside & (a <= hi)
        ga = np.where(inside, g, 0.0) if ctx.want(0) else None
        glo = sum_to(np.where(a < lo, g, 0.0), lo) if ctx.want(1) else None
        ghi = sum_to(np.where(a > hi, g, 0.0), hi) if ctx.want(2) else None
        return ga, glo, ghi

    def astype_vjp(ctx, g):
        x = ctx.args[0]
        return (g.astype(x.dtype) if np.dtype(x.dtype).kind in "fc" else None), None

    define_vjp("where", where_vjp)
    define_vjp("clip", clip_vjp)
    define_vjp("astype", astype_vjp)
    define_vjp("copy", lambda ctx, g: (g,))


_define_pointwise_vjps()
