"""Complex values in fused kernels: scalar rules that give NumPy's bits.

``scalar.lower_pointwise`` sends every pointwise node with a complex result or operand here. A
rule exists only where the kernel computes exactly what NumPy's ufunc loop computes; every other
complex node stays a NumPy step in the wrapper (slower, never wrong):

* ``add``, ``subtract``, ``negative``, ``positive``, ``conjugate``: componentwise, exact;
* ``multiply`` and ``square``: NumPy's loops compute ``(ar*br - ai*bi, ar*bi + ai*br)`` with fused
  multiply-adds where the CPU has them (AVX2/AVX-512 builds), plain products elsewhere: which one
  is probed once on this machine's NumPy (``numpy_complex_multiply``), and a kernel computes the
  same with ``fma.fma`` (numba's own complex ``*`` never fuses). NumPy *scalars* multiply without
  fusing, but kernels only see arrays;
* ``absolute``: NumPy's SIMD loop is ``larger * sqrt(fma(r, r, 1))`` with ``r = smaller / larger``
  and its inf/nan rules (not ``hypot``, which numba's ``abs`` calls: up to 1 ulp apart); used when
  the probe finds this machine's NumPy computes it so. The kernel divides by 1 where NumPy masks
  the division out (``0/0``, ``inf/inf``), so it raises no flag NumPy's loop would not;
* ``equal``/``not_equal`` (both parts), ``isnan``/``isinf``/``isfinite`` (either or both parts),
  ``where`` with complex branches, ``astype``/``copy`` from float or complex to complex.

Left to NumPy: ``divide`` (Smith's algorithm), ``power`` and every transcendental function,
orderings (``less``, ``maximum``: lexicographic), complex-to-float casts (``ComplexWarning``),
reductions, and Python ints too large for a complex64 component or any dynamic Python int
beside a complex64 array (NumPy rounds those through float64 first).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...graph import Node
from ...ops import REGISTRY

_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))
_COMPLEX = frozenset(np.dtype(t) for t in (np.complex64, np.complex128))

# the kernel module line that makes ``fma`` available to these helpers
FMA_IMPORT = "from astcompiler.lower.numba.fma import fma"

HELPERS: dict[str, str] = {
    "cmul_fused": '''
def cmul_{dt}(a, b):
    """NumPy's complex multiply (its SIMD loop: a fused multiply-add per part)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    return {T}(complex(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br)))
''',
    "cmul_plain": '''
def cmul_{dt}(a, b):
    """NumPy's complex multiply (without fused multiply-adds)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    return {T}(complex(ar * br - ai * bi, ar * bi + ai * br))
''',
    "cabs_simd": '''
def cabs_{dt}(z):
    """NumPy's SIMD complex absolute: larger * sqrt(1 + (smaller / larger) ** 2), an infinite
    part making it inf and a NaN part NaN; 0/0 and inf/inf are never divided (no FP flags)."""
    re = np.abs(z.real)
    im = np.abs(z.imag)
    re_inf = np.isinf(re)
    im_inf = np.isinf(im)
    im = {F}(np.inf) if re_inf else im
    re = {F}(np.inf) if im_inf else re
    re_nan = np.isnan(re)
    im_nan = np.isnan(im)
    im = {F}(np.nan) if re_nan else im
    re = {F}(np.nan) if im_nan else re
    larger = re if re > im else im
    smaller = im if im < re else re
    # never 0/0 nor inf/inf, also on vector lanes: a select between the divisor and 1.0 would be
    # folded into a speculated division (a spurious *invalid* flag); the smallest subnormal is no
    # other divisor's neighbour (any nonzero ``larger`` is at least that large)
    smaller = {F}(0.0) if np.isinf(smaller) else smaller
    ratio = smaller / (larger if larger != {F}(0.0) else {F}({TINY}))
    return {F}(np.sqrt(fma(ratio, ratio, {F}(1.0))) * larger)
''',
}


def helper_source(key: str) -> str:
    """Source of complex helper ``key`` (``"name:dtype"``), without its decorator."""
    name, _, dt = key.partition(":")
    dtype = np.dtype(dt)
    part = np.dtype(f"f{dtype.itemsize // 2}")
    text = HELPERS[name].format(dt=dtype.name, T=f"np.{dtype.name}", F=f"np.{part.name}",
                                TINY=repr(float(np.finfo(part).smallest_subnormal)))
    return text.strip("\n") + "\n"


def helper_call(key: str) -> str:
    """The function a template calls for complex helper ``key``."""
    name, _, dt = key.partition(":")
    return f"{name.partition('_')[0]}_{np.dtype(dt).name}"


def touches_complex(node: Node) -> bool:
    """Whether a pointwise node has a complex result or a complex operand."""
    values = [node] + list(node.args)
    for value in values:
        if isinstance(value, Node):
            if value.meta is not None and np.dtype(value.meta.dtype).kind == "c":
                return True
        elif isinstance(value, (complex, np.complexfloating)):
            return True
    return False


# -- what this machine's NumPy computes ---------------------------------------------------------


def _fma(a: float, b: float, c: float) -> float:
    """a * b + c rounded once (finite operands)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


