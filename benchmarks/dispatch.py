#!/usr/bin/env python3
"""Dispatch costs: guard evaluation with 1, 4 and 8 cache entries, and a call through a
dynamic-shape entry against a static one (same function, same input).

    python benchmarks/dispatch.py [--backend numba]

Reports microseconds per call (median of several runs). The function is tiny, so the time is the
dispatch: trying guards (the hit is always the *last* entry: the worst case) and running the entry.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import astcompiler as ac  # noqa: E402


def tiny(x, y):
    return x * y + 1.0


def per_call_us(fn, args, number=20000, repeats=7) -> float:
    times = timeit.repeat(lambda: fn(*args), number=number, repeat=repeats)
    return statistics.median(times) / number * 1e6


def with_entries(count: int, backend: str):
    """A compiled ``tiny`` with ``count`` static entries (float64 sizes 3, 4, ...)."""
    fn = ac.compile(tiny, backend=backend, dynamic=False)
    with ac.config.patch(recompile_limit=16):
        for n in range(3, 3 + count):
            fn(np.ones(n), np.ones(n))
    last = 3 + count - 1
    return fn, (np.ones(last), np.ones(last))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="numba")
    args = parser.parse_args()
    x = (np.ones(3), np.ones(3))
    print(f"dispatch cost per call, backend={args.backend} (microseconds; lower is better)")
    print(f"{'case':<34} {'us/call':>9}")
    print(f"{'plain NumPy (no compiler)':<34} {per_call_us(tiny, x):9.2f}")
    for count in (1, 4, 8):
        fn, inputs = with_entries(count, args.backend)
        print(f"{f'{count} entr' + ('y' if count == 1 else 'ies') + ' (hit on the last)':<34} "
              f"{per_call_us(fn, inputs):9.2f}")
    static = ac.compile(tiny, backend=args.backend, dynamic=False)
    dynamic = ac.compile(tiny, backend=args.backend, dynamic=True)
    for fn in (static, dynamic):
        fn(*x)
    s, d = per_call_us(static, x), per_call_us(dynamic, x)
    print(f"{'static entry':<34} {s:9.2f}")
    print(f"{'dynamic-shape entry':<34} {d:9.2f}")
    print(f"dynamic / static: {d / s:.2f}x (target: within 1.10x)")
    module_hook_guards(args.backend)
    return 0


def module_hook_guards(backend: str) -> None:
    """A compiled module call (two Linear layers, a hook on each) with the global hook-version
    guard (default) against one guard per hook dictionary."""
    nn = ac.nn
    for skip in (True, False):
        with ac.config.patch(skip_nnmodule_hook_guards=skip):
            model = nn.Sequential(nn.Linear(3, 3, rng=0), nn.ReLU(), nn.Linear(3, 3, rng=1))
            for layer in model.children():
                layer.register_forward_hook(lambda m, a, out: None)
            compiled = ac.compile(model, backend=backend)
            x = np.ones((1, 3))
            compiled(x)
            label = "hook-version guard" if skip else "guard per hook dict"
            print(f"{'module call, ' + label:<34} {per_call_us(compiled, (x,), number=5000):9.2f}")


if __name__ == "__main__":
    sys.exit(main())
