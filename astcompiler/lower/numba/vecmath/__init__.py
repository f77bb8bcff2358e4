"""Vectorizable math functions for numba kernels (issue 11, lever 1).

pip's llvmlite has no SVML: ``np.exp``/``math.sin`` in a numba loop are scalar libm calls and the
loop does not vectorize. The functions here are branch-free numba code (range reduction plus
polynomials fitted by ``tools/vecmath_coefficients.py``; bit casts and ``fma`` through
``numba.extending.intrinsic``) that LLVM inlines and vectorizes (packed ``ymm``/``zmm``
instructions, no calls in the loop). They match NumPy at the special values (inf, NaN, signed
zeros, subnormals, overflow and underflow thresholds) and raise the floating-point flags NumPy
raises, and no others (classification is done on bits: a float compare with a NaN operand
signals *invalid* once vectorized). float32 ``exp`` and ``log``, and the ``NATIVE_FLOAT32``
functions (``float32.py``), compute with float32 polynomials; the other float32 functions
evaluate the float64 one and round once more. ``power`` (``power.py``) is
``exp(y * log|x|)`` with a double-double log and NumPy's special cases.

LLVM computes what a select chooses from on every lane (it rewrites ``op(select(c, v, K))`` as
``select(c, op(v), op(K))`` and simplifies a select arm's inputs under its condition), so
sanitized inputs are clamped with integer min/max or blended arithmetically, and flags are
checked on vector lanes too (``tests/lower/test_vecmath_f32.py``). On AVX-512 machines
tuned for 256-bit vectors, the kernels they are inlined into are marked to use 512-bit ones
(``bits.prefer_wide_vectors``).

Which ufunc uses which function is the numba op table's (``NumbaRule.vecmath``, declared in
``oprules_pointwise.VECMATH``); ``VECTOR_MATH`` maps ``(ufunc name, dtype name)`` to
``(module, function)`` from it; ``scalar.py`` spells those ufuncs as calls to the function,
imported into the kernel module, when ``config.vector_math`` is on. Accuracy (max ulp against
a correctly rounded reference) is measured by ``benchmarks/vecmath_accuracy.py`` and published
in ``docs/performance.md``.

This package's ``__init__`` imports no numba: the table is read when kernels are planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class VecFunction:
    """The vecmath function of one ufunc, as the numba op table declares it
    (``NumbaRule.vecmath``, listed in ``oprules_pointwise.VECMATH``): the module of this package
    that defines ``<ufunc>_f64`` and ``<ufunc>_f32``."""

    family: str  # module of this package (``float32.py`` for native float32 functions)
    native_float32: bool = False  # float32 polynomials of its own (``float32.py``)
    fast_float64: bool = False  # a small-argument variant ``<ufunc>_fast_f64`` (``trig.py``)
    float32_in_kernels: bool = True  # False: implemented and tested, float32 kernels keep libm


_SUFFIX = {"float64": "f64", "float32": "f32"}
_PACKAGE = __name__  # astcompiler.lower.numba.vecmath


_FUNCTIONS: dict[str, VecFunction] = {}


def functions() -> dict[str, VecFunction]:
    """The ufuncs with a vecmath function, by name (from the numba op table; read once)."""
    if not _FUNCTIONS:
        from ..optable import TABLE

        _FUNCTIONS.update((name, rule.vecmath) for name, rule in TABLE.items()
                          if rule.vecmath is not None)
    return _FUNCTIONS


def _vector_math() -> dict[tuple[str, str], tuple[str, str]]:
    """``(ufunc name, dtype name) -> (module, function)`` of every vecmath function."""
    return {(name, dtype): (f"{_PACKAGE}."
                            f"{'float32' if dtype == 'float32' and f.native_float32 else f.family}",
                            f"{name}_{suffix}")
            for name, f in functions().items() for dtype, suffix in _SUFFIX.items()}


def __getattr__(name: str) -> Any:
    """``VECTOR_MATH`` (``(ufunc, dtype) -> (module, function)``) and ``NATIVE_FLOAT32`` (the
    ufuncs with float32 polynomials of their own), built from the op table on first use: the
    table imports this package."""
    if name == "VECTOR_MATH":
        value: Any = _vector_math()
    elif name == "NATIVE_FLOAT32":
        value = tuple(n for n, f in functions().items() if f.native_float32)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _index() -> dict[tuple[str, str], tuple[str, str]]:
    return globals().get("VECTOR_MATH") or __getattr__("VECTOR_MATH")


PREFIX = "vecmath"  # helper keys ``vecmath:<ufunc>:<dtype>`` (scalar.py)


def helper_key(name: str, dtype: str) -> str | None:
    """The kernel helper key for ufunc ``name`` on ``dtype``, None when not covered (by its
    op-table entry)."""
    function = functions().get(name)
    covered = function is not None and dtype in _SUFFIX \
        and (dtype != "float32" or function.float32_in_kernels)
    return f"{PREFIX}:{name}:{dtype}" if covered else None


def call_name(key: str) -> str:
    """The name a kernel module calls the function of helper ``key`` by."""
    _, name, dtype = key.split(":")
    return f"vm_{name}_{dtype}"


def import_line(key: str) -> str:
    """The kernel module's import of the function of helper ``key``, tagged with a hash of
    this package's sources: the function is inlined into the kernel, whose numba disk cache
    only tracks the kernel module, so a changed vecmath must change the kernel's source (and
    its content-addressed file name)."""
    _, name, dtype = key.split(":")
    module, function = _index()[(name, dtype)]
    return f"from {module} import {function} as {call_name(key)}  # vecmath {source_hash()}"


# functions with a cheaper variant for small arguments (``VecFunction.fast_float64``; ``trig.py``:
# Cody-Waite below 2**15): pointwise kernels run blocks of 64 elements with it and rerun a block
# with the full function when ``BIG_CHECK`` says an argument was past it; both give the same bits
# where both apply
BIG_CHECK = "trig_big_f64"
FAST_BLOCK = 64  # elements per block


def fast_call(key: str) -> str | None:
    """The call name of helper ``key``'s small-argument variant, None when it has none (and for
    helpers that are not vecmath functions: their keys have another form)."""
    parts = key.split(":")
    if len(parts) != 3 or parts[0] != PREFIX:
        return None
    _, name, dtype = parts
    function = functions().get(name)
    fast = function is not None and function.fast_float64 and dtype == "float64"
    return f"vm_{name}_fast_{dtype}" if fast else None


def libm_call(key: str) -> str:
    """The libm spelling of helper ``key``'s function (``np.<ufunc>``), for the arguments its
    fast variant does not cover (``cpu.fast_blocks``: rare; a scalar call costs less compile
    time than a second inlined copy of the full reduction)."""
    return f"np.{key.split(':')[1]}"


def big_call(key: str) -> str:
    """The call name of the check ``fast_call(key)`` needs (True: rerun the block)."""
    return f"vm_{key.split(':')[2]}_trig_big"


def fast_import_line(key: str) -> str:
    """The kernel module's import of ``key``'s fast variant and its check."""
    _, name, dtype = key.split(":")
    module = _index()[(name, dtype)][0]
    return (f"from {module} import {name}_fast_{_SUFFIX[dtype]} as {fast_call(key)}, "
            f"{BIG_CHECK} as {big_call(key)}  # vecmath {source_hash()}")


_HASH: list[str] = []


def source_hash() -> str:
    """A short hash of the package's ``.py`` files (computed once)."""
    if not _HASH:
        import hashlib
        import pathlib

        digest = hashlib.sha256()
        for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
            digest.update(path.name.encode() + path.read_bytes())
        _HASH.append(digest.hexdigest()[:12])
    return _HASH[0]


__all__ = ["VECTOR_MATH", "NATIVE_FLOAT32", "VecFunction", "functions", "PREFIX", "helper_key",
           "call_name", "import_line", "source_hash", "FAST_BLOCK", "fast_call", "libm_call",
           "big_call", "fast_import_line"]


def feeds_reduction(node, depth: int = 8) -> bool:
    """Whether ``node``'s value reaches a reduction through pointwise ops (the same fused
    kernel, likely) whose loop carries a float accumulation LLVM does not vectorize (no
    reassociation without fastmath), where scalar vecmath is slower than libm. Reductions that
    merge partial results, and argmax/argmin, accumulate in vector lanes (``cpu.py``): not those."""
    from ....ops import REGISTRY

    frontier, seen = [node], set()
    for _ in range(depth):
        nxt = []
        for value in frontier:
            for user in value.users:
                op = REGISTRY.ops.get(user.target) if user.op == "call" else None
                if op is None or user in seen:
                    continue
                seen.add(user)
                if op.reduction is not None and op.reduction.merge is None \
                        and not op.reduction.arg:
                    return True
                if op.kind == "pointwise":
                    nxt.append(user)
        frontier = nxt
    return False


__all__ += ["feeds_reduction"]
