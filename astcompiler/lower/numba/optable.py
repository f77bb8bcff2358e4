"""The numba target's op table: how each op becomes numba code, in one place.

What an op *is* lives in its ``OpDef`` (``ops/``): its ufunc, scalar template, reduction rule and
flags (``cheap``, ``comparison``, ``python_int``, ``numpy_only``, ``store``, ...). ``TABLE`` holds
what is particular to numba source, one ``NumbaRule`` per op:

* ``element``: one element of the op in a fused kernel (``plan.py``/``cpu.py``). None: the
  ufunc's rule (``scalar.lower_pointwise``: NumPy's loop dtypes, exact helpers where numba's
  scalar ufunc differs) or the ``OpDef.scalar`` template; reductions follow ``OpDef.reduction``
  (``scalar.lower_reduction``);
* ``loop``: the op in loop code, a structured function (``structured.py``): ``(emitter, node)
  -> source`` (None for a statement). None, or a rule answering ``NOT_MINE``: lowered by kind,
  as every op on Python numbers (``python``) and every ufunc (``np.<ufunc>(...)``);
* ``python``: the op on Python numbers in loop code (``oprules_python.PythonRule``), with its
  Python-int policy from ``OpDef.python_int`` (``checked_int``: its overflow-checked helper);
* ``complex``: the op on complex values in a fused kernel (``complex_ops.ComplexRule``), only
  where the kernel computes NumPy's bits; None: complex nodes of the op stay NumPy steps;
* the helpers a rule calls are added by the rule itself (``region_ops`` sources for loop code,
  ``scalar`` helpers for kernels).

The rules are functions of the op's family module: ``oprules_pointwise`` (ufuncs, where, clip,
round, astype, copy), ``oprules_python`` (Python numbers, conversions), ``oprules_arrays``
(indexing, stores, creation, views, manipulation), ``oprules_linalg`` (dot, matmul, outer,
linalg), ``oprules_reductions``. The generic emitters name no op: they ask ``element_rule`` and
``loop_source``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from . import oprules_arrays as arrays
from . import oprules_linalg as linalg
from . import oprules_pointwise as pointwise
from . import oprules_python as python
from .complex_ops import ComplexRule
from .oprules_common import (NOT_MINE, LoopEmitter, LoopRule, NotLowerable, reads_index,
                             region_result, stores_index)
from .oprules_python import PythonRule
from .oprules_reductions import reduction
from .region_ops import PY_COMPLEX
from .scalar import ScalarRule, UfuncRule, lower_pointwise
from .vecmath import VecFunction

__all__ = ["NumbaRule", "TABLE", "numba_rule", "zero_rerun", "empty_rerun", "numpy_rerun",
           "element_rule", "gather_rule",
           "loop_source",
           "value_range",
           "NotLowerable",
           "NOT_MINE", "LoopEmitter", "region_result", "reads_index", "stores_index"]

ElementRule = Callable[[Node, dict[Node, type]], "ScalarRule | None"]  # (node, weak operands)
# (the value ranges known, node) -> the [lo, hi] interval of its integer value, or None
RangeRule = Callable[[Any, Node], "tuple[Any, Any] | None"]


@dataclass(frozen=True)
class NumbaRule:
    """How one op becomes numba code (see the module docstring)."""

    element: ElementRule | None = None
    loop: LoopRule | None = None
    python: PythonRule | None = None
    checked_int: bool = False  # Python ints: ``python.int`` is an overflow-checked 64-bit helper
    complex: ComplexRule | None = None  # complex values in fused kernels, NumPy's bits
    ufunc: UfuncRule | None = None  # where numba's scalar ufunc differs from NumPy's (kernels)
    keeps_libm: Callable[[Node], bool] | None = None  # True: no vector math for this node
    vecmath: VecFunction | None = None  # its vectorizable function (``vecmath/``) in kernels
    value_range: RangeRule | None = None  # an integer result's range, for index-bound proofs
    scan: str | None = None  # a sequential scan's combine operator (``scans.py``: NumPy's bits)
    product_ndim: int | None = None  # a matrix product: the most dims of its operands (CUDA)
    flags_only: bool = False  # a NumPy step that warns only through FP flags (a BLAS call, a sum)
    gather: Callable[[Node], "ScalarRule | None"] | None = None  # read at index arrays in kernels
    # a float max/min reduction: a zero result reruns the call with NumPy, whose sign of zero
    # follows its CPU's SIMD lane order (``runtime.zero_watch``; docs/performance.md)
    zero_rerun: bool = False
    # a mean/var/std: over no degrees of freedom (an empty slice) NumPy warns in Python, which
    # no FP flag reports: the kernel counts it and the call reruns with NumPy (``empty_check``)
    empty_rerun: bool = False


# -- Python numbers --------------------------------------------------------------------------------


def _compare(symbol: str, int_float: tuple[int, ...], float_int: tuple[int, ...],
             complex_too: bool = False) -> NumbaRule:
    infix = f"({{0}} {symbol} {{1}})"
    return NumbaRule(python=PythonRule(int=infix, float=infix,
                                       complex=infix if complex_too else None,
                                       int_float=int_float, float_int=float_int))


def _arithmetic(symbol: str, checked: str) -> NumbaRule:
    infix = f"({{0}} {symbol} {{1}})"
    return NumbaRule(python=PythonRule(int=checked, float=infix, complex=infix),
                     checked_int=True)


def _bitwise(symbol: str) -> NumbaRule:
    return NumbaRule(python=PythonRule(int=f"({{0}} {symbol} {{1}})", raw_int=True))


_LARGER = "({1} if {1} > {0} else {0})"  # Python's max(a, b): a on ties
_SMALLER = "({1} if {1} < {0} else {0})"

_PYTHON_OPS: dict[str, NumbaRule] = {
    "add": _arithmetic("+", "_ac_add_int({0}, {1})"),
    "subtract": _arithmetic("-", "_ac_subtract_int({0}, {1})"),
    "multiply": _arithmetic("*", "_ac_multiply_int({0}, {1})"),
    "divide": NumbaRule(python=PythonRule(int="_ac_py_divide_int({0}, {1})",
                                          float="_ac_py_divide({0}, {1})", complex="({0} / {1})")),
    "floor_divide": NumbaRule(python=PythonRule(int="_ac_py_floor_divide_int({0}, {1})",
                                                float="_ac_py_floor_divide({0}, {1})")),
    "remainder": NumbaRule(python=PythonRule(int="_ac_py_remainder_int({0}, {1})",
                                             float="_ac_py_remainder({0}, {1})")),
    "power": NumbaRule(python=PythonRule(int=python.power_int, float="_ac_py_power({0}, {1})")),
    "left_shift": NumbaRule(python=PythonRule(int="_ac_py_left_shift_int({0}, {1})")),
    "right_shift": NumbaRule(python=PythonRule(int="_ac_py_right_shift_int({0}, {1})")),
    "negative": NumbaRule(python=PythonRule(int="_ac_py_negative_int({0})", float="(-{0})",
                                            complex="(-{0})")),
    "positive": NumbaRule(python=PythonRule(int="{0}", float="{0}", complex="{0}")),
    "absolute": NumbaRule(python=PythonRule(int="_ac_py_absolute_int({0})", float="abs({0})",
                                            complex="_ac_py_abs_complex({0})",
                                            complex_helpers=(PY_COMPLEX,))),
    "invert": NumbaRule(python=PythonRule(int="(~{0})")),
    "conjugate": NumbaRule(python=PythonRule(complex="{0}.conjugate()")),
    "bitwise_and": _bitwise("&"),
    "bitwise_or": _bitwise("|"),
    "bitwise_xor": _bitwise("^"),
    "maximum": NumbaRule(python=PythonRule(int=_LARGER, float=_LARGER)),
    "minimum": NumbaRule(python=PythonRule(int=_SMALLER, float=_SMALLER)),
    "less": _compare("<", (-1,), (1,)),
    "less_equal": _compare("<=", (-1, 0), (0, 1)),
    "greater": _compare(">", (1,), (-1,)),
    "greater_equal": _compare(">=", (0, 1), (-1, 0)),
    "equal": _compare("==", (0,), (0,), complex_too=True),
    "not_equal": _compare("!=", (-1, 1, 2), (-1, 1, 2), complex_too=True),
    "py_round": NumbaRule(loop=python.py_round_loop,
                          python=PythonRule(int="{0}", float="_ac_py_round({0})")),
    "py_int": NumbaRule(loop=python.py_int_loop),
    "py_float": NumbaRule(loop=python.py_float_loop),
    "py_complex": NumbaRule(loop=python.py_complex_loop),
    "py_bool": NumbaRule(loop=python.py_bool_loop),
}

# -- pointwise ops that are not ufuncs -------------------------------------------------------------

_POINTWISE: dict[str, NumbaRule] = {
    "where": NumbaRule(element=pointwise.where_element, loop=pointwise.where_loop),
    "clip": NumbaRule(element=pointwise.clip_element, loop=pointwise.clip_loop),
    "round": NumbaRule(element=pointwise.round_element),
    "astype": NumbaRule(element=pointwise.cast_element, loop=pointwise.astype_loop),
    "copy": NumbaRule(element=pointwise.cast_element, loop=pointwise.copy_loop),
}

# -- arrays: indexing, stores, creation, views, manipulation ---------------------------------------

_ARRAYS: dict[str, NumbaRule] = {
    "getitem": NumbaRule(loop=arrays.getitem_loop, gather=arrays.gather_rule),
    "setitem": NumbaRule(loop=arrays.setitem_loop),
    "copy_": NumbaRule(loop=arrays.copy_into_loop),
    "dim_size": NumbaRule(loop=arrays.dim_size_loop, value_range=arrays.dim_size_range),
    "scalar": NumbaRule(loop=arrays.scalar_loop, value_range=arrays.scalar_range),
    "constant": NumbaRule(loop=arrays.constant_loop),
    "zeros": NumbaRule(loop=arrays.filled("np.zeros")),
    "ones": NumbaRule(loop=arrays.filled("np.ones")),
    "empty": NumbaRule(loop=arrays.filled("np.empty")),
    "zeros_like": NumbaRule(loop=arrays.filled_like("np.zeros", '0')),
    "ones_like": NumbaRule(loop=arrays.filled_like("np.ones", '1')),
    "empty_like": NumbaRule(loop=arrays.filled_like("np.empty", None)),
    "full": NumbaRule(loop=arrays.full_loop),
    "eye": NumbaRule(loop=arrays.eye_loop),
    "identity": NumbaRule(loop=arrays.identity_loop),
    "arange": NumbaRule(loop=arrays.arange_loop),
    "linspace": NumbaRule(loop=arrays.linspace_loop),
    "real": NumbaRule(loop=arrays.part("real")),
    "imag": NumbaRule(loop=arrays.part("imag")),
    "transpose": NumbaRule(loop=arrays.transpose_loop),
    "reshape": NumbaRule(loop=arrays.reshape_loop),
    "flip": NumbaRule(loop=arrays.flipped(None)),
    "fliplr": NumbaRule(loop=arrays.flipped((1,))),
    "flipud": NumbaRule(loop=arrays.flipped((0,))),
    "concatenate": NumbaRule(loop=arrays.concatenate_loop),
    "roll": NumbaRule(loop=arrays.roll_loop),
    "tril": NumbaRule(loop=arrays.triangle("np.tril")),
    "triu": NumbaRule(loop=arrays.triangle("np.triu")),
    "cumsum": NumbaRule(loop=arrays.scan("+"), scan="+"),
    "cumprod": NumbaRule(loop=arrays.scan("*"), scan="*"),
}

# -- contractions and linear algebra ---------------------------------------------------------------

_LINALG: dict[str, NumbaRule] = {
    "dot": NumbaRule(loop=linalg.contraction_loop, product_ndim=2),
    "matmul": NumbaRule(loop=linalg.contraction_loop, product_ndim=3),
    "outer": NumbaRule(loop=linalg.outer_loop),
    "ufunc_outer": NumbaRule(loop=linalg.ufunc_outer_loop),
    "linalg_solve": NumbaRule(loop=linalg.lapack("np.linalg.solve")),
    "linalg_inv": NumbaRule(loop=linalg.lapack("np.linalg.inv")),
    "linalg_norm": NumbaRule(loop=linalg.norm_loop),
}

# -- reductions ------------------------------------------------------------------------------------

_REDUCTIONS: dict[str, NumbaRule] = {
    "sum": NumbaRule(loop=reduction("np.sum", complex_ok=True)),
    "prod": NumbaRule(loop=reduction("np.prod", complex_ok=True)),
    "mean": NumbaRule(loop=reduction("np.mean", complex_ok=True, inexact_only=True),
                      empty_rerun=True),
    "max": NumbaRule(loop=reduction("np.max"), zero_rerun=True),
    "min": NumbaRule(loop=reduction("np.min"), zero_rerun=True),
    "any": NumbaRule(loop=reduction("np.any")),
    "all": NumbaRule(loop=reduction("np.all")),
    "argmax": NumbaRule(loop=reduction("np.argmax")),
    "argmin": NumbaRule(loop=reduction("np.argmin")),
    "var": NumbaRule(loop=reduction(None, inexact_only=True), empty_rerun=True),
    "std": NumbaRule(loop=reduction(None, inexact_only=True), empty_rerun=True),
}


def _ufuncs() -> dict[str, NumbaRule]:
    """Every other pointwise op: its ufunc's rules (or its ``OpDef.scalar`` template)."""
    return {name: NumbaRule() for name, op in REGISTRY.ops.items() if op.kind == "pointwise"}


