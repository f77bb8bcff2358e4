"""Workloads 1-7 of ``workloads.py`` at GPU sizes on the CUDA target, plus the GPU rows of
issue 12's later parts (``benchmarks/gpu_check.sh``).

For each workload: NumPy on the host, ``ac.compile(fn)`` on numba device arrays (results stay on
the device; each timed call ends with ``cuda.synchronize()``), CuPy's own NumPy dispatch on CuPy
arrays when CuPy is installed, and ``torch.compile`` of the NumPy function under
``torch.device("cuda")`` when torch with CUDA is importable (NumPy arrays in and out: its time
includes the copies). Each result is checked against NumPy first (a mismatch is printed, not
timed). Prints one table (ms, median of ``--repeat`` calls after a warm-up call, speedup over
NumPy, astcompiler's first call in seconds); ``--columns`` picks the peers (``gpu_check.sh``
times torch.compile in a process of its own), ``--json PATH`` also writes the rows.
``--tiny`` cuts every input to at most ``TINY`` elements per dim: under numba's simulator it
checks the script and every row's agreement with NumPy in seconds (its times mean nothing;
``gpu_check.sh``'s dry run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def matmul_f32(a, b):
    return a @ b


def column_stats(x):
    return x.sum(axis=0), x.var(axis=0), np.argmax(x, axis=0)


def relax_loop(u):
    for _ in range(20):
        u = 0.25 * (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0)) + 0.5 * u
    return u


def small_loop(u, w, steps):
    """A loop of pointwise steps on 256 elements: one device-loop launch per call."""
    for _ in range(steps):
        u = 0.5 * u + w * np.tanh(u)
    return u


def _square(rng, quick, n_big, n_small, dtype=np.float32, count=1):
    n = n_small if quick else n_big
    return tuple(rng.standard_normal((n, n)).astype(dtype) for _ in range(count))


EXTRA = [  # (name, fn, inputs): the GPU-only rows (tiled matmul, column reductions, host loops)
    ("matmul f32", matmul_f32, lambda rng, quick: _square(rng, quick, 2048, 128, count=2)),
    ("column stats", column_stats, lambda rng, quick: _square(rng, quick, 4096, 256)),
    ("relax loop", relax_loop, lambda rng, quick: _square(rng, quick, 2048, 128, np.float64)),
    ("device loop", small_loop, lambda rng, quick: (rng.standard_normal(256),
                                                    rng.standard_normal(256), 200)),
]


TINY = 8


def shrink(value: Any) -> Any:
    """``value`` cut to at most ``TINY`` elements per dim (arrays; the rest as it is)."""
    if not isinstance(value, np.ndarray):
        return value
    return np.ascontiguousarray(value[tuple(slice(0, TINY) for _ in value.shape)])


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


def to_host(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(to_host(v) for v in value)
    for name in ("copy_to_host", "get"):
        if hasattr(value, name):
            return np.asarray(getattr(value, name)())
    if hasattr(value, "cpu"):  # a torch tensor
        return value.cpu().numpy()
    return np.asarray(value)


def agrees(got: Any, want: Any) -> bool:
    got, want = to_host(got), want
    if isinstance(want, tuple):
        return len(got) == len(want) and all(agrees(g, w) for g, w in zip(got, want))
    want = np.asarray(want)
    tol = 1e-3 if want.dtype == np.float32 else 1e-8
    return np.asarray(got).shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol)


def cell(label: str, name: str, run: Callable[[], float | None]) -> float | None:
    try:
        return run()
    except Exception as error:  # noqa: BLE001 - one failing cell must not stop the table
        print(f"  {label} failed on {name}: {type(error).__name__}: {error}")
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="the CPU suite's small sizes")
    parser.add_argument("--tiny", action="store_true",
                        help=f"at most {TINY} elements per dim (a check under the simulator)")
    parser.add_argument("--columns", default="astcompiler,cupy,torch",
                        help="comma-separated columns to time (torch.compile's first compiles"
                             " take minutes: gpu_check.sh times it in a process of its own)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON to PATH")
    args = parser.parse_args()
    columns = set(args.columns.split(","))
    from numba import cuda
    import astcompiler as ac
    cupy = torch = None
    if "cupy" in columns:
        try:
            import cupy
        except ImportError:
            print("CuPy is not installed: its column is skipped")
    if "torch" in columns:
        try:
            import torch
            torch = torch if torch.cuda.is_available() else None
        except ImportError:
            torch = None
        if torch is None:
            print("torch with CUDA is not importable: the torch.compile column is skipped")
    rng = np.random.default_rng(0)
    rows = [(w.name, w.fn, w.make_inputs) for w in workloads.WORKLOADS[:7]] + EXTRA
    table = []
    first_call: dict[str, float] = {}  # astcompiler's first call (capture + NVVM), seconds
    print(f"{'workload':16} {'NumPy ms':>10} {'astcompiler':>10} {'x':>6} {'CuPy':>10} {'x':>6}"
          f" {'torch.compile':>10} {'x':>6} {'ac 1st call s':>14}")
    for name, fn, make_inputs in rows:
        inputs = make_inputs(rng, args.quick or args.tiny)
        if args.tiny:
            inputs = tuple(shrink(a) for a in inputs)
        want = fn(*inputs)
        base = timed(fn, inputs, args.repeat)

        def ours() -> float | None:
            compiled = ac.compile(fn)
            device = tuple(cuda.to_device(a) if isinstance(a, np.ndarray) else a
                           for a in inputs)
            start = time.perf_counter()
            result = compiled(*device)
            cuda.synchronize()
            first_call[name] = time.perf_counter() - start
            if not agrees(result, want):
                print(f"  astcompiler disagrees with NumPy on {name}")
                return None
            return timed(compiled, device, args.repeat, cuda.synchronize)

        def cupys() -> float | None:
            on_gpu = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs)
            if not agrees(fn(*on_gpu), want):
                print(f"  CuPy disagrees with NumPy on {name}")
                return None
            return timed(fn, on_gpu, args.repeat, cupy.cuda.Device().synchronize)

        def torchs() -> float | None:
            compiled = torch.compile(fn)
            with torch.device("cuda"):
                if not agrees(compiled(*inputs), want):
                    print(f"  torch.compile disagrees with NumPy on {name}")
                    return None
                return timed(compiled, inputs, args.repeat, torch.cuda.synchronize)

        cells = [cell("astcompiler", name, ours) if "astcompiler" in columns else None,
                 cell("CuPy", name, cupys) if cupy is not None else None,
                 cell("torch.compile", name, torchs) if torch is not None else None]
        text = "".join(f" {'n/a':>10} {'':>6}" if c is None else f" {c:10.3f} {base / c:6.1f}"
                       for c in cells)
        first = f" {first_call[name]:14.2f}" if name in first_call else ""
        print(f"{name:16} {base:10.3f}{text}{first}", flush=True)
        table.append({"workload": name, "numpy_ms": base,
                      **{label: c for label, c in zip(("astcompiler_ms", "cupy_ms",
                                                       "torch_compile_ms"), cells)},
                      "astcompiler_first_call_s": first_call.get(name)})
    if args.json:
        import json
        from gpu_smoke import device_name
        with open(args.json, "w") as out:
            json.dump({"device": device_name(), "columns": sorted(columns), "rows": table}, out,
                      indent=1)


if __name__ == "__main__":
    main()
