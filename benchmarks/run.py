#!/usr/bin/env python3
"""Benchmarks: NumPy eager vs hand-written numba vs astcompiler (vs numexpr), side by side.

    python benchmarks/run.py                 # full sizes (make bench)
    python benchmarks/run.py --quick         # small sizes, a smoke test
    python benchmarks/run.py --only softmax,layernorm
    python benchmarks/run.py --only scientific   # the scientific corpus (benchmarks/scientific/)
    python benchmarks/run.py --only scientific.stencil,fft_radix2 --markdown status.md

Prints two tables: the workloads (per workload the median time of each implementation and its
ratio to NumPy: NumPy time / implementation time, above 1 is faster than NumPy, and astcompiler's
compile time, its first call, separately), then the scientific corpus (per kernel NumPy's time,
plain ``numba.njit`` of the same source and astcompiler as ratios to NumPy, how astcompiler ran it,
and the geometric means). Every implementation's result is checked against NumPy before it is
timed; a wrong one is reported, never timed. Benchmarks report; they never fail on speed (exit
status 0 unless the arguments are wrong).

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
NUMPY, HAND, NJIT, AC, NUMEXPR = ("NumPy", "numba (hand)", "numba (njit)", "astcompiler",
                                   "numexpr")
COLUMNS = [NUMPY, HAND, NJIT, AC, NUMEXPR]
CORPUS_GROUP = "scientific"  # --only scientific: the whole corpus; scientific.<family>: one family


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
        why = "does not compile" if impl.label == NJIT else "error"
        impl.note, impl.fn = f"{why}: {short_error(err)}", None
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


def njit_of(fn: Callable) -> Callable:
    """Plain ``numba.njit`` of the user's unchanged function, compiled at its first call."""
    compiled: list[Callable] = []

    def run(*args: Any) -> Any:
        if not compiled:
            import numba
            compiled.append(numba.njit(fn))
        return compiled[0](*args)
    return run


def implementations(workload: Any, ac: Any, ac_problem: Optional[str], numexpr: Any) -> list[Impl]:
    import inspect

    impls = [Impl(NUMPY, workload.fn), Impl(HAND, workload.handwritten),
             Impl(NJIT, njit_of(workload.fn))]
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


# -- the scientific corpus ------------------------------------------------------------------------


@dataclass
class CorpusRow:
    """One kernel of the scientific corpus: its implementations and how astcompiler ran it."""

    name: str
    family: str
    size: str
    impls: dict[str, Impl] = field(default_factory=dict)
    ac_mode: str = ""  # "kernels", "op by op", "eager", "split" (see scientific.check.ac_mode)
    ac_reason: str = ""

    def ratio(self, label: str) -> Optional[float]:
        """NumPy time / ``label``'s time, or None when either was not timed."""
        base, impl = self.impls[NUMPY], self.impls.get(label)
        if impl is None or impl.median is None or base.median is None:
            return None
        return base.median / impl.median


def describe_args(args: tuple) -> str:
    """``96x100 f64`` for the largest array argument, ``n=300`` when there is none."""
    import numpy as np

    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if not arrays:
        return "n=" + ",".join(str(a) for a in args if isinstance(a, int))
    first = max(arrays, key=lambda a: a.size)
    dims = "x".join(str(d) for d in first.shape)
    return f"{dims} {first.dtype.kind}{first.dtype.itemsize * 8}"


def njit_reason(err: BaseException) -> str:
    """The informative line of a numba typing error (its first line is only the pipeline stage)."""
    import re

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(err).splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("Failed in", "During:", "File"))]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:160]


def corpus_first_call(impl: Impl, args: tuple, expected: Any, rtol: float) -> None:
    """Call once (compiles), check against NumPy with the corpus' comparison; notes failures."""
    from scientific.check import compare

    try:
        start = time.perf_counter()
        result = impl.fn(*args)
        impl.compile_s = time.perf_counter() - start
    except Exception as err:  # a benchmark reports, it does not fail
        impl.note = (f"does not compile: {njit_reason(err)}" if impl.label == NJIT
                     else f"error: {short_error(err)}")
        impl.fn = None
        return
    problem = compare(result, expected, rtol, strict_types=impl.label == AC)
    if problem:
        impl.note, impl.fn = f"WRONG: {problem}", None