# -- complex values in fused kernels (``complex_ops.py``: exact where NumPy's loop is known) ------

_COMPLEX: dict[str, ComplexRule] = {
    "negative": ComplexRule("(-{0})"),
    "positive": ComplexRule("{0}"),
    "conjugate": ComplexRule("{0}.conjugate()"),
    "isnan": ComplexRule("(np.isnan({0}.real) or np.isnan({0}.imag))"),
    "isinf": ComplexRule("(np.isinf({0}.real) or np.isinf({0}.imag))"),
    "isfinite": ComplexRule("(np.isfinite({0}.real) and np.isfinite({0}.imag))"),
    "add": ComplexRule("({0} + {1})"),
    "subtract": ComplexRule("({0} - {1})"),
    "equal": ComplexRule("({0} == {1})"),
    "not_equal": ComplexRule("({0} != {1})"),
    "multiply": ComplexRule(measured="cmul", operands="{0}, {1}"),
    "square": ComplexRule(measured="cmul", operands="{0}, {0}"),
    "absolute": ComplexRule(measured="cabs", operands="{0}"),
    "where": ComplexRule(kind="condition"),
    "astype": ComplexRule(kind="cast"),
    "copy": ComplexRule(kind="cast"),
}


# -- ufuncs in fused kernels where numba's scalar ufunc is not NumPy's (``oprules_pointwise``) -----

