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

``VECTOR_MATH`` maps ``(ufunc name, dtype name)`` to ``(module, function)``; ``scalar.py``
spells those ufuncs as calls to the function, imported into the kernel module, when
``config.vector_math`` is on. Accuracy (max ulp against a correctly rounded reference) is
measured by ``benchmarks/vecmath_accuracy.py`` and published in ``docs/performance.md``.

This package's ``__init__`` imports no numba: the table is read when kernels are planned.
"""

from __future__ import annotations

_FAMILIES = {
    "expfamily": ("exp", "exp2", "expm1"),
    "logfamily": ("log", "log2", "log10", "log1p"),
    "trig": ("sin", "cos", "tan"),
    "hyperbolic": ("tanh", "sinh", "cosh"),
    "inverse": ("arctan", "arctan2", "cbrt"),
    "power": ("power",),
}
_SUFFIX = {"float64": "f64", "float32": "f32"}
# float32 functions with their own float32 polynomials in ``float32.py`` (the families' other
# float32 functions: exp and log in float32 arithmetic, the rest through float64)
NATIVE_FLOAT32 = ("expm1", "log1p", "tanh", "sin", "cos")

VECTOR_MATH: dict[tuple[str, str], tuple[str, str]] = {
    (name, dtype): (f"astcompiler.lower.numba.vecmath."
                    f"{'float32' if dtype == 'float32' and name in NATIVE_FLOAT32 else module}",
                    f"{name}_{suffix}")
    for module, names in _FAMILIES.items() for name in names
    for dtype, suffix in _SUFFIX.items()
}

PREFIX = "vecmath"  # helper keys ``vecmath:<ufunc>:<dtype>`` (scalar.py)
# implemented and tested, but kernels keep libm: float32 power (float64 arithmetic, about 7 ns
# an element) is slower than libm's powf (about 4.6 ns), measured side by side
KERNELS_KEEP_LIBM = {("power", "float32")}


def helper_key(name: str, dtype: str) -> str | None:
    """The kernel helper key for ufunc ``name`` on ``dtype``, None when not covered."""
    covered = (name, dtype) in VECTOR_MATH and (name, dtype) not in KERNELS_KEEP_LIBM
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
    module, function = VECTOR_MATH[(name, dtype)]
    return f"from {module} import {function} as {call_name(key)}  # vecmath {source_hash()}"


# functions with a cheaper variant for small arguments (``trig.py``: Cody-Waite below 2**15):
# pointwise kernels run blocks of 64 elements with it and rerun a block with the full function
# when ``BIG_CHECK`` says an argument was past it; both give the same bits where both apply
FAST_VARIANTS = {("sin", "float64"): "sin_fast_f64", ("cos", "float64"): "cos_fast_f64"}
BIG_CHECK = "trig_big_f64"
FAST_BLOCK = 64  # elements per block


def fast_call(key: str) -> str | None:
    """The call name of helper ``key``'s small-argument variant, None when it has none (and for
    helpers that are not vecmath functions: their keys have another form)."""
    parts = key.split(":")
    if len(parts) != 3 or parts[0] != PREFIX:
        return None
    _, name, dtype = parts
    return f"vm_{name}_fast_{dtype}" if (name, dtype) in FAST_VARIANTS else None


def big_call(key: str) -> str:
    """The call name of the check ``fast_call(key)`` needs (True: rerun the block)."""
    return f"vm_{key.split(':')[2]}_trig_big"


def fast_import_line(key: str) -> str:
    """The kernel module's import of ``key``'s fast variant and its check."""
    _, name, dtype = key.split(":")
    module = VECTOR_MATH[(name, dtype)][0]
    return (f"from {module} import {FAST_VARIANTS[(name, dtype)]} as {fast_call(key)}, "
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


__all__ = ["VECTOR_MATH", "NATIVE_FLOAT32", "KERNELS_KEEP_LIBM", "PREFIX", "helper_key",
           "call_name", "import_line", "source_hash", "FAST_VARIANTS", "FAST_BLOCK", "fast_call",
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
