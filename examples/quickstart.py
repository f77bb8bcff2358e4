"""Quickstart: compile a few NumPy functions, read what was generated, check it, time it.

Run with ``make demo`` (or ``.venv/bin/python examples/quickstart.py``). Exits non-zero if a
compiled function disagrees with NumPy.
"""

from __future__ import annotations

import os

# Idle OpenMP/OpenBLAS threads spin after a call and slow whatever runs next; set before NumPy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import astcompiler as ac  # noqa: E402


# Plain NumPy functions; `ac.compile(fn)` (or `@ac.compile` on the def) makes compiled versions.


def pointwise(x, y, z):
    """A memory-bound chain: NumPy makes four temporaries, the compiled kernel one pass."""
    return 2.0 * x + 3.0 * y - 0.5 * z + x * y


def softmax(x):
    """A row softmax: reductions fused with the pointwise work around them."""
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def normalize(x):
    """A reduction and a static `if` on a shape: decided at compile time, and guarded."""
    if x.shape[0] > 1:
        x = x - x.mean(axis=0)
    return x / np.sqrt((x * x).sum() + 1e-6)


COMPILED = {fn.__name__: ac.compile(fn) for fn in (pointwise, softmax, normalize)}


def check(fn, *args, rtol: float = 1e-6) -> bool:
    """Compare the compiled version of ``fn`` with plain NumPy; print the outcome."""
    name = fn.__name__
    expected = fn(*args)
    try:
        np.testing.assert_allclose(COMPILED[name](*args), expected, rtol=rtol, atol=1e-12)
    except AssertionError as err:
        print(f"MISMATCH {name}: {err}", file=sys.stderr)
        return False
    print(f"ok  {name:<10} matches NumPy for shape {args[0].shape} {args[0].dtype}")
    return True


def median_ms(fn, args, repeats: int = 7) -> float:
    """Median wall time of one call in milliseconds, after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> int:
    rng = np.random.default_rng(0)
    small = [rng.standard_normal(1000) for _ in range(3)]
    rows = rng.standard_normal((256, 128)).astype(np.float32)
    table = rng.standard_normal((64, 8))

    ok = all([
        check(pointwise, *small),
        check(softmax, rows, rtol=1e-5),
        check(normalize, table),
        check(normalize, table[:1]),  # the other side of the `if`: a second cache entry
    ])

    print("\n=== everything generated for softmax: ac.show(COMPILED['softmax']) ===")
    ac.show(COMPILED["softmax"])

    n = 10_000_000
    big = [rng.standard_normal(n) for _ in range(3)]
    ok = check(pointwise, *big) and ok
    numpy_ms = median_ms(pointwise, big)
    compiled_ms = median_ms(COMPILED["pointwise"], big)
    print(f"\npointwise chain on {n:.0e} float64: NumPy {numpy_ms:.1f} ms, "
          f"astcompiler {compiled_ms:.1f} ms -> {numpy_ms / compiled_ms:.2f}x "
          f"(median of 7 calls, {os.cpu_count()} cores)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