_UFUNC_RULES: dict[str, dict[str, Any]] = {
    "add": {"ufunc": pointwise.modular_int, "value_range": python.add_range},
    "subtract": {"ufunc": pointwise.modular_int, "value_range": python.subtract_range},
    "multiply": {"ufunc": pointwise.modular_int, "value_range": python.multiply_range},
    "negative": {"ufunc": pointwise.modular_int},
    "square": {"ufunc": pointwise.modular_int},
    "absolute": {"ufunc": pointwise.absolute_int},
    "floor_divide": {"ufunc": pointwise.division("floordiv", "floordiv_float")},
    "remainder": {"ufunc": pointwise.division("remainder", "remainder_float")},
    "fmod": {"ufunc": pointwise.division("fmod", None)},
    "maximum": {"ufunc": pointwise.float_extremum(">")},
    "minimum": {"ufunc": pointwise.float_extremum("<")},
    "fmax": {"ufunc": pointwise.numpy_float_loop},
    "fmin": {"ufunc": pointwise.numpy_float_loop},
    "sign": {"ufunc": pointwise.sign},
    "left_shift": {"ufunc": pointwise.shift(left=True)},
    "right_shift": {"ufunc": pointwise.shift(left=False)},
    "power": {"ufunc": pointwise.integer_power, "keeps_libm": pointwise.integer_constant_exponent},
}


