"""Scalar lowering: what one element of a pointwise op or one step of a reduction computes.

Everything here is numba *scalar* source (the language shared by numba's CPU and CUDA
targets): dtype casts, typed constants, the loop dtypes NumPy would pick for a ufunc, and the
small helper functions some ops need to match NumPy exactly (integer division by zero, shifts
past the word size, NaN-propagating max, ...). Loop nests are the target's business (``cpu.py``).

A rule is ``None`` when an op cannot be lowered for its dtypes: the backend then runs that node
with its NumPy ``impl`` in the wrapper, so an unsupported case is slower, never wrong.

Where numba and NumPy part ways, the rules follow NumPy (each op's rule is its ``NumbaRule.ufunc``
entry in the op table, ``optable.py``, written in ``oprules_pointwise.py``; this module holds the
helpers they call):

* signed integer ``+ - * negative square`` (and sums, products) run in the unsigned dtype of the
  same width: numba's signed arithmetic is ``nsw`` (LLVM may then keep an int8 product in 64
  bits), NumPy's wraps;
* a comparison with a Python int compares by value (``uint8_array < 300``), in int64;
* float ``maximum``/``minimum``/``clip`` propagate NaN and give the second operand on ties
  (``np.maximum(-0.0, 0.0)`` is ``0.0``); ``sign(-0.0)`` is ``0.0``; a zero ``remainder`` has
  the divisor's sign; ``fmax``/``fmin`` of floats stay NumPy's (its result for ``-0.0`` against
  ``0.0`` depends on its SIMD loop and the array's length);
* integer division helpers raise NumPy's floating-point flags (``x // 0``, ``MIN // -1``), which
  the wrapper turns into NumPy's warnings or errors (``runtime.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...config import config
from ...graph import Node
from ...ops import REGISTRY
from . import complex_ops, vecmath

# dtypes a kernel can load, compute and store (numba has no float16; complex is left to NumPy)
_KERNEL_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64, np.float32, np.float64))


def cheap(node: Node) -> bool:
    """Cheap enough to recompute in a later sweep instead of keeping its values (``OpDef.cheap``)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.cheap


def kernel_dtype(dtype: Any) -> bool:
    """True when kernels handle values of ``dtype`` (native byte order, bool/int/uint/float32/64)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        return False
    return dt in _KERNEL_DTYPES and dt.isnative


def type_name(dtype: np.dtype) -> str:
    """``np.float32``-style source for a dtype's scalar type."""
    dt = np.dtype(dtype)
    return "np.bool_" if dt.kind == "b" else f"np.{dt.name}"


def unsigned(dtype: np.dtype) -> np.dtype:
    """The unsigned integer dtype of ``dtype``'s width (itself when unsigned)."""
    dt = np.dtype(dtype)
    return np.dtype(f"u{dt.itemsize}") if dt.kind == "i" else dt


def cast(expr: str, src: np.dtype | None, dst: np.dtype) -> str:
    """Source converting ``expr`` (of dtype ``src``, None when unknown) to ``dst``."""
    dst = np.dtype(dst)
    if src is not None and np.dtype(src) == dst:
        return expr
    if dst.kind == "b":
        return f"({expr} != 0)"
    return f"{type_name(dst)}({expr})"


