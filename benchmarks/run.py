#!/usr/bin/env python3
"""Benchmarks: NumPy eager vs hand-written numba vs astcompiler (vs numexpr), side by side.

    python benchmarks/run.py                 # full sizes (make bench)
    python benchmarks/run.py --quick         # small sizes, a smoke test
    python benchmarks/run.py --only softmax,layernorm

Prints one table: per workload the median time of each implementation and its ratio to NumPy
(NumPy time / implementation time: above 1 is faster than NumPy), and astcompiler's compile time
(its first call) separately. Every implementation's result is checked against NumPy before it is
timed. Benchmarks report; they never fail on speed (exit status 0 unless the arguments are wrong).

How timings are taken: one process; OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT=4 are set
before NumPy is imported (idle OpenMP/OpenBLAS threads would otherwise spin and slow whatever runs
next); implementations are interleaved round by round (the starting one rotates), each sample times
enough back-to-back calls to last at least --min-time, and the median over --repeats rounds is
reported.
"""

from __future__ import annotations

import os

# Before NumPy, numba or numexpr are imported (see docs/benchmarks.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("NUMEXPR_MAX_THREADS", str(os.cpu_count() or 1))

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NUMPY, HAND, AC, NUMEXPR = "NumPy", "numba (hand)", "astcompiler", "numexpr"
COLUMNS = [NUMPY, HAND, AC, NUMEXPR]


# -- results --------------------------------------------------------------------------------------


@dataclass
class Impl:
    """One implementation of one workload: its callable and what became of it."""

    label: str
    fn: Optional[Callable] = None
    median: Optional[float] = None  # seconds per call
    note: Optional[str] = None  # why there is no time: "n/a", or an error/mismatch reason
    compile_s: Optional[float] = None


@dataclass
class Row:
    name: str
    size: str
    unit: str
    impls: dict[str, Impl] = field(default_factory=dict)


# -- timing ---------------------------------------------------------------------------------------


def time_calls(fn: Callable, args: tuple, number: int) -> float:
    """Seconds for ``number`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return time.perf_counter() - start


def calls_per_sample(fn: Callable, args: tuple, min_time: float) -> int:
    """How many calls make one sample last at least ``min_time`` (like timeit's autorange)."""
    number = 1
    while True:
        elapsed = time_calls(fn, args, number)
        if elapsed >= min_time or number >= 1_000_000:
            return number
        grow = min_time / max(elapsed, 1e-9) * 1.2
        number = max(number * 2, min(int(number * grow) + 1, number * 100))


def measure(impls: list[Impl], args: tuple, repeats: int, min_time: float) -> None:
    """Median seconds per call of each implementation, interleaved round by round."""
    numbers = [calls_per_sample(impl.fn, args, min_time) for impl in impls]
    samples: list[list[float]] = [[] for _ in impls]
    for round_index in range(repeats):
        order = list(range(len(impls)))
        shift = round_index % len(order)
        for k in order[shift:] + order[:shift]:
            samples[k].append(time_calls(impls[k].fn, args, numbers[k]) / numbers[k])
    for impl, times in zip(impls, samples):
        impl.median = statistics.median(times)


# -- checking -------------------------------------------------------------------------------------


def check_result(result: Any, expected: Any) -> Optional[str]:
    """None when ``result`` matches NumPy's (dtype, shape, values within rounding), else why not."""
    import numpy as np

    result = np.asarray(result)
    if result.shape != expected.shape:
        return f"shape {result.shape}, NumPy {expected.shape}"
    if result.dtype != expected.dtype:
        return f"dtype {result.dtype}, NumPy {expected.dtype}"
    single = expected.dtype in (np.float32, np.complex64)
    rtol = 1e-4 if single else 1e-9
    atol = rtol * float(np.max(np.abs(expected), initial=0.0))
    try:
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=atol)
    except AssertionError as err:
        lines = [ln.strip() for ln in str(err).splitlines() if "Max" in ln or "Mismatched" in ln]
        return "values differ: " + "; ".join(lines)
    return None


def short_error(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:200]