# NumPy steps whose only warnings are a ufunc's (or a BLAS call's) FP flags (``wrapper.py``)
_FLAGS_ONLY = ("matmul", "vecdot", "matvec", "vecmat", "dot", "sum", "prod")


def _with(table: dict[str, NumbaRule], extra: dict[str, dict[str, Any]]) -> dict[str, NumbaRule]:
    for name, fields in extra.items():
        table[name] = replace(table.get(name, NumbaRule()), **fields)
    return table


TABLE: dict[str, NumbaRule] = _with(_with(
    {**_ufuncs(), **_PYTHON_OPS, **_POINTWISE, **_ARRAYS, **_LINALG, **_REDUCTIONS},
    _UFUNC_RULES), {name: {"complex": rule} for name, rule in _COMPLEX.items()})
TABLE = _with(TABLE, {name: {"flags_only": True} for name in _FLAGS_ONLY})
TABLE = _with(TABLE, {name: {"vecmath": function} for name, function in pointwise.VECMATH.items()})
_NONE = NumbaRule()


def numba_rule(name: str) -> NumbaRule:
    """The op's entry (an op without one: lowered by kind only)."""
    return TABLE.get(name, _NONE)


# -- what the generic emitters ask -----------------------------------------------------------------


def empty_rerun(node: Node) -> bool:
    """A mean/var/std node, whose empty slices a kernel reports (``empty_rerun``)."""
    return node.op == "call" and isinstance(node.target, str) and numba_rule(
        node.target).empty_rerun


