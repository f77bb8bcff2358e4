"""njit helper sources for loop code (structured functions) where numba does not spell an op as
NumPy or Python computes it.

The constants are helper sources as they are; each ``*_source`` function returns the source of a
small ``@numba.njit`` function specialized for one op's static parameters (axes, dtypes). The op
table's loop rules (``optable.py``, ``oprules_*.py``) add the helpers they call to the structured
module. Reductions follow the op's ``ReductionDef`` (init, combine, finalize, accumulator dtype);
ranges and contractions follow NumPy's formulas and dtype rules; Python numbers follow Python
(overflow-checked 64-bit ints, ``ZeroDivisionError``, floor division and modulo of negatives).
"""

from __future__ import annotations

import numpy as np

from ...ops.registry import ReductionDef
from .scalar import accumulator, type_name

# -- Python numbers --------------------------------------------------------------------------------

CHECKED = '''
_AC_MAX = 9223372036854775807
_AC_MIN = -9223372036854775808


@numba.njit(cache=True)
def _ac_add_int(a, b):
    # bounds checked before the operation: signed overflow is undefined for the optimizer
    if (b > 0 and a > _AC_MAX - b) or (b < 0 and a < _AC_MIN - b):
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a + b


@numba.njit(cache=True)
def _ac_subtract_int(a, b):
    if (b < 0 and a > _AC_MAX + b) or (b > 0 and a < _AC_MIN + b):
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a - b


@numba.njit(cache=True)
def _ac_multiply_int(a, b):
    if a != 0 and b != 0:
        if a == _AC_MIN or b == _AC_MIN or abs(a) > _AC_MAX // abs(b):
            raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a * b
'''

PYTHON_SCALARS = '''
_AC_EXACT = 9007199254740992  # 2 ** 53: ints up to this convert to float exactly


@numba.njit(cache=True)
def _ac_py_compare_int_float(a, b):
    # Python orders an int and a float exactly; float(a) may round, so a tie is decided on ints.
    # -1: a < b, 0: a == b, 1: a > b, 2: b is NaN (unordered)
    fa = float(a)
    if fa < b:
        return -1
    if fa > b:
        return 1
    if fa != b:
        return 2
    if b >= 9.2233720368547758e18:  # 2 ** 63: above every 64-bit int
        return -1
    ib = int(b)
    return -1 if a < ib else (1 if a > ib else 0)


@numba.njit(cache=True)
def _ac_py_floor_divide_int(a, b):
    if b == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    if b == -1 and a == _AC_MIN:
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a // b


@numba.njit(cache=True)
def _ac_py_remainder_int(a, b):
    if b == 0:
        raise ZeroDivisionError("integer modulo by zero")
    if b == -1:
        return 0
    return a % b


@numba.njit(cache=True)
def _ac_py_divide_int(a, b):
    # int / int: Python rounds the exact quotient once; exact here while both fit in 53 bits
    if b == 0:
        raise ZeroDivisionError("division by zero")
    if abs(a) > _AC_EXACT or abs(b) > _AC_EXACT:
        raise OverflowError("a Python int too large for an exact float division")
    return float(a) / float(b)


@numba.njit(cache=True)
def _ac_py_negative_int(a):
    if a == _AC_MIN:
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return -a


@numba.njit(cache=True)
def _ac_py_absolute_int(a):
    if a == _AC_MIN:
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return abs(a)


@numba.njit(cache=True)
def _ac_py_right_shift_int(a, b):
    if b < 0:
        raise ValueError("negative shift count")
    if b > 63:
        return -1 if a < 0 else 0
    return a >> b


@numba.njit(cache=True)
def _ac_py_left_shift_int(a, b):
    if b < 0:
        raise ValueError("negative shift count")
    if a == 0:
        return 0
    if b > 62 or ((a << b) >> b) != a:  # the bits shifted out must be copies of the sign
        raise OverflowError("a Python int in a compiled loop outgrew 64 bits")
    return a << b


@numba.njit(cache=True)
def _ac_py_power_int(a, b):
    result = 1
    base = a
    e = b
    while e > 0:
        if e & 1:
            result = _ac_multiply_int(result, base)
        e = e >> 1
        if e > 0:
            base = _ac_multiply_int(base, base)
    return result


@numba.njit(cache=True)
def _ac_py_divide(a, b):
    if b == 0.0:
        raise ZeroDivisionError("float division by zero")
    return a / b


@numba.njit(cache=True)
def _ac_py_floor_divide(a, b):
    # Python's float_divmod (CPython floatobject.c)
    if b == 0.0:
        raise ZeroDivisionError("float floor division by zero")
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0.0 and (b < 0.0) != (mod < 0.0):
        div -= 1.0
    if div != 0.0:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
        return floordiv
    return np.copysign(0.0, a / b)


@numba.njit(cache=True)
def _ac_py_remainder(a, b):
    if b == 0.0:
        raise ZeroDivisionError("float modulo")
    mod = np.fmod(a, b)
    if mod != 0.0:
        if (b < 0.0) != (mod < 0.0):
            mod += b
        return mod
    return np.copysign(0.0, b)


@numba.njit(cache=True)
def _ac_py_power(a, b):
    if a == 0.0 and b < 0.0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if a < 0.0 and np.isfinite(b) and b != np.floor(b):
        raise OverflowError("a negative float to a fractional power is complex in Python")
    r = a ** b
    if np.isinf(r) and np.isfinite(a) and np.isfinite(b):
        raise OverflowError("float power out of range")  # Python raises: the graph reruns
    return r


@numba.njit(cache=True)
def _ac_py_round(a):
    if not np.isfinite(a) or abs(a) >= 9.2e18:
        raise OverflowError("round() of a float outside 64 bits")  # Python decides: rerun
    return int(np.rint(a))
'''