def run_kernel(kernel: Any, args_ns: argparse.Namespace, ac: Any, ac_problem: Optional[str]
               ) -> CorpusRow:
    """Check NumPy, plain njit and astcompiler on one corpus kernel, then time those that passed."""
    import numpy as np

    from scientific.check import ac_mode

    which = "quick" if args_ns.quick else "full"
    print(f"[corpus] {kernel.name} ...", file=sys.stderr, flush=True)  # progress: compiles are slow
    inputs = kernel.inputs(np.random.default_rng(0), which)
    expected = kernel.fn(*inputs)
    row = CorpusRow(kernel.name, kernel.family, describe_args(inputs))
    compiled = ac.compile(kernel.fn) if ac is not None else None
    impls = [Impl(NUMPY, kernel.fn), Impl(NJIT, njit_of(kernel.fn)),
             Impl(AC, compiled, note=None if ac is not None else f"n/a: {ac_problem}")]
    for impl in impls:
        row.impls[impl.label] = impl
        if impl.fn is not None and impl.label != NUMPY:
            corpus_first_call(impl, inputs, expected, kernel.rtol)
    if compiled is not None:
        row.ac_mode, row.ac_reason = ac_mode(compiled)
    runnable = [impl for impl in impls if impl.fn is not None]
    for impl in runnable:
        impl.fn(*inputs)
    measure(runnable, inputs, args_ns.repeats, args_ns.min_time)
    return row


def geomean(values: list[float]) -> Optional[float]:
    import math

    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def corpus_summary(rows: list[CorpusRow]) -> list[tuple[str, str, str]]:
    """``(label, njit, astcompiler)`` geometric-mean lines of the corpus table."""
    def fmt(values: list[float]) -> str:
        mean = geomean(values)
        return f"{mean:.2f}x ({len(values)}/{len(rows)})" if mean is not None else "-"

    njit = [r.ratio(NJIT) for r in rows if r.ratio(NJIT) is not None]
    acs = [r.ratio(AC) for r in rows if r.ratio(AC) is not None]
    both = [r for r in rows if r.ratio(NJIT) is not None and r.ratio(AC) is not None]
    lines = [("geomean", fmt(njit), fmt(acs)),
             ("geomean where njit compiles", fmt([r.ratio(NJIT) for r in both]),
              fmt([r.ratio(AC) for r in both]))]
    return lines


def corpus_cell(row: CorpusRow, label: str, notes: dict[str, list[str]]) -> str:
    """``"3.05x"``, ``"-"`` (njit does not compile), or ``"WRONG [n]"``/``"error [n]"``."""
    impl = row.impls.get(label)
    ratio = row.ratio(label)
    if ratio is not None:
        return f"{ratio:.2f}x"
    if impl is None or (impl.note or "").startswith("does not compile"):
        return "-"
    note = f"{label}: {impl.note or 'not run'}"
    notes.setdefault(note, []).append(row.name)
    return f"{(impl.note or 'not run').split(':')[0]} [{list(notes).index(note) + 1}]"


def corpus_cells(rows: list[CorpusRow], notes: dict[str, list[str]]) -> list[list[str]]:
    """The corpus table: header, one line per kernel, the geometric means."""
    table = [["kernel", "family", "input", "NumPy", "njit", "astcompiler", "ac runs", "ac compile"]]
    for row in rows:
        base, ac_impl = row.impls[NUMPY], row.impls.get(AC)
        compile_s = ac_impl.compile_s if ac_impl is not None and ac_impl.median is not None else None
        table.append([row.name, row.family, row.size,
                      format_time(base.median, "ms") if base.median is not None else "-",
                      corpus_cell(row, NJIT, notes), corpus_cell(row, AC, notes),
                      row.ac_mode or "-", f"{compile_s:.2f} s" if compile_s is not None else "-"])
    for label, njit, acs in corpus_summary(rows):
        table.append([label, "", "", "", njit, acs, "", ""])
    return table