def first_call(impl: Impl, args: tuple, expected: Any) -> None:
    """Call once (compiles, warms up), time it, check the result; sets ``impl.note`` on failure."""
    try:
        start = time.perf_counter()
        result = impl.fn(*args)
        impl.compile_s = time.perf_counter() - start
    except Exception as err:  # a benchmark reports, it does not fail
        impl.note, impl.fn = f"error: {short_error(err)}", None
        return
    problem = check_result(result, expected)
    if problem:
        impl.note, impl.fn = f"mismatch: {problem}", None


# -- implementations ------------------------------------------------------------------------------


def load_astcompiler() -> tuple[Any, Optional[str]]:
    """``(astcompiler module, None)`` or ``(None, why not)``."""
    try:
        import astcompiler
    except Exception as err:
        return None, f"import astcompiler failed: {short_error(err)}"
    if not hasattr(astcompiler, "compile"):
        return None, "astcompiler.compile is not available in this build"
    return astcompiler, None


def load_numexpr() -> Any:
    try:
        import numexpr
    except ImportError:
        return None
    return numexpr


def numexpr_fn(numexpr: Any, expression: str, names: list[str]) -> Callable:
    """A callable that evaluates ``expression`` with the workload's arguments bound to ``names``."""
    def run(*args: Any) -> Any:
        return numexpr.evaluate(expression, local_dict=dict(zip(names, args)))
    return run


def implementations(workload: Any, ac: Any, ac_problem: Optional[str], numexpr: Any) -> list[Impl]:
    import inspect

    impls = [Impl(NUMPY, workload.fn), Impl(HAND, workload.handwritten)]
    if ac is not None:
        try:
            impls.append(Impl(AC, ac.compile(workload.fn)))
        except Exception as err:
            impls.append(Impl(AC, note=f"error: {short_error(err)}"))
    else:
        impls.append(Impl(AC, note=f"n/a: {ac_problem}"))
    if workload.numexpr is not None and numexpr is not None:
        names = list(inspect.signature(workload.fn).parameters)
        impls.append(Impl(NUMEXPR, numexpr_fn(numexpr, workload.numexpr, names)))
    return impls


def run_workload(workload: Any, args_ns: argparse.Namespace, ac: Any, ac_problem: Optional[str],
                 numexpr: Any) -> Row:
    """Check every implementation against NumPy, then time those that passed, side by side."""
    import numpy as np

    from workloads import describe_inputs

    inputs = workload.make_inputs(np.random.default_rng(0), args_ns.quick)
    expected = workload.fn(*inputs)
    row = Row(workload.name, describe_inputs(inputs), workload.unit)
    impls = implementations(workload, ac, ac_problem, numexpr)
    for impl in impls:
        row.impls[impl.label] = impl
        if impl.fn is not None and impl.label != NUMPY:
            first_call(impl, inputs, expected)
    runnable = [impl for impl in impls if impl.fn is not None]
    for impl in runnable:  # one more warm-up each: page in outputs, settle caches
        impl.fn(*inputs)
    measure(runnable, inputs, args_ns.repeats, args_ns.min_time)
    return row


# -- printing -------------------------------------------------------------------------------------


def format_time(seconds: float, unit: str) -> str:
    value = seconds * (1e6 if unit == "us" else 1e3)
    digits = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:.{digits}f} {unit}"


def format_cell(impl: Optional[Impl], where: str, baseline: Optional[float], unit: str,
                notes: dict[str, list[str]]) -> str:
    """``"20.1 ms  3.05x"``; ``"-"`` when absent; ``"error [1]"`` with footnote 1 naming ``where``.

    ``notes`` maps each distinct footnote text to the cells it explains (numbered in order).
    """
    if impl is None:
        return "-"
    if impl.median is None:
        note = f"{impl.label}: {impl.note or 'not run'}"
        notes.setdefault(note, []).append(where)
        return f"{(impl.note or 'not run').split(':')[0]} [{list(notes).index(note) + 1}]"
    text = format_time(impl.median, unit)
    if impl.label != NUMPY and baseline:
        text += f" {baseline / impl.median:6.2f}x"
    return text