PY_COMPLEX = '''

@numba.njit(cache=True)
def _ac_py_abs_complex(z):
    r = abs(z)
    if np.isinf(r) and np.isfinite(z.real) and np.isfinite(z.imag):
        raise OverflowError("absolute value too large")  # Python raises: the graph reruns
    return r
'''

PY_CONVERSIONS = '''

@numba.njit(cache=True)
def _ac_py_int_float(x):
    if x != x:
        raise ValueError("cannot convert float NaN to integer")
    if not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        raise OverflowError("int() of a float outside 64 bits")  # Python decides: rerun
    return int(x)


@numba.njit(cache=True)
def _ac_py_int_uint64(x):
    if x > numba.uint64(9223372036854775807):
        raise OverflowError("int() of a uint64 outside int64")  # Python decides: rerun
    return numba.int64(x)
'''

FITS = '''
@numba.njit(cache=True)
def _ac_fits_{dtype}(v):
    if v < {low} or v > {high}:
        raise OverflowError("a Python int out of bounds for {dtype}")
    return v
'''

RESHAPE = '''
@numba.njit(cache=True)
def _ac_reshape(a, shape):
    # NumPy: a view when the layout allows, else a copy; used only where the two cannot differ.
    # numba's ascontiguousarray returns a C-contiguous array itself (a branch on a.flags would
    # not type: numba types a.reshape of a non-contiguous array in the untaken branch too)
    return np.ascontiguousarray(a).reshape(shape)
'''

UFUNC_OUTER = '''
@numba.njit(cache=True)
def _ac_outer_{name}(a, b):
    out = np.empty((a.shape[0], b.shape[0]), {dtype})
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = np.{name}(a[i], b[j])
    return out
'''

NORM2 = '''
@numba.njit(cache=True)
def _ac_norm2(x):
    # NumPy's norm(x): sqrt(dot(x, x)) of the flattened array
    v = np.ascontiguousarray(x).ravel()
    return np.sqrt(np.dot(v, v))
'''


# -- NumPy ops ---------------------------------------------------------------------------------



def _accumulator(rule: ReductionDef, source: np.dtype, result: np.dtype) -> np.dtype:
    """The accumulator dtype (``scalar.accumulator``); raises ValueError where it has none."""
    acc = accumulator(rule.accumulate, source, result)
    if acc is None:
        raise ValueError(f"no accumulator dtype for {source} -> {result} ({rule.accumulate})")
    return acc


def _init_value(init: str, dtype: np.dtype) -> str:
    if init in ("lowest", "highest"):
        low = init == "lowest"
        if dtype.kind == "f":
            return "-np.inf" if low else "np.inf"
        if dtype.kind == "b":
            return "False" if low else "True"
        info = np.iinfo(dtype)
        return repr(int(info.min if low else info.max))
    return init


