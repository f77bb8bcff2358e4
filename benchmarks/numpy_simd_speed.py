"""NumPy's SIMD ufunc loops against the kernels' math (``lower/numba/numpy_simd.py``).

Per (ufunc, dtype), in this process, ns an element over ``--n`` elements (min of ``--repeats``:
a loaded shared machine): NumPy's ufunc alone; astcompiler's kernel for it alone
(``numpy_simd_math`` off: vecmath or libm in a kernel); and ``fn(x) * 1.5 + 1.0`` with NumPy,
and compiled with the policy off (one fused kernel) and on (NumPy's ufunc, then a kernel for
the rest).
Run with ``NUMBA_NUM_THREADS=1`` for single-thread figures.
``python benchmarks/numpy_simd_speed.py [--only sin,tanh] [--n 1000000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import astcompiler as ac  # noqa: E402
from astcompiler.lower.numba import numpy_simd  # noqa: E402
from astcompiler.lower.numba.vecmath import VECTOR_MATH  # noqa: E402

RANGES = {"log": (0.01, 100.0), "log2": (0.01, 100.0), "log10": (0.01, 100.0),
          "log1p": (-0.5, 100.0), "tanh": (-5.0, 5.0), "sinh": (-20.0, 20.0),
          "cosh": (-20.0, 20.0), "exp": (-50.0, 50.0), "exp2": (-70.0, 70.0),
          "expm1": (-5.0, 5.0), "power": (0.1, 10.0), "sin": (-3.0, 3.0), "cos": (-3.0, 3.0),
          "tan": (-1.5, 1.5)}


def timed(fn, repeats: int) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples)  # min-of-N: a loaded shared machine


def case(name: str, dtype: str, n: int, repeats: int, lo: float, hi: float) -> tuple:
    ufunc = getattr(np, name)
    rng = np.random.default_rng(0)
    args = [rng.uniform(lo, hi, n).astype(dtype) for _ in range(ufunc.nin)]

    def alone(*a):
        return ufunc(*a)

    def fused(*a):
        return ufunc(*a) * 1.5 + 1.0

    out = {}
    with ac.config.patch(numpy_simd_math=False):
        kernel_alone = ac.compile(alone, backend="numba")
        kernel_fused = ac.compile(fused, backend="numba")
        kernel_alone(*args), kernel_fused(*args)
    with ac.config.patch(numpy_simd_math=True):
        policy_fused = ac.compile(fused, backend="numba")
        policy_fused(*args)
    out["np"] = timed(lambda: alone(*args), repeats)
    out["ours"] = timed(lambda: kernel_alone(*args), repeats)
    out["np_fused"] = timed(lambda: fused(*args), repeats)
    out["off"] = timed(lambda: kernel_fused(*args), repeats)
    out["on"] = timed(lambda: policy_fused(*args), repeats)
    return tuple(out[k] * 1e9 / n for k in ("np", "ours", "np_fused", "off", "on"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    names = sorted({name for name, _ in VECTOR_MATH})
    if args.only:
        names = [x for x in names if x in args.only.split(",")]
    threads = os.environ.get("NUMBA_NUM_THREADS")
    print(f"load average {os.getloadavg()}, NUMBA_NUM_THREADS={threads}")
    print("| function | dtype | range | NumPy | kernel alone | NumPy fn(x)*1.5+1 "
          "| fused, policy off | policy on | policy picks |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for dtype in ("float32", "float64"):
            ranges = [RANGES.get(name, (-100.0, 100.0))]
            if name in ("sin", "cos"):
                ranges.append((-100.0, 100.0))
            for lo, hi in ranges:
                t = case(name, dtype, args.n, args.repeats, lo, hi)
                numpy_step = numpy_simd.numpy_faster(getattr(np, name), dtype)
                cells = " | ".join(f"{v:.2f}" for v in t)
                print(f"| {name} | {dtype} | [{lo:g}, {hi:g}] | {cells} | "
                      f"{'NumPy' if numpy_step else 'kernel'} |", flush=True)


if __name__ == "__main__":
    main()