def constant(value: Any, dtype: np.dtype) -> str:
    """A typed constant: ``np.float32(0.1)``, ``np.int64(3)``, ``True``."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "True" if bool(value) else "False"
    if dt.kind == "c":  # both parts as float64 constants (NumPy rounds each part to the dtype)
        value = complex(value)
        parts = (constant(value.real, np.float64), constant(value.imag, np.float64))
        return f"{type_name(dt)}(complex({parts[0]}, {parts[1]}))"
    if dt.kind == "f":
        v = float(value)
        if v != v:
            text = "np.nan"
        elif v in (float("inf"), float("-inf")):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return f"{type_name(dt)}({text})"
    if dt.kind == "u":  # a wrapped bit pattern (signed arithmetic done in the unsigned twin)
        return f"{type_name(dt)}({int(value) % 2 ** (8 * dt.itemsize)})"
    return f"{type_name(dt)}({int(value)})"


def lowest(dtype: np.dtype) -> Any:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return float("-inf")
    if dt.kind == "b":
        return False
    return int(np.iinfo(dt).min)


def highest(dtype: np.dtype) -> Any:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return float("inf")
    if dt.kind == "b":
        return True
    return int(np.iinfo(dt).max)


# -- helper functions emitted into kernel modules that use them ----------------------------------
# ``{T}`` is the numba scalar type (np.int32), ``{BITS}`` its width; names carry the dtype.

_HELPERS: dict[str, str] = {
    "floordiv_int": '''
def floordiv_{dt}(a, b):
    """NumPy's integer floor_divide: x // 0 == 0, MIN // -1 wraps (both raise NumPy's flags)."""
    if b == 0:
        fp_divide_by_zero()
        return {T}(0)
    if b == -1:
        if a == {MIN}:
            fp_overflow()
        return {T}(np.negative({U}(a)))
    return {T}(a // b)
''',
    "floordiv_uint": '''
def floordiv_{dt}(a, b):
    """NumPy's unsigned floor_divide: x // 0 == 0 (raising the divide-by-zero flag)."""
    if b == 0:
        fp_divide_by_zero()
        return {T}(0)
    return {T}(a // b)
''',
    "remainder_int": '''
def remainder_{dt}(a, b):
    """NumPy's integer remainder (sign of the divisor): x % 0 == 0 (divide-by-zero flag),
    MIN % -1 == 0."""
    if b == 0:
        fp_divide_by_zero()
        return {T}(0)
    if b == -1:
        return {T}(0)
    return {T}(a % b)
''',
    "remainder_uint": '''
def remainder_{dt}(a, b):
    """NumPy's unsigned remainder and fmod (they agree): x % 0 == 0 (divide-by-zero flag)."""
    if b == 0:
        fp_divide_by_zero()
        return {T}(0)
    return {T}(a % b)
''',
    "fmod_int": '''
def fmod_{dt}(a, b):
    """NumPy's integer fmod (sign of the dividend): x % 0 == 0 (divide-by-zero flag),
    MIN % -1 == 0."""
    if b == 0:
        fp_divide_by_zero()
        return {T}(0)
    if b == -1:
        return {T}(0)
    r = {T}(a % b)
    if r != 0 and (r < 0) != (a < 0):
        r = {T}(r - b)
    return r
''',
    "floordiv_float": '''
def floordiv_{dt}(a, b):
    """NumPy's float floor_divide (npy_divmod): exact at infinities and signed zeros."""
    if b == 0:
        return {T}(a / b)
    mod = np.fmod(a, b)
    div = {T}((a - mod) / b)
    if mod != 0 and (b < 0) != (mod < 0):
        div = {T}(div - {T}(1.0))
    if div != 0:
        floordiv = np.floor(div)
        if div - floordiv > {T}(0.5):
            floordiv = {T}(floordiv + {T}(1.0))
        return floordiv
    return np.copysign({T}(0.0), {T}(a / b))
''',
    "remainder_float": '''
def remainder_{dt}(a, b):
    """NumPy's float remainder (npy_divmod): the divisor's sign, a zero with the divisor's sign."""
    mod = np.fmod(a, b)
    if b == 0:
        return mod
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod = {T}(mod + b)
        return mod
    return np.copysign({T}(0.0), b)
''',
    "lshift": '''
def lshift_{dt}(a, b):
    """NumPy's left_shift: shifting by the width or more (or a negative count) gives 0."""
    if b < 0 or b >= {BITS}:
        return {T}(0)
    return {T}(a << b)
''',
    "rshift_int": '''
def rshift_{dt}(a, b):
    """NumPy's signed right_shift: past the width gives 0 or -1."""
    if b < 0 or b >= {BITS}:
        return {T}(-1) if a < 0 else {T}(0)
    return {T}(a >> b)
''',
    "rshift_uint": '''
def rshift_{dt}(a, b):
    """NumPy's unsigned right_shift: past the width gives 0."""
    if b >= {BITS}:
        return {T}(0)
    return {T}(a >> b)
''',
    "power_int": '''
def power_{dt}(a, b):
    """Integer power by squaring, wrapping like NumPy (callers guarantee b >= 0); unsigned
    arithmetic, since numba's signed arithmetic may not wrap (LLVM ``nsw``)."""
    result = {U}(1)
    base = {U}(a)
    e = np.int64(b)
    while e > 0:
        if e & 1:
            result = {U}(np.multiply(result, base))
        base = {U}(np.multiply(base, base))
        e = e >> 1
    return {T}(result)
''',
    "power_checked_int": '''
def power_checked_{dt}(a, b):
    """NumPy's integer power of scalars: a negative exponent raises NumPy's ValueError."""
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    return power_{dt}(a, b)
''',
    # NumPy's scalar math on integer scalars (``OpDef.scalar_overflow``): it wraps like the
    # array loops, and raises the overflow flag ("overflow encountered in scalar multiply")
    "scalar_add_int": '''
def scalar_add_{dt}(a, b):
    """NumPy's ``a + b`` of {dt} scalars: wraps, raising the overflow flag."""
    r = {T}(np.add({U}(a), {U}(b)))
    if ((a ^ r) & (b ^ r)) < 0:
        fp_overflow()
    return r
''',
    "scalar_add_uint": '''
def scalar_add_{dt}(a, b):
    """NumPy's ``a + b`` of {dt} scalars: wraps, raising the overflow flag."""
    r = {T}(np.add(a, b))
    if r < a:
        fp_overflow()
    return r
''',
    "scalar_subtract_int": '''
def scalar_subtract_{dt}(a, b):
    """NumPy's ``a - b`` of {dt} scalars: wraps, raising the overflow flag."""
    r = {T}(np.subtract({U}(a), {U}(b)))
    if ((a ^ b) & (a ^ r)) < 0:
        fp_overflow()
    return r
''',
    "scalar_subtract_uint": '''
def scalar_subtract_{dt}(a, b):
    """NumPy's ``a - b`` of {dt} scalars: wraps, raising the overflow flag."""
    r = {T}(np.subtract(a, b))
    if b > a:
        fp_overflow()
    return r
''',
    "scalar_multiply_int": '''
def scalar_multiply_{dt}(a, b):
    """NumPy's ``a * b`` of {dt} scalars: wraps, raising the overflow flag."""
    r = {T}(np.multiply({U}(a), {U}(b)))
    if a == -1:
        if b == {MIN}:
            fp_overflow()
    elif a != 0 and r // a != b:
        fp_overflow()
    return r
''',
    "scalar_multiply_uint": '''
def scalar_multiply_{dt}(a, b):
    """NumPy's ``a * b`` of {dt} scalars: wraps, raising the overflow flag."""
    r = {T}(np.multiply(a, b))
    if a != 0 and r // a != b:
        fp_overflow()
    return r
''',
    "scalar_multiply_narrow_int": '''
def scalar_multiply_{dt}(a, b):
    """NumPy's ``a * b`` of {dt} scalars: wraps, raising the overflow flag (exact in 64 bits)."""
    wide = np.int64(a) * np.int64(b)
    if wide < {MIN} or wide > {MAX}:
        fp_overflow()
    return {T}(np.multiply({U}(a), {U}(b)))
''',
    "scalar_multiply_narrow_uint": '''
def scalar_multiply_{dt}(a, b):
    """NumPy's ``a * b`` of {dt} scalars: wraps, raising the overflow flag (exact in 64 bits)."""
    if np.uint64(a) * np.uint64(b) > np.uint64({MAX}):
        fp_overflow()
    return {T}(np.multiply(a, b))
''',
    "scalar_negative_int": '''
def scalar_negative_{dt}(a):
    """NumPy's ``-a`` of a {dt} scalar: ``-MIN`` wraps, raising the overflow flag."""
    if a == {MIN}:
        fp_overflow()
    return {T}(np.negative({U}(a)))
''',
    "scalar_negative_uint": '''
def scalar_negative_{dt}(a):
    """NumPy's ``-a`` of a {dt} scalar: wraps, raising the overflow flag unless ``a`` is 0."""
    if a != 0:
        fp_overflow()
    return {T}(np.negative(a))
''',
    "scalar_absolute_int": '''
def scalar_absolute_{dt}(a):
    """NumPy's ``abs(a)`` of a {dt} scalar: ``abs(MIN)`` wraps, raising the overflow flag."""
    if a == {MIN}:
        fp_overflow()
    return a if a >= 0 else {T}(np.negative({U}(a)))
''',
}
# unsigned operands: fmod and remainder agree (both signs are +)
_HELPERS["fmod_uint"] = _HELPERS["remainder_uint"].replace("def remainder_", "def fmod_")
# a gather's index (``oprules_arrays.GatherRule``): the check inlined beside the load, the
# raise out of line (``bounds.py``: an inlined check costs a gather little, an out-of-line one
# with its message much more)
_HELPERS["gather"] = '''
def _ac_gather_fail(i, n):
    raise IndexError("index " + str(i) + " is out of bounds for axis 0 with size " + str(n))


@numba.njit(inline="always")
def _ac_gather(i, n):
    """NumPy's index into an axis of ``n``: a negative one counts from the end."""
    j = i + n * (i < 0)
    if j < 0 or j >= n:
        _ac_gather_fail(i, n)
    return j
'''

# helper key (``_HELPERS``) -> the stem of the function it defines, per dtype
HELPER_STEMS = {"floordiv_int": "floordiv", "floordiv_uint": "floordiv",
                "floordiv_float": "floordiv", "remainder_int": "remainder",
                "remainder_uint": "remainder", "fmod_int": "fmod", "fmod_uint": "fmod",
                "rshift_int": "rshift", "rshift_uint": "rshift", "power_int": "power",
                "power_checked_int": "power_checked",
                "lshift": "lshift", "remainder_float": "remainder",
                # NumPy's scalar math: ``scalar_<op>_<kind>`` defines ``scalar_<op>_<dtype>``
                **{key: "scalar_" + key.split("_")[1] for key in _HELPERS
                   if key.startswith("scalar_")}}


def helper_source(key: str) -> str:
    """Source of helper ``key`` (``"name"`` or ``"name:dtype"``), without its decorator;
    empty for an imported helper (``vecmath``)."""
    name, _, dt = key.partition(":")
    if name == vecmath.PREFIX:
        return ""
    if name in complex_ops.HELPERS:
        return complex_ops.helper_source(key)
    text = _HELPERS[name]
    if dt:
        dtype = np.dtype(dt)
        low = int(np.iinfo(dtype).min) if dtype.kind in "iu" else 0
        high = int(np.iinfo(dtype).max) if dtype.kind in "iu" else 0
        text = text.format(dt=dtype.name, T=type_name(dtype), U=type_name(unsigned(dtype)),
                           BITS=dtype.itemsize * 8, MIN=low, MAX=high)
    return text.strip("\n") + "\n"


def raises_flags(key: str) -> bool:
    """Whether helper ``key`` raises floating-point flags itself (NumPy's integer division,
    NumPy's integer scalar math)."""
    name = key.partition(":")[0]
    return (name not in complex_ops.HELPERS and name != vecmath.PREFIX
            and ("fp_divide_by_zero()" in _HELPERS[name] or "fp_overflow()" in _HELPERS[name]))


def helper_imports(keys: list[str]) -> list[str]:
    """Import lines a kernel module needs for helpers ``keys`` (``fma`` for complex ones)."""
    lines = [complex_ops.FMA_IMPORT] if any(
        k.partition(":")[0] in complex_ops.HELPERS for k in keys) else []
    return lines + [vecmath.import_line(k) for k in keys if k.partition(":")[0] == vecmath.PREFIX]


def helper_call(key: str) -> str:
    """The function name a template uses for helper ``key``."""
    name, _, dt = key.partition(":")
    if name in complex_ops.HELPERS:
        return complex_ops.helper_call(key)
    if name == vecmath.PREFIX:
        return vecmath.call_name(key)
    if not dt:
        return name
    stem = HELPER_STEMS[name]
    return f"{stem}_{np.dtype(dt).name}"


# -- pointwise ops -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalarRule:
    """How one element of a pointwise node is computed.

    ``template`` uses ``{0}``, ``{1}``... for the operands after each is cast to
    ``operand_dtypes[i]`` (None: left as is); it yields ``result_dtype`` (None: unknown, so
    the backend always casts to the node's dtype). ``helpers`` are keys for ``helper_source``.
    """

    operand_dtypes: tuple[np.dtype | None, ...]
    template: str
    result_dtype: np.dtype | None
    helpers: tuple[str, ...] = ()
    operands: tuple[int, ...] | None = None  # which node args are operands (default: all)
    checked: bool = True  # False: an op's own template, not verified here (the backend probes it)


def operand_dtype(value: Any, weak: dict[Node, type]) -> Any:
    """What NumPy's type resolution sees for one operand (a dtype, or a Python type when weak)."""
    if isinstance(value, Node):
        if value in weak:
            return weak[value]
        if value.meta is None:
            return None
        return np.dtype(value.meta.dtype)
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, (int, float)):
        return type(value)
    if isinstance(value, np.generic) and not isinstance(value, np.complexfloating):
        return value.dtype
    return None


def kernel_operand(value: Any) -> bool:
    """Node or scalar constant a kernel can read."""
    if isinstance(value, Node):
        return value.meta is not None and kernel_dtype(value.meta.dtype)
    if isinstance(value, (bool, int, float)):
        return True
    return isinstance(value, np.generic) and kernel_dtype(value.dtype)


# where numba's scalar ufunc differs from NumPy's (``NumbaRule.ufunc``): (loop input dtypes,
# output dtype, node) -> a rule, False (NumPy only) or None (numba's own ufunc is NumPy's)
UfuncRule = Callable[[tuple, np.dtype, Node], "ScalarRule | None | bool"]


def lower_pointwise(node: Node, weak: dict[Node, type],
                    element: Callable[[Node, dict[Node, type]], ScalarRule | None] | None = None,
                    complex_rule: Any = None, ufunc_rule: UfuncRule | None = None,
                    keeps_libm: Callable[[Node], bool] | None = None) -> ScalarRule | None:
    """The scalar rule for a pointwise node, or None when it must run with NumPy: the ufunc's
    (NumPy's loop dtypes, the table's ``ufunc_rule`` where numba's scalar ufunc differs, vector
    math unless ``keeps_libm``), else the op's own ``element`` rule (the numba op table's,
    ``optable.element_rule``), else its ``OpDef.scalar`` template. Complex values: the table's
    ``complex_rule`` (``complex_ops.ComplexRule``), or NumPy."""
    op = REGISTRY[node.target]
    if node.meta is not None and complex_ops.touches_complex(node):
        return complex_ops.lower_complex(node, weak, ScalarRule, complex_rule)  # NumPy's bits
    if node.meta is None or not kernel_dtype(node.meta.dtype):
        return None
    if any(isinstance(v, Node) for v in node.kwargs.values()) or "out" in node.kwargs:
        return None
    if op.ufunc is not None:
        return _lower_ufunc(node, op.ufunc, weak, ufunc_rule, keeps_libm)
    if element is not None:
        return element(node, weak)
    return _lower_generic(node, op.scalar)


def _lower_generic(node: Node, template: str | None) -> ScalarRule | None:
    if template is None or not all(kernel_operand(a) for a in node.args):
        return None
    try:
        text = template.format(*(f"{{{i}}}" for i in range(len(node.args))),
                               **{k: repr(v) for k, v in node.kwargs.items()})
    except (IndexError, KeyError, ValueError):
        return None
    return ScalarRule(tuple(None for _ in node.args), text, None, checked=False)


def _lower_ufunc(node: Node, ufunc: np.ufunc, weak: dict[Node, type],
                 ufunc_rule: UfuncRule | None, keeps_libm: Callable[[Node], bool] | None
                 ) -> ScalarRule | None:
    args = node.args
    if len(args) != ufunc.nin or not all(kernel_operand(a) for a in args):
        return None
    ins = tuple(operand_dtype(a, weak) for a in args)
    if any(t is None for t in ins):
        return None
    extra: dict[str, Any] = {}
    if node.kwargs.get("dtype") is not None:
        extra["signature"] = (None,) * ufunc.nin + (np.dtype(node.kwargs["dtype"]),)
    try:
        loop = ufunc.resolve_dtypes(ins + (None,), **extra)
    except (TypeError, ValueError):
        return None
    if not all(kernel_dtype(d) for d in loop):
        return None
    in_dts, out_dt = tuple(loop[:-1]), loop[-1]
    name = ufunc.__name__
    kind = in_dts[0].kind
    if kind in REGISTRY[node.target].numpy_only:  # numba's scalar loop differs from NumPy's
        return None
    if int in ins and REGISTRY[node.target].comparison:
        return _compare_python_int(node, in_dts, out_dt)
    checked = _scalar_math(node, in_dts, out_dt)
    if checked is not None:
        return checked
    override = ufunc_rule(in_dts, out_dt, node) if ufunc_rule is not None else None
    if override is False:
        return None
    if override is not None:
        return override
    pays = _vector_math_pays(node) and not (keeps_libm is not None and keeps_libm(node))
    vector = vecmath.helper_key(name, in_dts[0].name) if pays else None
    if vector is not None and set(in_dts) == {out_dt} and not vecmath.feeds_reduction(node):
        call = f"{helper_call(vector)}(" + ", ".join(f"{{{i}}}" for i in range(len(in_dts))) + ")"
        return ScalarRule(in_dts, call, out_dt, (vector,))  # branch-free: the loop vectorizes
    template = REGISTRY[node.target].scalar or f"np.{name}(" + ", ".join(
        f"{{{i}}}" for i in range(ufunc.nin)) + ")"
    return ScalarRule(in_dts, template, out_dt)


def _numpy_scalar(value: Any) -> bool:
    """A NumPy scalar (not a 0-d array) or a Python number: an operand of NumPy's scalar math."""
    if isinstance(value, Node):
        return value.meta is not None and value.meta.scalar
    return isinstance(value, (bool, int, float, np.generic))


def _scalar_math(node: Node, in_dts: tuple, out_dt: np.dtype) -> ScalarRule | None:
    """A Python operator on NumPy integer scalars (``np.int64(2**62) * 4``) is NumPy's scalar
    math, which raises the overflow flag where it wraps (``OpDef.scalar_overflow``; arrays wrap
    silently): a helper that raises it too, so the wrapper warns (or raises) as NumPy does."""
    meta = node.meta
    if not (node.operator and REGISTRY[node.target].scalar_overflow and meta.scalar
            and meta.pytype is None and out_dt.kind in "iu" and set(in_dts) == {out_dt}
            and all(_numpy_scalar(a) for a in node.args)):
        return None
    kind = "int" if out_dt.kind == "i" else "uint"
    name = f"scalar_{node.target}_{kind}"
    narrow = f"scalar_{node.target}_narrow_{kind}"  # exact in 64 bits: a simpler test
    if out_dt.itemsize < 8 and narrow in _HELPERS:
        name = narrow
    if name not in _HELPERS:
        return None  # (``abs`` of an unsigned scalar cannot overflow)
    key = f"{name}:{out_dt.name}"
    call = f"{helper_call(key)}(" + ", ".join(f"{{{i}}}" for i in range(len(in_dts))) + ")"
    return ScalarRule(in_dts, call, out_dt, (key,))


def scalar_math_loop(node: Node, operands: list[str]) -> tuple[str, str] | None:
    """Loop code (structured functions) of a Python operator on NumPy integer scalars
    (``_scalar_math``): (the helper call on ``operands``, the helper's module source, which
    imports the flag it raises), or None when it is not NumPy's scalar math."""
    op = REGISTRY.ops.get(node.target)
    if op is None or op.ufunc is None or node.meta is None or not kernel_dtype(node.meta.dtype):
        return None
    weak: dict[Node, type] = {a: int for a in node.args
                              if isinstance(a, Node) and a.meta is not None and a.meta.pytype is int}
    ins = tuple(operand_dtype(a, weak) for a in node.args)
    if len(ins) != op.ufunc.nin or any(t is None for t in ins):
        return None
    try:
        loop = op.ufunc.resolve_dtypes(ins + (None,))
    except (TypeError, ValueError):
        return None
    rule = _scalar_math(node, tuple(loop[:-1]), loop[-1])
    if rule is None:
        return None
    key = rule.helpers[0]
    source = ("\nfrom astcompiler.lower.numba.runtime import fp_overflow\n\n\n"
              f"@numba.njit(cache=True, error_model=\"numpy\")\n{helper_source(key)}")
    return rule.template.format(*operands), source


def _vector_math_pays(node: Node) -> bool:
    """vecmath for this node: switched on, and its array is large or of a dynamic size (the
    inlined functions cost compile time that a small static array never wins back)."""
    if not config.vector_math:
        return False
    shape = node.meta.shape if node.meta is not None else ()
    if not all(isinstance(d, (int, np.integer)) for d in shape):
        return True
    return int(np.prod(shape, dtype=np.int64)) >= config.vector_math_min_elements


def _compare_python_int(node: Node, ins: tuple, out: np.dtype) -> ScalarRule | None:
    """A comparison with a Python int: NumPy 2 compares an integer array with it by value
    (``uint8_array < 300`` is all True), so both sides are compared in int64, which holds them
    (a dynamic int outside int64 sends the graph to NumPy); a uint64 loop is left to NumPy."""
    literals = [a for a in node.args if type(a) is int]
    if any(not -2 ** 63 <= a < 2 ** 63 for a in literals):
        return None
    if ins[0].kind not in "iu":
        return ScalarRule(ins, f"np.{node.target}({{0}}, {{1}})", out)
    if ins[0] == np.dtype(np.uint64):
        return None
    wide = np.dtype(np.int64)
    return ScalarRule((wide, wide), f"np.{node.target}({{0}}, {{1}})", out)


def float_select(op: str, a: str, b: str) -> str:
    """NumPy's float ``maximum`` (``op`` ``>``) / ``minimum`` (``<``): ``a`` when it wins or is NaN."""
    return f"({a} if ({a} {op} {b} or {a} != {a}) else {b})"


# -- reductions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReductionRule:
    """A reduction node's accumulator: dtypes, init value, combine/finalize templates.

    Templates use ``{acc}``, ``{v}`` (the element, already cast to ``acc_dtype``), ``{n}`` (the
    element count), ``{mean}`` (two-pass reductions, second sweep) and ``{ddof}``; ``merge``
    (``{a}``, ``{b}``) combines partial accumulators, None when order matters. ``nan_flag``: the
    input is float and any NaN makes the result NaN (tracked beside the accumulator).
    """

    name: str
    input_dtype: np.dtype
    acc_dtype: np.dtype
    result_dtype: np.dtype
    init: str
    combine: str
    finalize: str
    merge: str | None = None
    nan_flag: bool = False
    arg: bool = False
    two_pass: bool = False
    needs_elements: bool = False  # empty reductions raise (no identity)
    helpers: tuple[str, ...] = ()
    ddof: Any = 0


def empty_message(name: str) -> str:
    """NumPy's ValueError message for reduction ``name`` of an empty array (``OpDef.no_identity``)."""
    return REGISTRY[name].no_identity


def accumulator(how: str, source: np.dtype, result: np.dtype) -> np.dtype | None:
    """The dtype a reduction accumulates in (``ReductionDef.accumulate``), in fused kernels and
    loop helpers alike; None when there is no rule for these dtypes. ``"wide"`` and
    ``"float64"``: float64 (complex128) for inexact results (NumPy sums floats pairwise in the
    input's float: float64 keeps float32 sums as accurate); ``"wide"`` keeps integer and bool
    results' own dtype."""
    if how == "input":
        return source
    if how == "result":
        return result
    if how == "bool":
        return np.dtype(bool)
    if how in ("wide", "float64") and result.kind in "fc":
        return np.dtype(np.complex128 if result.kind == "c" else np.float64)
    if how == "wide" and result.kind in "iub":
        return result
    return None


def lower_reduction(node: Node) -> ReductionRule | None:
    """The accumulator rule of a reduction node, or None when it must run with NumPy."""
    op = REGISTRY[node.target]
    spec = op.reduction
    if spec is None or node.meta is None or not node.args or not isinstance(node.args[0], Node):
        return None
    source = node.args[0]
    if source.meta is None or "out" in node.kwargs:
        return None
    if any(isinstance(v, Node) for v in node.kwargs.values()):
        return None
    src, result = np.dtype(source.meta.dtype), np.dtype(node.meta.dtype)
    if not (kernel_dtype(src) and kernel_dtype(result)):
        return None
    acc = accumulator(spec.accumulate, src, result)
    if acc is None or not kernel_dtype(acc):
        return None
    if acc.kind == "i" and not spec.arg and any(c in spec.combine for c in "+*"):
        acc = unsigned(acc)  # sums and products wrap like NumPy's (numba's signed ops are nsw)
    ddof = node.kwargs.get("ddof", 0)
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
        return None
    init = _init_value(spec.init, acc if not spec.arg else src)
    if init is None:
        return None
    return ReductionRule(node.target, src, acc, result, init, spec.combine, spec.finalize,
                         merge=getattr(spec, "merge", None),
                         nan_flag=bool(getattr(spec, "propagate_nan", False)) and src.kind == "f",
                         arg=spec.arg, two_pass=spec.two_pass,
                         needs_elements=op.no_identity is not None, ddof=ddof)


def _init_value(init: str, dtype: np.dtype) -> str | None:
    if init == "lowest":
        return constant(lowest(dtype), dtype)
    if init == "highest":
        return constant(highest(dtype), dtype)
    try:
        value = {"0": 0, "1": 1, "False": False, "True": True}[init]
    except KeyError:
        return None
    return constant(value, dtype)


# -- Python ints as weak operands ----------------------------------------------------------------


def python_int_bounds(node: Node) -> tuple[int, int]:
    """The values a Python int graph value may take for the kernels that read it to compute what
    NumPy computes: within int64 (a kernel argument), and within the integer dtype of every
    NumPy op it is a weak operand of (NumPy raises OverflowError, or picks a wider dtype, for a
    value outside it). Outside these bounds the graph must run with NumPy."""
    low, high = -2 ** 63, 2 ** 63 - 1
    for user in node.users:
        meta = user.meta
        op = REGISTRY.ops.get(user.target) if user.op == "call" else None
        if meta is None or meta.pytype is not None or (op is not None and op.comparison):
            continue
        if user.op == "call" and np.dtype(meta.dtype).kind in "iu":
            info = np.iinfo(meta.dtype)
            low, high = max(low, int(info.min)), min(high, int(info.max))
    return low, high
