"""Numba rules of pointwise ops (ufuncs, ``where``, ``clip``, ``round``, ``astype``, ``copy``).

Two spellings per op, both listed in the op table (``optable.py``):

* the *element* rule, ``(node, weak) -> ScalarRule | None``: one element in a fused kernel
  (``plan.py``/``cpu.py``). Ufuncs need none: ``scalar.lower_pointwise`` picks NumPy's loop
  dtypes and the helpers where numba's scalar ufunc differs from NumPy's;
* the *loop* rule, ``(emitter, node) -> str``: the op on arrays or NumPy scalars in a structured
  function, written as a numba user writes NumPy (``np.where``, ``np.maximum``, ``.astype``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from .oprules_common import (NOT_MINE, LoopEmitter, NotLowerable, dtype_of, is_compare,
                             weak_int)
from .region_ops import FITS
from .scalar import (ScalarRule, UfuncRule, constant, float_select, helper_call, helper_source,
                     kernel_dtype, kernel_operand, operand_dtype, scalar_math_loop, type_name,
                     unsigned)
from .vecmath import VecFunction

# -- the vecmath function each ufunc uses in kernels (``NumbaRule.vecmath``; ``vecmath/``) -------

VECMATH: dict[str, VecFunction] = {
    "exp": VecFunction("expfamily"),
    "exp2": VecFunction("expfamily"),
    "expm1": VecFunction("expfamily", native_float32=True),
    "log": VecFunction("logfamily"),
    "log2": VecFunction("logfamily"),
    "log10": VecFunction("logfamily"),
    "log1p": VecFunction("logfamily", native_float32=True),
    "sin": VecFunction("trig", native_float32=True, fast_float64=True),
    "cos": VecFunction("trig", native_float32=True, fast_float64=True),
    "tan": VecFunction("trig"),
    "tanh": VecFunction("hyperbolic", native_float32=True),
    "sinh": VecFunction("hyperbolic"),
    "cosh": VecFunction("hyperbolic"),
    "arctan": VecFunction("inverse"),
    "arctan2": VecFunction("inverse"),
    "cbrt": VecFunction("inverse"),
    # float32 power (float64 arithmetic, about 7 ns an element) is slower than libm's powf
    # (about 4.6 ns), measured side by side: implemented and tested, kernels keep libm
    "power": VecFunction("power", float32_in_kernels=False),
}

# -- elements of fused kernels -------------------------------------------------------------------


def _readable(node: Node, indices: tuple[int, ...]) -> bool:
    return all(kernel_operand(node.args[i]) for i in indices)


def where_element(node: Node, weak: dict[Node, type]) -> ScalarRule | None:
    """``np.where(c, x, y)``: a conditional expression in the result dtype."""
    if len(node.args) != 3 or not _readable(node, (0, 1, 2)):
        return None
    out = np.dtype(node.meta.dtype)
    return ScalarRule((np.dtype(bool), out, out), "({1} if {0} else {2})", out)


def clip_element(node: Node, weak: dict[Node, type]) -> ScalarRule | None:
    """``np.clip(a, lo, hi)`` as NumPy computes it: max with ``lo``, then min with ``hi``."""
    if len(node.args) != 3 or node.kwargs:
        return None
    out = np.dtype(node.meta.dtype)
    a, lo, hi = node.args
    source = a.meta.dtype if isinstance(a, Node) and a.meta is not None else None
    if source is not None and np.dtype(source).kind in "iu":  # NumPy's np.clip (NEP 50):
        info = np.iinfo(source)  # a Python int bound beyond the dtype's range is dropped
        lo = None if type(lo) is int and lo <= info.min else lo
        hi = None if type(hi) is int and hi >= info.max else hi
        if any(type(v) is int and not info.min <= v <= info.max for v in (lo, hi)):
            return None  # NumPy raises OverflowError
    used = tuple(i for i, v in enumerate((a, lo, hi)) if v is not None)
    if not _readable(node, used) or 0 not in used:
        return None
    expr = "{0}"
    if out.kind == "f":  # NumPy's clip: max, then min, each keeping a NaN first operand
        if lo is not None:
            expr = float_select(">", expr, "{1}")
        if hi is not None:
            expr = float_select("<", expr, "{2}")
    else:
        if lo is not None:
            expr = f"np.maximum({expr}, {{1}})"
        if hi is not None:
            expr = f"np.minimum({expr}, {{2}})"
    dts = tuple(out if v is not None else None for v in (a, lo, hi))
    return ScalarRule(dts, expr, out, operands=used)


def round_element(node: Node, weak: dict[Node, type]) -> ScalarRule | None:
    """``np.round(a, decimals)``: ``rint`` of the scaled value, as NumPy rounds (half to even)."""
    decimals = node.kwargs.get("decimals", 0)
    if set(node.kwargs) - {"decimals"} or not isinstance(decimals, (int, np.integer)):
        return None
    if len(node.args) != 1 or not kernel_operand(node.args[0]):
        return None
    out = np.dtype(node.meta.dtype)
    src = operand_dtype(node.args[0], weak)
    if not isinstance(src, np.dtype) or src != out:
        return None
    if out.kind in "iu":
        return ScalarRule((out,), "{0}", out) if decimals >= 0 else None
    if out.kind != "f":
        return None
    if decimals == 0:
        return ScalarRule((out,), "np.rint({0})", out)
    factor = constant(10.0 ** abs(int(decimals)), out)
    if decimals > 0:
        return ScalarRule((out,), f"np.divide(np.rint(np.multiply({{0}}, {factor})), {factor})",
                          out)
    return ScalarRule((out,), f"np.multiply(np.rint(np.divide({{0}}, {factor})), {factor})", out)


def cast_element(node: Node, weak: dict[Node, type]) -> ScalarRule | None:
    """``astype`` / ``copy``: the value itself, cast to the node's dtype. Not where the op may
    return its input itself (``OpDef.returns_input``), nor for a layout the kernel cannot write
    (``order="A"``, ``OpDef.order_arg``)."""
    if not node.args or not kernel_operand(node.args[0]):
        return None
    op = REGISTRY[node.target]
    if op.returns_input is not None and op.returns_input(node.args, node.kwargs):
        return None  # may return its input itself: NumPy decides
    if op.order_arg and node.kwargs.get("order", "K") not in ("K", "C", "F"):
        return None
    return ScalarRule((None,), "{0}", None, operands=(0,))


# -- ufuncs where numba's scalar loop differs from NumPy's (``NumbaRule.ufunc``) -----------------
# Each is ``(loop input dtypes, output dtype, node) -> ScalarRule | False | None``: False, the
# node runs with NumPy; None, numba's own ufunc computes NumPy's values.


def _operands(ins: tuple) -> str:
    return ", ".join(f"{{{i}}}" for i in range(len(ins)))


def _helper(key: str, ins: tuple, out: np.dtype) -> ScalarRule:
    return ScalarRule(ins, f"{helper_call(key)}({_operands(ins)})", out, (key,))


def modular_int(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | None:
    """Signed ``+ - * negative square``: the same bits as in the unsigned dtype of the width.
    numba's signed arithmetic is ``nsw`` (LLVM may compute an int8 product in 64 bits), NumPy's
    wraps, so kernels compute in the unsigned twin."""
    if ins[0].kind != "i" or out != ins[0]:
        return None
    name = REGISTRY[node.target].ufunc.__name__
    return ScalarRule((unsigned(out),) * len(ins), f"{type_name(out)}(np.{name}({_operands(ins)}))",
                      out)


def absolute_int(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | None:
    """``abs`` of signed ints: ``abs(MIN)`` is MIN, as in NumPy."""
    if ins[0].kind != "i":
        return None
    return ScalarRule(ins, f"({type_name(out)}(np.negative({type_name(unsigned(out))}({{0}})))"
                           " if {0} < 0 else {0})", out)


def division(stem: str, float_key: str | None) -> UfuncRule:
    """Integer division ufuncs by NumPy-exact helpers (``x // 0`` is 0 and raises NumPy's flag,
    ``MIN // -1`` wraps); floats by ``float_key``'s helper (None: numba's is NumPy's)."""
    def rule(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | None:
        kind = ins[0].kind
        if kind in "iu":
            return _helper(f"{stem}_{'int' if kind == 'i' else 'uint'}:{ins[0].name}", ins, out)
        if kind == "f" and float_key is not None:  # remainder: a zero has the divisor's sign
            return _helper(f"{float_key}:{ins[0].name}", ins, out)
        return None
    return rule


def float_extremum(symbol: str) -> UfuncRule:
    """Float ``maximum`` (``>``) / ``minimum`` (``<``): NaN propagates, ties give the second.
    Python's ``max(a, b)``/``min(a, b)`` of Python floats (a node typed ``float``) keep ``a``
    unless ``b`` wins: ``max(1.0, nan)`` is 1.0, ``max(nan, 1.0)`` nan."""
    def rule(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | None:
        if ins[0].kind != "f":
            return None
        if node.meta is not None and node.meta.pytype is float:
            return ScalarRule(ins, f"({{1}} if {{1}} {symbol} {{0}} else {{0}})", out)
        return ScalarRule(ins, float_select(symbol, "{0}", "{1}"), out)
    return rule


def numpy_float_loop(ins: tuple, out: np.dtype, node: Node) -> bool | None:
    """``fmax``/``fmin`` of floats: NumPy's result for -0.0 against 0.0 depends on its SIMD loop
    and the array's length, so NumPy computes them."""
    return False if ins[0].kind == "f" else None


def sign(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | bool | None:
    """``sign(-0.0)`` is 0.0 (NaN stays NaN); unsigned: 0 or 1; bool: NumPy's (it raises)."""
    T, kind = type_name(out), ins[0].kind
    if kind == "f":
        return ScalarRule(ins, f"({T}(1.0) if {{0}} > 0 else ({T}(-1.0) if {{0}} < 0 else "
                               f"({T}(0.0) if {{0}} == 0 else {{0}})))", out)
    if kind == "u":
        return ScalarRule(ins, f"{T}({{0}} != 0)", out)
    return False if kind == "b" else None


def shift(left: bool) -> UfuncRule:
    """Shifts by the width or more (or negative counts) as NumPy: 0, or -1 for a negative
    signed value shifted right."""
    def rule(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | None:
        kind = ins[0].kind
        if kind not in "iu":
            return None
        base = "lshift" if left else ("rshift_int" if kind == "i" else "rshift_uint")
        return _helper(f"{base}:{ins[0].name}", ins, out)
    return rule


def integer_power(ins: tuple, out: np.dtype, node: Node) -> ScalarRule | bool | None:
    """Integer ``power`` by squaring, wrapping like NumPy, for a constant exponent >= 0 (NumPy
    raises on negative integer powers: NumPy computes the rest)."""
    if ins[0].kind not in "iu":
        return None
    exponent = node.args[1]
    if isinstance(exponent, Node) or not (isinstance(exponent, (int, np.integer))
                                            and not isinstance(exponent, bool) and exponent >= 0):
        return False
    return _helper(f"power_int:{ins[0].name}", ins, out)


def integer_constant_exponent(node: Node) -> bool:
    """``x ** 2``, ``x ** i`` with a traced int keep libm's pow (``NumbaRule.keeps_libm``): exact
    enough there, and the inlined vector power (an extra-precision log and exp) costs seconds of
    compile time per kernel."""
    if len(node.args) != 2 or isinstance(node.args[1], Node):
        return False
    exponent = node.args[1]
    return isinstance(exponent, (int, float, np.integer, np.floating)) \
        and float(exponent).is_integer()


# -- loop code -------------------------------------------------------------------------------------


def where_loop(emitter: LoopEmitter, node: Node) -> str:
    """``np.where`` of arrays; of scalars a conditional expression."""
    like = node.meta.dtype if node.meta is not None else None
    c, x, y = (emitter.value(a, like) for a in node.args)
    if node.meta is not None and node.meta.ndim == 0:
        return f"({x} if {c} else {y})"
    return f"np.where({c}, {x}, {y})"


def clip_loop(emitter: LoopEmitter, node: Node) -> Any:
    """NumPy's clip: ``np.maximum`` with the low bound, then ``np.minimum`` with the high one,
    cast back to the result dtype."""
    args, meta = node.args, node.meta
    if node.kwargs:
        return NOT_MINE
    like = meta.dtype if meta is not None else None
    text = emitter.value(args[0], like)
    for fn, bound in (("np.maximum", args[1]), ("np.minimum", args[2])):
        if bound is not None:
            text = f"{fn}({text}, {emitter.value(bound, like)})"
    if meta.ndim and dtype_of((args[0],)) != np.dtype(like):
        text = f"{text}.astype({type_name(like)})"
    return text


def astype_loop(emitter: LoopEmitter, node: Node) -> str:
    """``a.astype(dtype)``; a scalar is cast by the statement that binds it."""
    if node.meta is not None and node.meta.ndim == 0:
        return emitter.value(node.args[0])
    return f"{emitter.value(node.args[0])}.astype({type_name(node.args[1])})"


def copy_loop(emitter: LoopEmitter, node: Node) -> str:
    """``a.copy()`` (numba's copies are C-ordered); a scalar is its own copy."""
    if node.meta is not None and node.meta.ndim:
        return f"{emitter.value(node.args[0])}.copy()"
    return emitter.value(node.args[0])


def ufunc_loop(emitter: LoopEmitter, node: Node) -> str:
    """A ufunc on arrays or NumPy scalars as ``np.<ufunc>(...)``: Python numbers typed like the
    result (NEP 50 weak), compared in the other operand's dtype; ``dtype=`` casts the operands;
    a Python int meeting a fixed-width int is checked to fit (``weak_int_source``)."""
    target, args = node.target, node.args
    op = REGISTRY.ops.get(target)
    if op is None or op.kind != "pointwise" or op.ufunc is None:
        raise NotLowerable(f"op {target}")
    if node.kwargs:
        return _ufunc_with_dtype(emitter, node)
    like = node.meta.dtype if node.meta is not None else None
    if op.ufunc is np.power and _complex_square(node):  # NumPy squares: z ** 2 is z * z
        base = emitter.value(args[0], like)
        return f"({base} * {base})"
    values = [weak_int_source(emitter, a, like, target) if weak_int(a) else
              emitter.value(a, like if not is_compare(target) else dtype_of(args)) for a in args]
    checked = scalar_math_loop(node, values)  # NumPy's integer scalar math: its overflow flag
    if checked is None:
        checked = integer_division_loop(node, values)  # exact at 0 and MIN // -1, no trap
    if checked is None:
        checked = integer_power_loop(node, values)  # exact, not through float64
    if checked is None and _float_scalar_extremum(node):  # numba's keeps the first on ties
        symbol = ">" if target == "maximum" else "<"
        like = np.dtype(node.meta.dtype)
        return f"{type_name(like)}({float_select(symbol, values[0], values[1])})"
    if checked is None and _integer_array_power(node):
        raise NotLowerable("integer power of arrays in loop code (numba's goes through float64)")
    if checked is not None:
        emitter.helpers.add(checked[1])
        return checked[0]
    return f"np.{target}({', '.join(values)})"


_DIVISIONS = {"floor_divide": "floordiv", "remainder": "remainder", "fmod": "fmod"}


def integer_division_loop(node: Node, operands: list[str]) -> tuple[str, str] | None:
    """Loop code of an integer ``//``, ``%`` or ``fmod`` on NumPy scalars (``a[i] % b[i]``):
    the kernels' exact helper (``x // 0`` and ``x % 0`` are 0 and raise NumPy's divide flag,
    ``MIN // -1`` wraps raising its overflow flag, ``MIN % -1`` is 0), never numba's
    ``np.remainder``, whose ``MIN % -1`` is a hardware trap (SIGFPE: the process dies).
    Returns (the call, the helper's module source), or None for other nodes."""
    stem = _DIVISIONS.get(node.target)
    meta = node.meta
    if stem is None or meta is None or meta.ndim != 0 or meta.pytype is not None \
            or np.dtype(meta.dtype).kind not in "iu" or not kernel_dtype(meta.dtype):
        return None
    dtype = np.dtype(meta.dtype)
    if dtype.kind == "u" and stem == "fmod":
        stem = "remainder"  # (unsigned: they agree)
    key = f"{stem}_{'int' if dtype.kind == 'i' else 'uint'}:{dtype.name}"
    source = ("\nfrom astcompiler.lower.numba.runtime import fp_divide_by_zero, fp_overflow\n\n\n"
              f"@numba.njit(cache=True, error_model=\"numpy\")\n{helper_source(key)}")
    T = type_name(dtype)
    return f"{helper_call(key)}({', '.join(f'{T}({v})' for v in operands)})", source


def integer_power_loop(node: Node, operands: list[str]) -> tuple[str, str] | None:
    """Loop code of an integer ``**`` on NumPy scalars (``x[i] ** e[i]``): exact by squaring,
    wrapping like NumPy (numba's ``np.power`` of ints goes through float64: ``3 ** 39`` off by
    11), a negative exponent raising NumPy's ValueError. None for other nodes."""
    meta = node.meta
    if node.target != "power" or meta is None or meta.ndim != 0 or meta.pytype is not None \
            or np.dtype(meta.dtype).kind not in "iu" or not kernel_dtype(meta.dtype):
        return None
    dtype = np.dtype(meta.dtype)
    key = f"power_checked_int:{dtype.name}"
    decorator = "@numba.njit(cache=True, error_model=\"numpy\")\n"
    source = (f"\n\n{decorator}{helper_source(f'power_int:{dtype.name}')}\n\n"
              f"{decorator}{helper_source(key)}")
    T = type_name(dtype)
    return f"{helper_call(key)}({', '.join(f'{T}({v})' for v in operands)})", source


def _float_scalar_extremum(node: Node) -> bool:
    """``np.maximum``/``np.minimum`` of two float scalars (``m = np.maximum(m, x[i])``):
    NumPy's gives the second on ties (``maximum(0.0, -0.0)`` is ``-0.0``) and propagates NaN."""
    meta = node.meta
    return node.target in ("maximum", "minimum") and meta is not None and meta.ndim == 0 \
        and meta.pytype is None and np.dtype(meta.dtype).kind == "f" and len(node.args) == 2


def _integer_array_power(node: Node) -> bool:
    meta = node.meta
    return node.target == "power" and meta is not None and meta.ndim > 0 \
        and np.dtype(meta.dtype).kind in "iu"


def weak_int_source(emitter: LoopEmitter, value: Node, like: np.dtype | None, target: str) -> str:
    """A Python int meeting a fixed-width integer op: NumPy raises OverflowError when it does
    not fit the dtype (NEP 50); the kernel raises it too, and the graph reruns with NumPy."""
    text = emitter.value(value)
    if like is None or np.dtype(like).kind not in "iu" or is_compare(target):
        return text
    dtype = np.dtype(like)
    info = np.iinfo(dtype)
    emitter.helpers.add(FITS.format(dtype=dtype.name, low=int(info.min), high=int(info.max)))
    return f"_ac_fits_{dtype.name}({text})"


def _ufunc_with_dtype(emitter: LoopEmitter, node: Node) -> str:
    """``np.add(a, b, dtype=d)``: the operands cast to ``d``, then the ``d`` loop."""
    dtype = node.kwargs.get("dtype")
    if set(node.kwargs) != {"dtype"} or is_compare(node.target) \
            or np.dtype(node.meta.dtype) != dtype:
        raise NotLowerable(f"{node.target} with keywords {sorted(node.kwargs)}")
    cast = type_name(dtype)
    operands = [f"{emitter.value(a)}.astype({cast})" if isinstance(a, Node) and a.meta is not None
                and a.meta.ndim else f"{cast}({emitter.value(a)})" for a in node.args]
    return f"np.{node.target}({', '.join(operands)})"


def _complex_square(node: Node) -> bool:
    """``z ** 2`` of a complex array with a Python 2: NumPy's fast path multiplies (numba's
    general complex power is slower and rounds differently)."""
    base, exponent = node.args[0], node.args[1]
    return isinstance(base, Node) and base.meta is not None and base.meta.ndim > 0 \
        and np.dtype(base.meta.dtype).kind == "c" and type(exponent) in (int, float) \
        and exponent == 2