def reduction_source(name: str, rule: ReductionDef, ndim: int, axes: tuple[int, ...],
                     keepdims: bool, source: np.dtype, result: np.dtype,
                     no_identity: str | None) -> str:
    """A reduction over ``axes`` of an ``ndim``-d array as loops: kept axes outside, reduced
    axes inside, one accumulator per output element. The function takes ``(a, ddof)`` and
    returns an array of the kept (or keepdims) shape, or a scalar when every axis is reduced.
    When the last axis is kept, the array is read in memory order into a row of accumulators
    instead (``_streamed_reduction``)."""
    if axes and ndim - 1 not in axes and not rule.arg:
        return _streamed_reduction(name, rule, ndim, axes, keepdims, source, result, no_identity)
    acc_dt = _accumulator(rule, source, result)
    acc, out = type_name(acc_dt), type_name(result)
    kept = [d for d in range(ndim) if d not in axes]
    order = kept + list(axes)
    outer = [f"i{k}" for k in range(len(kept))]
    inner = [f"j{k}" for k in range(len(axes))]
    index = ", ".join(outer + inner)
    n = " * ".join(f"src.shape[{len(kept) + k}]" for k in range(len(axes))) or "1"
    size = " * ".join(f"src.shape[{k}]" for k in range(len(kept))) or "1"
    permute = order != list(range(ndim))
    lines = ["@numba.njit(cache=True)", f"def {name}(a, ddof):",
             f"    src = np.transpose(a, ({', '.join(map(str, order))},))" if permute
             else "    src = a",
             f"    n = {n}"]
    if no_identity is not None:
        lines += ["    if n == 0:", f"        raise ValueError({no_identity!r})"]
    lines += [f"    out = np.empty({size}, {out})", "    flat = 0"]
    pad = "    "
    for k, var in enumerate(outer):
        lines.append(f"{pad}for {var} in range(src.shape[{k}]):")
        pad += "    "
    nan_aware = rule.propagate_nan and source.kind == "f"
    lines.append(f"{pad}acc = {acc}({_init_value(rule.init, acc_dt)})")
    if rule.arg:
        lines.append(f"{pad}best = 0")
    if rule.two_pass:
        lines.append(f"{pad}total = {acc}(0)")
        lines += _nest(pad, len(kept), inner, [f"total += {acc}(src[{index}])"])
        lines.append(f"{pad}mean = total / n")
    element = [f"v = {acc}(src[{index}])"]
    fields = {"acc": "acc", "v": "v", "mean": "mean", "n": "n", "ddof": "ddof"}
    if rule.arg:
        position = inner[0] if inner else "0"
        if source.kind == "f":  # the first NaN wins
            element += ["if v != v:", f"    best = {position}", "    break"]
        element += [f"if {rule.combine.format(**fields)}:", "    acc = v", f"    best = {position}"]
    elif nan_aware:  # a NaN stays the result
        element += [f"if acc == acc and (v != v or {rule.combine.format(**fields)} != acc):",
                    "    acc = v"]
    elif rule.merge is not None and inner:  # independent lanes: no serial add chain
        lines += _lanes(pad, len(kept), outer, inner, rule, acc)
    else:
        element.append(f"acc = {acc}({rule.combine.format(**fields)})")
    if rule.arg or nan_aware or rule.merge is None or not inner:
        lines += _nest(pad, len(kept), inner, element)
    final = "best" if rule.arg else rule.finalize.format(**fields)
    lines += [f"{pad}out[flat] = {out}({final})", f"{pad}flat += 1"]
    if len(kept) == 0 and not keepdims:
        lines.append("    return out[0]")
    else:
        shape = [f"src.shape[{kept.index(d)}]" if d in kept else "1" for d in range(ndim)] \
            if keepdims else [f"src.shape[{k}]" for k in range(len(kept))]
        lines.append(f"    return out.reshape(({', '.join(shape)},))")
    return "\n".join(lines) + "\n"


LANES = 4  # accumulators of an unrolled innermost reduction loop