def print_table(rows: list[Row]) -> None:
    """The one results table, then its footnotes."""
    notes: dict[str, list[str]] = {}
    header = ["workload", "input"] + COLUMNS + ["ac compile"]
    table = [header]
    for row in rows:
        numpy_impl = row.impls.get(NUMPY)
        baseline = numpy_impl.median if numpy_impl else None
        cells = [row.name, row.size]
        for label in COLUMNS:
            cells.append(format_cell(row.impls.get(label), row.name, baseline, row.unit, notes))
        ac_impl = row.impls.get(AC)
        compile_s = ac_impl.compile_s if ac_impl and ac_impl.median is not None else None
        cells.append(f"{compile_s:.2f} s" if compile_s is not None else "-")
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for index, cells in enumerate(table):
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
        if index == 0:
            print("  ".join("-" * w for w in widths))
    for number, (note, where) in enumerate(notes.items(), 1):
        print(f"[{number}] {note} ({', '.join(where)})")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def print_header(args_ns: argparse.Namespace, ac: Any, numexpr: Any, cache: str) -> None:
    import numba
    import numpy as np

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = [f"python {platform.python_version()}", f"numpy {np.__version__}",
                f"numba {numba.__version__}"]
    if numexpr is not None:
        versions.append(f"numexpr {numexpr.__version__}")
    if ac is not None:
        versions.append(f"astcompiler {getattr(ac, '__version__', 'dev')}")
    malloc = [k for k in os.environ if k.startswith("MALLOC_")]
    print(f"astcompiler benchmarks ({'quick' if args_ns.quick else 'full'} sizes)")
    print(f"machine: {os.cpu_count()} CPUs ({usable} usable), {cpu_model()}; "
          f"load average {load_average()} (1/5/15 min) before")
    print("software: " + ", ".join(versions))
    print(f"timing: one process; implementations interleaved per round; "
          f"median of {args_ns.repeats} "
          f"rounds, each sample >= {args_ns.min_time * 1e3:.0f} ms of back-to-back calls; "
          f"compile and warm-up excluded")
    print(f"env: OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} "
          f"OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']} "
          f"NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}; "
          f"{'glibc ' + ' '.join(malloc) if malloc else 'glibc malloc settings default'}")
    print(f"astcompiler cache: {cache}")
    print("ratio = NumPy time / implementation time (> 1: faster than NumPy); "
          "'ac compile' = astcompiler's first call (capture + lowering + numba)")
    print()


def print_footer() -> None:
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none used"
    print()
    print(f"load average after: {load_average()}; numba threading layer: {layer}")


# -- main -----------------------------------------------------------------------------------------


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only these workloads (comma-separated or repeated)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed rounds per workload (default 9, quick 3)")
    parser.add_argument("--min-time", type=float, default=None, metavar="SECONDS",
                        help="minimum duration of one sample (default 0.02, quick 0.005)")
    parser.add_argument("--cache-dir", default=None,
                        help="astcompiler cache directory (default: a fresh temporary one, "
                             "so compile times are cold)")
    args = parser.parse_args(argv)
    args.repeats = args.repeats or (3 if args.quick else 9)
    args.min_time = args.min_time or (0.005 if args.quick else 0.02)
    return args


def selected(only: Optional[list[str]], names: list[str]) -> list[str]:
    """The workload names to run, in table order; exits with status 2 on an unknown name."""
    if not only:
        return list(names)
    wanted = {part.strip() for item in only for part in item.split(",") if part.strip()}
    unknown = sorted(wanted - set(names))
    if unknown:
        print(f"benchmarks/run.py: error: unknown workload {unknown[0]!r}; "
              f"choose from {', '.join(names)}", file=sys.stderr)
        raise SystemExit(2)
    return [name for name in names if name in wanted]


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, HERE)
    with tempfile.TemporaryDirectory(prefix="astcompiler-bench-") as tmp:
        cache = args.cache_dir or tmp
        os.environ["ASTCOMPILER_CACHE_DIR"] = cache  # before astcompiler is imported
        import workloads

        names = selected(args.only, workloads.NAMES)
        ac, ac_problem = load_astcompiler()
        if ac is not None:
            from astcompiler.config import config

            config.cache_dir = cache
        numexpr = load_numexpr()
        print_header(args, ac, numexpr, "cold (fresh temporary directory)"
                     if args.cache_dir is None else args.cache_dir)
        rows = []
        for workload in workloads.WORKLOADS:
            if workload.name in names:
                rows.append(run_workload(workload, args, ac, ac_problem, numexpr))
        print_table(rows)
        print_footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