def print_corpus(rows: list[CorpusRow]) -> None:
    """The corpus table, its footnotes, why njit did not compile, and astcompiler's fallbacks."""
    notes: dict[str, list[str]] = {}
    table = corpus_cells(rows, notes)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    print(f"scientific corpus: {len(rows)} kernels; ratio = NumPy time / time (> 1: faster); "
          "'(k/n)': kernels timed (correct)")
    for index, cells in enumerate(table):
        if index == len(table) - 2:
            print("  ".join("-" * w for w in widths))
        print("  ".join(c.ljust(w) if i < 3 or i == 6 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
        if index == 0:
            print("  ".join("-" * w for w in widths))
    for number, (note, where) in enumerate(notes.items(), 1):
        print(f"[{number}] {note} ({', '.join(where)})")
    no_njit = [f"{r.name} ({r.impls[NJIT].note.split(': ', 1)[-1][:90]})" for r in rows
               if (r.impls[NJIT].note or "").startswith("does not compile")]
    if no_njit:
        print("njit does not compile: " + "; ".join(no_njit))
    fallbacks = [r for r in rows if r.ac_mode not in ("kernels", "")]
    if fallbacks:
        print("astcompiler did not run as numba kernels:")
        for r in fallbacks:
            print(f"  {r.name}: {r.ac_mode}: {r.ac_reason}")


def write_markdown(rows: list[CorpusRow], path: str, header: str) -> None:
    """The corpus table as Markdown (kernel | correct? | ratios | how ac ran it and why)."""
    lines = [header, "",
             "| kernel | family | input | correct? | NumPy | njit | astcompiler | ac runs | "
             "reason (top of output_code) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        ac_impl = row.impls.get(AC)
        wrong = ac_impl is None or ac_impl.median is None
        correct = (ac_impl.note or "not run") if wrong else "yes"
        ratio = row.ratio(AC)
        njit = row.ratio(NJIT)
        njit_text = f"{njit:.2f}x" if njit else (
            "WRONG" if (row.impls[NJIT].note or "").startswith("WRONG") else "-")
        base = row.impls[NUMPY].median
        lines.append(f"| {row.name} | {row.family} | {row.size} | {correct} | "
                     f"{format_time(base, 'ms') if base else '-'} | "
                     f"{njit_text} | {f'{ratio:.2f}x' if ratio else '-'} | "
                     f"{row.ac_mode} | {row.ac_reason.replace('|', '/')} |")
    for label, njit, acs in corpus_summary(rows):
        lines.append(f"| **{label}** | | | | | {njit} | {acs} | | |")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


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
    if impl is None or (impl.median is None and (impl.note or "").startswith("does not compile")):
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


def corpus_header(args_ns: argparse.Namespace) -> str:
    """The Markdown file's first lines: when, where, which sizes, how loaded the machine was."""
    return (f"# Scientific corpus status ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n\n"
            f"`benchmarks/run.py{' --quick' if args_ns.quick else ''}`, "
            f"{'quick' if args_ns.quick else 'full'} sizes, {os.cpu_count()} CPUs, load average "
            f"{load_average()} at the end (timings on a shared machine are noisy). Ratios are "
            f"NumPy time / time (> 1: faster than NumPy).")


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
                        help="run only these workloads or corpus kernels (comma-separated or "
                             "repeated); 'scientific' is the whole corpus, 'scientific.FAMILY' one "
                             "family (linalg, stencil, weather, cnn, fft, nbody, bits, sparse, "
                             "mandelbrot, dynprog, stats), 'workloads' the workloads table")
    parser.add_argument("--markdown", metavar="PATH", default=None,
                        help="also write the corpus table as Markdown to PATH")
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


def selected(only: Optional[list[str]], names: list[str],
             groups: Optional[dict[str, list[str]]] = None) -> list[str]:
    """The names to run, in table order; exits with status 2 on an unknown name.

    ``groups`` maps a group name (``scientific``, ``scientific.stencil``) to the names it selects.
    """
    groups = groups or {}
    if not only:
        return list(names)
    wanted = {part.strip() for item in only for part in item.split(",") if part.strip()}
    for group in wanted & set(groups):
        wanted |= set(groups[group])
    unknown = sorted(wanted - set(names) - set(groups))
    if unknown:
        print(f"benchmarks/run.py: error: unknown workload {unknown[0]!r}; "
              f"choose from {', '.join(list(groups) + names)}", file=sys.stderr)
        raise SystemExit(2)
    return [name for name in names if name in wanted]


def name_groups(workload_names: list[str], kernels: list[Any]) -> dict[str, list[str]]:
    """The ``--only`` groups: all workloads, the whole corpus, each corpus family."""
    groups = {"workloads": list(workload_names), CORPUS_GROUP: [k.name for k in kernels]}
    for kernel in kernels:
        groups.setdefault(f"{CORPUS_GROUP}.{kernel.family}", []).append(kernel.name)
    return groups


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, HERE)
    with tempfile.TemporaryDirectory(prefix="astcompiler-bench-") as tmp:
        cache = args.cache_dir or tmp
        os.environ["ASTCOMPILER_CACHE_DIR"] = cache  # before astcompiler is imported
        import scientific
        import workloads

        groups = name_groups(workloads.NAMES, scientific.KERNELS)
        names = selected(args.only, workloads.NAMES + [k.name for k in scientific.KERNELS],
                         groups)
        ac, ac_problem = load_astcompiler()
        if ac is not None:
            from astcompiler.config import config

            config.cache_dir = cache
        numexpr = load_numexpr()
        print_header(args, ac, numexpr, "cold (fresh temporary directory)"
                     if args.cache_dir is None else args.cache_dir)
        rows = [run_workload(workload, args, ac, ac_problem, numexpr)
                for workload in workloads.WORKLOADS if workload.name in names]
        if rows:
            print_table(rows)
        corpus = [run_kernel(kernel, args, ac, ac_problem)
                  for kernel in scientific.KERNELS if kernel.name in names]
        if corpus:
            if rows:
                print()
            print_corpus(corpus)
            if args.markdown:
                write_markdown(corpus, args.markdown, corpus_header(args))
        print_footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