def _lanes(pad: str, depth: int, outer: list[str], inner: list[str], rule: ReductionDef,
           acc: str) -> list[str]:
    """The reduction's element loops with the innermost one unrolled over ``LANES``
    accumulators (``acc``, ``acc1``, ...), merged at the end with ``rule.merge``."""
    names = ["acc"] + [f"acc{k}" for k in range(1, LANES)]
    lines = [f"{pad}{' = '.join(names[1:])} = acc"]
    body_pad = pad + "    " * (len(inner) - 1)
    last, size = inner[-1], f"src.shape[{depth + len(inner) - 1}]"

    def step(lane: str, position: str) -> list[str]:
        index = ", ".join(outer + inner[:-1] + [position])
        fields = {"acc": lane, "v": "v", "mean": "mean", "n": "n", "ddof": "ddof"}
        return [f"v = {acc}(src[{index}])", f"{lane} = {acc}({rule.combine.format(**fields)})"]

    lines += _nest(pad, depth, inner[:-1], [])
    unrolled = [line for k, lane in enumerate(names) for line in step(lane, f"{last} + {k}")]
    lines += [f"{body_pad}for {last} in range(0, {size} - {LANES - 1}, {LANES}):"]
    lines += [f"{body_pad}    {line}" for line in unrolled]
    lines += [f"{body_pad}for {last} in range({size} - {size} % {LANES}, {size}):"]
    lines += [f"{body_pad}    {line}" for line in step("acc", last)]
    merged = rule.merge.format(a=rule.merge.format(a="acc", b="acc1"),
                               b=rule.merge.format(a="acc2", b="acc3"))
    return lines + [f"{pad}acc = {acc}({merged})"]


def _streamed_reduction(name: str, rule: ReductionDef, ndim: int, axes: tuple[int, ...],
                        keepdims: bool, source: np.dtype, result: np.dtype,
                        no_identity: str | None) -> str:
    """Reduce ``axes`` (not the last one) reading ``a`` in C order: ``acc[o]`` per output
    element ``o`` (the flat index of the kept axes), combined element by element."""
    acc_dt = _accumulator(rule, source, result)
    acc, out = type_name(acc_dt), type_name(result)
    kept = [d for d in range(ndim) if d not in axes]
    index = ", ".join(f"d{d}" for d in range(ndim))
    flat = f"d{kept[0]}"
    for d in kept[1:]:
        flat = f"{flat} * a.shape[{d}] + d{d}"
    n = " * ".join(f"a.shape[{d}]" for d in axes)
    size = " * ".join(f"a.shape[{d}]" for d in kept)
    lines = ["@numba.njit(cache=True)", f"def {name}(a, ddof):", f"    n = {n}"]
    if no_identity is not None:
        lines += ["    if n == 0:", f"        raise ValueError({no_identity!r})"]
    lines.append(f"    acc = np.full({size}, {acc}({_init_value(rule.init, acc_dt)}), {acc})")
    fields = {"acc": "acc[o]", "v": "v", "mean": "mean[o]", "n": "n", "ddof": "ddof"}
    sweep = [f"o = {flat}", f"v = {acc}(a[{index}])"]
    if rule.two_pass:
        lines.append(f"    mean = np.zeros({size}, {acc})")
        lines += _loops(ndim, sweep + ["mean[o] += v"])
        lines += ["    mean = mean / n"]
    if rule.propagate_nan and source.kind == "f":  # a NaN stays the result
        sweep += [f"if acc[o] == acc[o] and (v != v or {rule.combine.format(**fields)} != acc[o]):",
                  "    acc[o] = v"]
    else:
        sweep.append(f"acc[o] = {acc}({rule.combine.format(**fields)})")
    lines += _loops(ndim, sweep)
    lines += [f"    out = np.empty({size}, {out})", f"    for o in range({size}):",
              f"        out[o] = {out}({rule.finalize.format(**fields)})"]
    shape = [f"a.shape[{d}]" if d in kept else "1" for d in range(ndim)] if keepdims \
        else [f"a.shape[{d}]" for d in kept]
    lines.append(f"    return out.reshape(({', '.join(shape)},))")
    return "\n".join(lines) + "\n"


def _loops(ndim: int, body: list[str]) -> list[str]:
    lines, pad = [], "    "
    for d in range(ndim):
        lines.append(f"{pad}for d{d} in range(a.shape[{d}]):")
        pad += "    "
    return lines + [pad + line for line in body]


def _nest(pad: str, depth: int, variables: list[str], body: list[str]) -> list[str]:
    lines = []
    for k, var in enumerate(variables):
        lines.append(f"{pad}for {var} in range(src.shape[{depth + k}]):")
        pad += "    "
    return lines + [pad + line for line in body]