@functools.lru_cache(maxsize=None)
def numpy_complex_multiply() -> str | None:
    """``"fused"`` or ``"plain"``: how NumPy's complex multiply loop computes its parts here
    (None: neither, so complex products stay NumPy's). Probed on values where they differ."""
    x = 1.0 + 2.0 ** -30
    a = np.array([complex(x, 1.0)] * 3)
    got = np.multiply(a, a)
    fused, plain = _fma(x, x, -1.0), x * x - 1.0
    if all(v.real == fused for v in got) and np.square(a)[0].real == fused:
        return "fused"
    if all(v.real == plain for v in got) and np.square(a)[0].real == plain:
        return "plain"
    return None


def _cabs_simd(re: float, im: float) -> float:
    re, im = abs(re), abs(im)
    if math.isinf(re) or math.isinf(im):
        return math.inf
    if math.isnan(re) or math.isnan(im):
        return math.nan
    larger, smaller = max(re, im), min(re, im)
    if larger == 0.0:
        return 0.0
    ratio = smaller / larger
    return math.sqrt(_fma(ratio, ratio, 1.0)) * larger


@functools.lru_cache(maxsize=None)
def numpy_complex_absolute_simd() -> bool:
    """Whether NumPy's complex ``absolute`` is its SIMD formula here (not ``hypot``): checked on
    random values (where the two differ in a few percent of cases) and special ones."""
    rng = np.random.default_rng(12345)
    parts = rng.standard_normal((2, 256)) * np.exp(rng.uniform(-20.0, 20.0, (2, 256)))
    special = [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1e300, 1e-300]
    re = np.concatenate([parts[0], np.repeat(special, len(special))])
    im = np.concatenate([parts[1], np.tile(special, len(special))])
    values = np.empty(len(re), np.complex128)
    values.real, values.imag = re, im
    got = np.abs(values)
    want = np.array([_cabs_simd(float(r), float(i)) for r, i in zip(re, im)])
    return bool(np.array_equal(got, want, equal_nan=True))


# -- rules --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ComplexRule:
    """How a pointwise op computes complex values in a kernel as NumPy's loop does (the numba op
    table's ``NumbaRule.complex``): a ``template`` on the operands (``{0}``, ``{1}``), or one of
    NumPy's ``measured`` forms (``"cmul"``: the multiply this machine's NumPy computes, called
    with ``operands``; ``"cabs"``: its SIMD absolute value). ``kind``: ``"ufunc"`` (the op's
    ufunc decides the loop dtypes), ``"condition"`` (``where``) or ``"cast"`` (to a complex
    dtype)."""

    template: str | None = None
    measured: str | None = None
    operands: str = "{0}, {1}"
    kind: str = "ufunc"


def _operand_type(value: Any, weak: dict[Node, type]) -> Any:
    """What NumPy's type resolution sees (a dtype, or a Python type when weak); None: no rule."""
    if isinstance(value, Node):
        if value in weak:
            return weak[value]
        if value.meta is None:
            return None
        dtype = np.dtype(value.meta.dtype)
        return dtype if dtype in _FLOATS | _COMPLEX or dtype.kind == "b" else None
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, (int, float, complex)):
        return type(value)
    if isinstance(value, np.generic) and np.dtype(value.dtype) in _FLOATS | _COMPLEX:
        return np.dtype(value.dtype)
    return None