def numpy_rerun(node: Node) -> bool:
    """A node whose kernel may report a result NumPy recomputes (``runtime.ZEROS``)."""
    return zero_rerun(node) or empty_rerun(node)


def zero_rerun(node: Node) -> bool:
    """A float max/min reduction node, whose zero result a kernel reports (``zero_rerun``)."""
    return node.op == "call" and isinstance(node.target, str) and numba_rule(
        node.target).zero_rerun and node.meta is not None and np.dtype(node.meta.dtype).kind == "f"


def element_rule(node: Node, weak: dict[Node, type]) -> ScalarRule | None:
    """One element of a pointwise node in a fused kernel, or None: NumPy computes it."""
    entry = numba_rule(node.target)
    return lower_pointwise(node, weak, entry.element, entry.complex, entry.ufunc, entry.keeps_libm)


def gather_rule(node: Node) -> ScalarRule | None:
    """A gather (``x[idx]``, an index array) read element by element in a fused kernel
    (``oprules_arrays.GatherRule``), or None: NumPy gathers."""
    rule = numba_rule(node.target).gather
    return rule(node) if rule is not None else None


def value_range(ranges: Any, node: Node) -> tuple[Any, Any] | None:
    """The range of a call node's integer value from its op's rule (``bounds.ValueRanges``)."""
    rule = numba_rule(node.target).value_range
    return rule(ranges, node) if rule is not None else None


def loop_source(emitter: LoopEmitter, node: Node) -> str | None:
    """A call node in loop code: source of its value, or None when the rule emitted a statement;
    raises NotLowerable when the op has no exact loop lowering here."""
    entry = numba_rule(node.target)
    if entry.loop is not None:
        text = entry.loop(emitter, node)
        if text is not NOT_MINE:
            return text
    text = python.python_numbers(emitter, node, entry.python, entry.checked_int)
    if text is not NOT_MINE:
        return text
    return pointwise.ufunc_loop(emitter, node)