def linspace_source(name: str, work: np.dtype, result: np.dtype) -> str:
    """``np.linspace(start, stop, num, endpoint)`` of scalars as NumPy computes it: in the
    inexact ``work`` dtype, ``i * step + start`` (``i / div * delta + start`` when the step
    underflows to 0), the endpoint stored exactly, floored for an integer ``result``."""
    dt, out = type_name(work), type_name(result)
    store = f"{out}(np.floor(y))" if result.kind in "iu" else f"{out}(y)"
    last = f"{out}(np.floor(stop))" if result.kind in "iu" else f"{out}(stop)"
    return f'''
@numba.njit(cache=True)
def {name}(start, stop, num, endpoint):
    start, stop = {dt}(start), {dt}(stop)
    div = num - 1 if endpoint else num
    delta = stop - start
    out = np.empty(num, {out})
    step = delta / {dt}(div) if div > 0 else delta
    tiny = div > 0 and step == 0
    for i in range(num):
        if tiny:
            y = {dt}(i) / {dt}(div) * delta + start
        else:
            y = {dt}(i) * step + start
        out[i] = {store}
    if endpoint and num > 1:
        out[num - 1] = {last}
    return out
'''


def arange_source(name: str, result: np.dtype) -> str:
    """``np.arange(start, stop, step)`` as NumPy fills it: ``start + i * delta`` with
    ``delta = (start + step) - start`` computed in the result dtype."""
    out = type_name(result)
    message = "division by zero" if result.kind in "iu" else "float division by zero"
    return f'''
@numba.njit(cache=True)
def {name}(start, stop, step):
    if step == 0:
        raise ZeroDivisionError({message!r})
    n = max(int(np.ceil((stop - start) / step)), 0)
    out = np.empty(n, {out})
    if n == 0:
        return out
    first = {out}(start)
    out[0] = first
    if n > 1:
        out[1] = {out}(start + step)
        delta = {out}(out[1] - first)
        for i in range(2, n):
            out[i] = {out}(first + {out}(i) * delta)
    return out
'''


def scipy_blas() -> bool:
    """numba's ``np.dot`` and ``np.linalg`` need SciPy's BLAS/LAPACK bindings."""
    global _SCIPY
    if _SCIPY is None:
        import importlib.util
        _SCIPY = importlib.util.find_spec("scipy") is not None
    return _SCIPY


_SCIPY: bool | None = None

# loops for contractions without BLAS (integer dtypes, or no SciPy): the caller allocates ``out``
# in NumPy's result dtype and casts the operands to it, so sums wrap or round as NumPy's do
CONTRACTIONS = '''

@numba.njit(cache=True)
def _ac_dot(a, b, total):
    for k in range(a.shape[0]):
        total += a[k] * b[k]
    return total


@numba.njit(cache=True)
def _ac_matvec(a, b, out):
    for i in range(a.shape[0]):
        total = out[i]
        for k in range(a.shape[1]):
            total += a[i, k] * b[k]
        out[i] = total
    return out


@numba.njit(cache=True)
def _ac_vecmat(a, b, out):
    for k in range(a.shape[0]):
        ak = a[k]
        for j in range(b.shape[1]):
            out[j] += ak * b[k, j]
    return out


@numba.njit(cache=True)
def _ac_matmul(a, b, out):
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                out[i, j] += aik * b[k, j]
    return out
'''

OUTER = '''

@numba.njit(cache=True)
def _ac_outer(a, b, out):
    for i in range(a.shape[0]):
        ai = a[i]
        for j in range(b.shape[0]):
            out[i, j] = ai * b[j]
    return out
'''


def roll_source(name: str, ndim: int, axis: int) -> str:
    """``np.roll(a, shift, axis)`` along one axis: two slice copies into a fresh array
    (``shift % n`` with Python's modulo, as NumPy takes it)."""
    def part(text: str) -> str:
        return ", ".join(text if d == axis else ":" for d in range(ndim))
    return f'''
@numba.njit(cache=True)
def {name}(a, shift):
    out = np.empty(a.shape, a.dtype)
    n = a.shape[{axis}]
    s = shift % n if n else 0
    out[{part("s:")}] = a[{part(":n - s")}]
    out[{part(":s")}] = a[{part("n - s:")}]
    return out
'''


def scan_source(name: str, combine: str, result: np.dtype) -> str:
    """``np.cumsum``/``np.cumprod`` of a vector (or of a flattened array) in the result dtype,
    accumulated in order as NumPy does."""
    out = type_name(result)
    return f'''
@numba.njit(cache=True)
def {name}(a):
    flat = np.ascontiguousarray(a).reshape(a.size)
    out = np.empty(a.size, {out})
    acc = {out}({"0" if combine == "+" else "1"})
    for i in range(a.size):
        acc = {out}(acc {combine} {out}(flat[i]))
        out[i] = acc
    return out
'''
