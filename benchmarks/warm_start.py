#!/usr/bin/env python3
"""Warm start: the first call in a new process, each measured in a fresh subprocess.

    python benchmarks/warm_start.py [--repeat 3] [--json out.json]

For three workloads (a pointwise chain, a row reduction, a loop kernel) it times, from the
interpreter's start of the script (imports included) to the first result:

- cold: an empty cache directory (source, rewrite, capture, lowering, numba's JIT);
- warm, numba cache only: the kernels are in numba's disk cache, the persistent entry cache is
  off (``ASTCOMPILER_PERSISTENT_CACHE=0``): source, rewrite and capture run again;
- warm, entry cache: the persistent entry cache is on (``run/persist.py``);
- numba ``cache=True``: the same loops hand-written as ``@njit(cache=True)`` functions, warm.

It prints a table (median seconds; the ratio of the entry cache to numba's warm start) and which
of sympy, libcst and numba each process imported. The build id is pinned
(``ASTCOMPILER_BUILD_ID``) so that edits to the tree during a run do not change the key.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COMMON = '''
import time
START = time.perf_counter()
import json, sys
import numpy as np

N = 10_000
def inputs(name):
    x = np.linspace(0.0, 1.0, N)
    y = np.linspace(1.0, 2.0, N)
    if name == "chain":
        return (x, y)
    if name == "rowsum":
        return (x.reshape(100, 100),)
    return (x, y, 200)

def report(result):
    took = time.perf_counter() - START
    mods = [m for m in ("sympy", "libcst", "numba") if m in sys.modules]
    print("RESULT" + json.dumps({"seconds": took, "modules": mods,
                                 "checksum": float(np.sum(result))}))
'''

ASTCOMPILER = COMMON + '''
import astcompiler as ac

@ac.compile
def chain(x, y):
    return np.sqrt(x * 2.0 + y) * 0.5 - x * y

@ac.compile
def rowsum(x):
    return (x * x).sum(axis=1)

@ac.compile
def relax(u, v, steps):
    for _ in range(steps):
        u = u + 0.1 * (v - u)
    return u

name = sys.argv[1]
report({"chain": chain, "rowsum": rowsum, "relax": relax}[name](*inputs(name)))
'''

NUMBA = COMMON + '''
import numba

@numba.njit(cache=True, error_model="numpy")
def chain_kernel(x, y, out):
    for i in range(x.shape[0]):
        out[i] = np.sqrt(x[i] * 2.0 + y[i]) * 0.5 - x[i] * y[i]

@numba.njit(cache=True, error_model="numpy")
def rowsum_kernel(x, out):
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j] * x[i, j]
        out[i] = acc

@numba.njit(cache=True, error_model="numpy")
def relax_kernel(u, v, steps):
    for _ in range(steps):
        u = u + 0.1 * (v - u)
    return u

def chain(x, y):
    out = np.empty_like(x)
    chain_kernel(x, y, out)
    return out

def rowsum(x):
    out = np.empty(x.shape[0])
    rowsum_kernel(x, out)
    return out

name = sys.argv[1]
report({"chain": chain, "rowsum": rowsum, "relax": relax_kernel}[name](*inputs(name)))
'''

WORKLOADS = {"chain": "pointwise chain (1e4 f64)", "rowsum": "row reduction (100x100 f64)",
             "relax": "loop kernel (200 steps, 1e4 f64)"}


def run(script: str, name: str, cache: str, persistent: bool) -> dict:
    env = dict(os.environ, ASTCOMPILER_CACHE_DIR=cache, ASTCOMPILER_BUILD_ID="warm-start-bench",
               ASTCOMPILER_PERSISTENT_CACHE="1" if persistent else "0",
               PYTHONPATH=ROOT, OMP_WAIT_POLICY="PASSIVE")
    env.pop("ASTCOMPILER_LOGS", None)
    done = subprocess.run([sys.executable, script, name], env=env, capture_output=True,
                          text=True, timeout=600, cwd=os.path.dirname(script))
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


def measure(workdir: str, name: str, repeat: int) -> dict[str, dict]:
    ac_script = os.path.join(workdir, "ac_workloads.py")
    nb_script = os.path.join(workdir, "nb_workloads.py")
    rows: dict[str, list[dict]] = {"cold": [], "numba cache only": [], "entry cache": [],
                                   "numba cache=True": []}
    for index in range(repeat):
        cold = os.path.join(workdir, f"cold-{name}-{index}")
        rows["cold"].append(run(ac_script, name, cold, True))
        shutil.rmtree(cold, ignore_errors=True)
    only_numba = os.path.join(workdir, f"numba-only-{name}")
    run(ac_script, name, only_numba, False)  # warms numba's cache, writes no entry
    entries = os.path.join(workdir, f"entries-{name}")
    run(ac_script, name, entries, True)  # writes the entry
    run(nb_script, name, entries, True)  # warms numba's cache of the hand-written kernels
    for _ in range(repeat):
        rows["numba cache only"].append(run(ac_script, name, only_numba, False))
        rows["entry cache"].append(run(ac_script, name, entries, True))
        rows["numba cache=True"].append(run(nb_script, name, entries, True))
    return {mode: {"seconds": statistics.median(r["seconds"] for r in runs),
                   "modules": runs[-1]["modules"]} for mode, runs in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="ac-warm-start-")
    try:
        with open(os.path.join(workdir, "ac_workloads.py"), "w") as handle:
            handle.write(textwrap.dedent(ASTCOMPILER))
        with open(os.path.join(workdir, "nb_workloads.py"), "w") as handle:
            handle.write(textwrap.dedent(NUMBA))
        results = {name: measure(workdir, name, options.repeat)
                   for name in options.only.split(",")}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    modes = ["cold", "numba cache only", "entry cache", "numba cache=True"]
    print("| workload | " + " | ".join(modes) + " | entry cache / numba |")
    print("|---" * (len(modes) + 2) + "|")
    for name, row in results.items():
        ratio = row["entry cache"]["seconds"] / row["numba cache=True"]["seconds"]
        cells = [f"{row[m]['seconds']:.3f} s" for m in modes]
        print(f"| {WORKLOADS[name]} | " + " | ".join(cells) + f" | {ratio:.2f}x |")
    print()
    for name, row in results.items():
        print(f"{name}: imported " + "; ".join(f"{m}: {', '.join(row[m]['modules']) or '-'}"
                                             for m in modes))
    if options.json:
        with open(options.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