def _representable(value: Any, loop: np.dtype, weak: dict[Node, type]) -> bool:
    """A Python int beside a complex64 loop only as a small literal (NumPy rounds ints through
    float64, a kernel would round them once)."""
    if loop != np.dtype(np.complex64):
        return True
    if isinstance(value, Node):
        return weak.get(value) is not int
    if type(value) is int:
        return abs(value) <= 2 ** 24
    return True


def lower_complex(node: Node, weak: dict[Node, type], rule_type: Any,
                  rule: ComplexRule | None) -> Any:
    """The ``rule_type`` (``scalar.ScalarRule``) of a complex pointwise node by the op's
    ``rule`` (None: no exact rule, NumPy computes it), or None."""
    if rule is None or node.meta is None or any(
            isinstance(v, Node) for v in node.kwargs.values()) or "out" in node.kwargs:
        return None
    out = np.dtype(node.meta.dtype)
    if rule.kind == "condition":
        return _lower_where(node, weak, out, rule_type)
    if rule.kind == "cast":
        return _lower_cast(node, out, rule_type)
    ufunc = REGISTRY[node.target].ufunc
    if ufunc is None or len(node.args) != ufunc.nin or node.kwargs.get("dtype") is not None:
        return None
    ins = tuple(_operand_type(a, weak) for a in node.args)
    if any(t is None for t in ins):
        return None
    try:
        loop = ufunc.resolve_dtypes(ins + (None,))
    except (TypeError, ValueError):
        return None
    in_dts, out_dt = tuple(loop[:-1]), loop[-1]
    if not all(d in _COMPLEX for d in in_dts) or out_dt != out:
        return None
    if not all(_representable(a, in_dts[0], weak) for a in node.args):
        return None
    template, helpers = _template(rule, in_dts[0])
    if template is None:
        return None
    return rule_type(in_dts, template, out_dt, helpers)


def _template(rule: ComplexRule, dtype: np.dtype) -> tuple[str | None, tuple[str, ...]]:
    if rule.template is not None:
        return rule.template, ()
    if rule.measured == "cmul":
        style = numpy_complex_multiply()
        if style is None:
            return None, ()
        key = f"cmul_{style}:{dtype.name}"
        return f"{helper_call(key)}({rule.operands})", (key,)
    if rule.measured == "cabs" and numpy_complex_absolute_simd():
        key = f"cabs_simd:{dtype.name}"
        return f"{helper_call(key)}({rule.operands})", (key,)
    return None, ()


def _lower_where(node: Node, weak: dict[Node, type], out: np.dtype, rule_type: Any) -> Any:
    if len(node.args) != 3 or out not in _COMPLEX:
        return None
    condition, *branches = node.args
    if _operand_type(condition, weak) != np.dtype(bool):
        return None
    for value in branches:
        kind = _operand_type(value, weak)
        if kind is None or kind == np.dtype(bool) or not _representable(value, out, weak):
            return None
    return rule_type((np.dtype(bool), out, out), "({1} if {0} else {2})", out)


def _lower_cast(node: Node, out: np.dtype, rule_type: Any) -> Any:
    """astype / copy to a complex dtype from a float or complex array."""
    if not node.args or not isinstance(node.args[0], Node) or out not in _COMPLEX:
        return None
    source = node.args[0].meta
    if source is None or np.dtype(source.dtype) not in _FLOATS | _COMPLEX:
        return None
    returns_input = REGISTRY[node.target].returns_input
    if returns_input is not None and returns_input(node.args, node.kwargs):
        return None
    if REGISTRY[node.target].order_arg and node.kwargs.get("order", "K") not in ("K", "C", "F"):
        return None
    return rule_type((None,), "{0}", None, operands=(0,))


__all__ = ["ComplexRule", "lower_complex", "touches_complex", "helper_source", "helper_call",
           "HELPERS", "FMA_IMPORT", "numpy_complex_multiply", "numpy_complex_absolute_simd"]
