"""Workloads 1-7 of ``workloads.py`` at GPU sizes on the CUDA target (``benchmarks/gpu_check.sh``).

For each workload: NumPy on the host, ``ac.compile(fn)`` on numba device arrays (results stay on
the device; each timed call ends with ``cuda.synchronize()``), and CuPy's own NumPy dispatch on
CuPy arrays when CuPy is installed. Prints one table (ms, median of ``--repeat`` calls after a
warm-up call, speedup over NumPy). torch.compile on CUDA is not measured yet.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def timed(fn, args, repeat: int, sync=None) -> float:
    fn(*args)
    if sync:
        sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        if sync:
            sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="the CPU suite's small sizes")
    args = parser.parse_args()
    from numba import cuda
    import astcompiler as ac
    try:
        import cupy
    except ImportError:
        cupy = None
    rng = np.random.default_rng(0)
    print(f"{'workload':16} {'NumPy ms':>10} {'astcompiler':>12} {'x':>6} {'CuPy':>10} {'x':>6}")
    for work in workloads.WORKLOADS[:7]:
        inputs = work.make_inputs(rng, args.quick)
        base = timed(work.fn, inputs, args.repeat)
        cells = []
        try:
            compiled = ac.compile(work.fn)
            device = tuple(cuda.to_device(a) for a in inputs)
            cells.append(timed(compiled, device, args.repeat, cuda.synchronize))
        except Exception as error:  # noqa: BLE001 - one failing row must not stop the table
            print(f"  astcompiler failed on {work.name}: {type(error).__name__}: {error}")
            cells.append(None)
        if cupy is not None:
            try:
                on_gpu = tuple(cupy.asarray(a) for a in inputs)
                cells.append(timed(work.fn, on_gpu, args.repeat,
                                   cupy.cuda.Device().synchronize))
            except Exception as error:  # noqa: BLE001
                print(f"  CuPy failed on {work.name}: {type(error).__name__}: {error}")
                cells.append(None)
        else:
            cells.append(None)
        text = "".join(f" {'n/a':>10} {'':>6}" if c is None else f" {c:10.3f} {base / c:6.1f}"
                       for c in cells)
        print(f"{work.name:16} {base:10.3f}{text}")


if __name__ == "__main__":
    main()
