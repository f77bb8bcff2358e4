"""njit helper sources for expressions inside loop regions that numba cannot spell as NumPy does.

Each function returns ``(name, source)``: a small ``@numba.njit`` function specialized for one
op's static parameters (axes, dtypes), written into the structured kernel's module. Reductions
follow the op table's ``ReductionDef`` (init, combine, finalize, accumulator dtype); ranges and
contractions follow NumPy's formulas and dtype rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.registry import ReductionDef


def dtype_name(dtype: Any) -> str:
    """The numba spelling of a dtype after ``np.``: ``bool_`` for bool."""
    return np.dtype(dtype).name.replace("bool", "bool_")


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


def accumulator(rule: ReductionDef, source: np.dtype, result: np.dtype) -> np.dtype:
    """The dtype a reduction accumulates in (``ReductionDef.accumulate``)."""
    how = rule.accumulate
    if how == "input":
        return source
    if how == "bool":
        return np.dtype(bool)
    if how in ("wide", "float64") and result.kind in "fc":
        return np.dtype(np.complex128 if result.kind == "c" else np.float64)
    return result


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
    acc_dt = accumulator(rule, source, result)
    acc, out = f"np.{dtype_name(acc_dt)}", f"np.{dtype_name(result)}"
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
    acc_dt = accumulator(rule, source, result)
    acc, out = f"np.{dtype_name(acc_dt)}", f"np.{dtype_name(result)}"
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
    dt, out = f"np.{dtype_name(work)}", f"np.{dtype_name(result)}"
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
    out = f"np.{dtype_name(result)}"
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
    out = f"np.{dtype_name(result)}"
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
