#!/usr/bin/env python3
"""Dispatch costs: a compiled call on 8 float64 elements against a bare ``numba.njit`` call of the
same function (issue 11 target: at most 0.3 us more), guard evaluation with 1, 4 and 8 cache
entries, a dynamic-shape entry against a static one, a compiled module call against its graph
alone (target: at most 3 us more), and the first call's time split by compile phase.

    python benchmarks/dispatch.py [--backend numba]

Reports microseconds per call (median of several runs). The function is tiny, so the time is the
dispatch: trying guards (the hit is always the *last* entry: the worst case) and running the entry.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import timeit

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import astcompiler as ac  # noqa: E402


def tiny(x, y):
    return x * y + 1.0


def tiny_unpasted(x, y):  # ``tiny`` again: a dispatch built without the wrapper pasted
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


def interleaved_us(cases: dict, number: int, rounds: int = 15) -> dict[str, float]:
    """Microseconds per call of each case, the min over ``rounds`` of the median of 5 CPU-time
    runs, the cases timed in turn (a shared machine's load then weighs on all of them alike)."""
    best = {name: float("inf") for name in cases}
    for _ in range(rounds):
        for name, call in cases.items():
            runs = timeit.Timer(call, timer=time.process_time).repeat(number=number, repeat=5)
            best[name] = min(best[name], statistics.median(runs) / number * 1e6)
    return best


def against_njit() -> None:
    """``tiny`` on 8 float64 elements: bare njit, the compiled function, plain NumPy."""
    import numba
    from astcompiler.run import dispatch
    x, y = np.ones(8), np.ones(8)
    bare = numba.njit(tiny)
    compiled = ac.compile(tiny, backend="numba")
    unpasted = ac.compile(tiny_unpasted, backend="numba")
    paste, dispatch.PASTE_FORWARD = dispatch.PASTE_FORWARD, False  # its dispatch: forward called
    try:
        unpasted(x, y)
    finally:
        dispatch.PASTE_FORWARD = paste
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from handwritten import tiny as hand  # the loop written by hand, ``njit(cache=True)``
    bare(x, y), compiled(x, y), hand(x, y)
    assert "wrapper pasted" not in type(unpasted).__call__.source
    times = interleaved_us({"hand-written numba": lambda: hand(x, y),
                            "bare numba.njit": lambda: bare(x, y),
                            "astcompiler": lambda: compiled(x, y),
                            "... wrapper not pasted": lambda: unpasted(x, y),
                            "plain NumPy": lambda: tiny(x, y)}, number=20000)
    for name, us in times.items():
        print(f"{'8 elements, ' + name:<34} {us:9.2f} "
              f"{us / times['hand-written numba']:5.2f}x hand")
    print(f"astcompiler - bare njit: {times['astcompiler'] - times['bare numba.njit']:.2f} us "
          "(target: at most 0.30)")


def module_overhead(backend: str) -> None:
    """A compiled module call against its compiled graph called directly with plain arrays."""
    nn = ac.nn
    model = nn.Sequential(nn.Linear(3, 3, rng=0), nn.ReLU(), nn.Linear(3, 3, rng=1))
    compiled = ac.compile(model, backend=backend)
    x = np.ones((1, 3))
    compiled(x), compiled(x)
    entry = compiled._compiled_call.entries[-1]
    graph = entry.run.__globals__.get("___compiled") or dict(
        zip(entry.run.__code__.co_freevars,
            (c.cell_contents for c in entry.run.__closure__ or ())))["___compiled"]
    params = [np.ndarray.view(p, np.ndarray) for p in model.parameters()]
    times = interleaved_us({"module call": lambda: compiled(x),
                            "its graph alone": lambda: graph(x, *params),
                            "plain module": lambda: model(x)}, number=3000)
    for name, us in times.items():
        print(f"{'module, ' + name:<34} {us:9.2f}")
    print(f"module call - graph: {times['module call'] - times['its graph alone']:.2f} us "
          "(target: at most 3)")


def first_call_phases() -> None:
    """A new function's first call, by phase (``entry.phases``; numba's JIT included)."""
    def fresh(x, y):
        return np.sqrt(x * y + 2.0) - y

    compiled = ac.compile(fresh, backend="numba")
    compiled(np.ones(8), np.ones(8))
    entry = compiled.entries[0]
    print(f"first call {entry.first_call_time * 1e3:.1f} ms, compile_time "
          f"{entry.compile_time * 1e3:.1f} ms: " + ", ".join(
              f"{name} {seconds * 1e3:.1f}" for name, seconds in entry.phases.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="numba")
    args = parser.parse_args()
    x = (np.ones(3), np.ones(3))
    print(f"dispatch cost per call, backend={args.backend} (microseconds; lower is better)")
    first_call_phases()
    print(f"{'case':<34} {'us/call':>9}")
    against_njit()
    module_overhead(args.backend)
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
