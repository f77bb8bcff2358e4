"""The numba target's op table: how an op is spelled in numba loop code.

What an op *is* lives in its ``OpDef`` (``ops/``): its ufunc, scalar template, reduction rule and
flags (``cheap``, ``comparison``, ``python_int``, ``numpy_only``, ...). This module holds only
what is particular to numba source: which Python operator or NumPy call spells an op in loop
code, and which emitted helper functions compute it exactly.

Where an op becomes numba code:

* fused kernels (``plan.py``/``cpu.py``): ``scalar.lower_pointwise`` builds the element
  expression from ``OpDef.ufunc`` (NumPy's loop dtypes) or ``OpDef.scalar``, with the helpers
  named by ``INT_DIVISION_HELPERS``/``HELPER_STEMS`` where numba's own ufunc differs from NumPy;
  reductions follow ``OpDef.reduction``;
* loop regions (``structured.py``): array expressions as NumPy calls (``REDUCTION_CALLS``),
  Python scalars with Python's operators (``INFIX_*``) and overflow-checked int helpers
  (``CHECKED_INT_OPS``).
"""

from __future__ import annotations

# Python infix operators, for values with Python semantics (comparisons and bitwise operators on
# Python ints, arithmetic on Python floats)
INFIX_COMPARE = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
                 "equal": "==", "not_equal": "!="}
INFIX_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
INFIX_ARITHMETIC = {"add": "+", "subtract": "-", "multiply": "*"}

# ops on Python ints with an overflow-checked 64-bit helper ``_ac_<op>_int`` (structured.CHECKED)
CHECKED_INT_OPS = frozenset({"add", "subtract", "multiply"})

# pointwise ops besides ufuncs that loop regions inline into one elementwise loop nest
# (``where`` as a conditional expression, ``astype`` as a cast of the element)
TREE_NON_UFUNCS = frozenset({"where", "astype"})

# whole-array reductions numba spells as the NumPy function (no axis, keepdims or dtype)
REDUCTION_CALLS = {"sum": "np.sum", "prod": "np.prod", "max": "np.max", "min": "np.min",
                   "mean": "np.mean", "any": "np.any", "all": "np.all", "argmax": "np.argmax",
                   "argmin": "np.argmin"}

# integer division ufuncs -> the stem of their NumPy-exact helper (``scalar._HELPERS``)
INT_DIVISION_HELPERS = {"floor_divide": "floordiv", "remainder": "remainder", "fmod": "fmod"}

# helper key (``scalar._HELPERS``) -> the stem of the function it defines, per dtype
HELPER_STEMS = {"floordiv_int": "floordiv", "floordiv_uint": "floordiv",
                "floordiv_float": "floordiv", "remainder_int": "remainder",
                "remainder_uint": "remainder", "fmod_int": "fmod", "fmod_uint": "fmod",
                "rshift_int": "rshift", "rshift_uint": "rshift", "power_int": "power",
                "lshift": "lshift", "remainder_float": "remainder"}

# ufuncs whose result on two's-complement ints is the same bits as in the unsigned dtype of the
# same width. numba's signed integer arithmetic is ``nsw`` (overflow is undefined to LLVM, which
# may then compute an int8 product in 64 bits): kernels compute these in the unsigned twin
MODULAR_INT_UFUNCS = frozenset({"add", "subtract", "multiply", "negative", "square"})
