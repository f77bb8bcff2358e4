"""Speed of the vectorized math functions (``lower/numba/vecmath``), in this process.

* per function, 1e6 float64 and float32 elements: a numba loop over the vectorized function,
  the same loop over NumPy's spelling in numba (a libm call per element), and the NumPy ufunc;
* the workloads ``transcendental`` (exp/sin/sqrt chain, 1e7 float64) and ``softmax``
  (4096x1024 float32) from ``workloads.py``: NumPy, and astcompiler with
  ``config.vector_math`` off (libm) and on.

``OMP_WAIT_POLICY=PASSIVE`` is set before NumPy is imported (FACTS.md); times are the median
of ``--repeats`` samples. ``python benchmarks/vecmath_speed.py [--only exp,sin] [--skip-workloads]``
"""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def timed(fn, repeats: int) -> float:
    """Median seconds of one call (after one warm-up call)."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def loops(name: str, dtype: str):
    """(vectorized loop, libm loop) for ufunc ``name``."""
    import numba

    from astcompiler.lower.numba.vecmath import VECTOR_MATH

    module, function = VECTOR_MATH[(name, dtype)]
    vec = getattr(importlib.import_module(module), function)
    ufunc = getattr(np, name)

    if ufunc.nin == 2:  # arctan2(x, 0.75 * x[::-1]): both operands read from x
        @numba.njit(error_model="numpy")
        def fast(x, out):
            n = x.shape[0]
            for i in range(n):
                out[i] = vec(x[i], x.dtype.type(0.75) * x[n - 1 - i])

        @numba.njit(error_model="numpy")
        def libm(x, out):
            n = x.shape[0]
            for i in range(n):
                out[i] = ufunc(x[i], x.dtype.type(0.75) * x[n - 1 - i])
        return fast, libm

    @numba.njit(error_model="numpy")
    def fast(x, out):
        for i in range(x.shape[0]):
            out[i] = vec(x[i])

    @numba.njit(error_model="numpy")
    def libm(x, out):
        for i in range(x.shape[0]):
            out[i] = ufunc(x[i])
    return fast, libm


RANGES = {"log": (0.01, 100.0), "log2": (0.01, 100.0), "log10": (0.01, 100.0),
          "log1p": (-0.5, 100.0), "tanh": (-5.0, 5.0), "sinh": (-20.0, 20.0),
          "cosh": (-20.0, 20.0), "exp": (-50.0, 50.0), "exp2": (-70.0, 70.0),
          "expm1": (-5.0, 5.0)}


def functions(names: list[str], n: int, repeats: int) -> list[tuple]:
    rows = []
    rng = np.random.default_rng(0)
    for name in names:
        for dtype in ("float64", "float32"):
            lo, hi = RANGES.get(name, (-100.0, 100.0))
            x = rng.uniform(lo, hi, n).astype(dtype)
            out = np.empty_like(x)
            fast, libm = loops(name, dtype)
            ufunc = getattr(np, name)
            if ufunc.nin == 2:
                t_np = timed(lambda: ufunc(x, x.dtype.type(0.75) * x[::-1], out=out), repeats)
            else:
                t_np = timed(lambda: ufunc(x, out=out), repeats)
            t_libm = timed(lambda: libm(x, out), repeats)
            t_vec = timed(lambda: fast(x, out), repeats)
            rows.append((name, dtype, t_np, t_libm, t_vec))
            print(f"{name:6} {dtype}: NumPy {t_np * 1e3:7.2f} ms  numba+libm {t_libm * 1e3:7.2f} ms"
                  f"  vecmath {t_vec * 1e3:7.2f} ms  (x{t_np / t_vec:.2f} vs NumPy)", flush=True)
    return rows


def workloads(repeats: int) -> None:
    import astcompiler as ac
    import workloads as w

    rng = np.random.default_rng(0)
    for workload in (w.transcendental, w.softmax):
        entry = next(x for x in w.WORKLOADS if x.fn is workload)
        inputs = entry.make_inputs(rng, False)
        t_np = timed(lambda: workload(*inputs), repeats)
        times = {}
        for on in (False, True):
            with ac.config.patch(vector_math=on):
                compiled = ac.compile(workload, backend="numba")
                result = compiled(*inputs)
            np.testing.assert_allclose(result, workload(*inputs), rtol=1e-5 if
                                       result.dtype == np.float32 else 1e-12)
            times[on] = timed(lambda: compiled(*inputs), repeats)
        shape = "x".join(str(s) for s in inputs[0].shape)
        print(f"{entry.name} ({shape} {inputs[0].dtype}): NumPy {t_np * 1e3:.2f} ms, astcompiler "
              f"libm {times[False] * 1e3:.2f} ms (x{t_np / times[False]:.2f}), vecmath "
              f"{times[True] * 1e3:.2f} ms (x{t_np / times[True]:.2f})", flush=True)


def main() -> None:
    from astcompiler.lower.numba.vecmath import VECTOR_MATH

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--skip-workloads", action="store_true")
    parser.add_argument("--skip-functions", action="store_true")
    args = parser.parse_args()
    names = sorted({n for n, _ in VECTOR_MATH})
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    print(f"load average {os.getloadavg()}")
    if not args.skip_workloads:
        workloads(args.repeats)
    if not args.skip_functions:
        functions(names, args.n, args.repeats)


if __name__ == "__main__":
    main()
