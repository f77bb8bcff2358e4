#!/usr/bin/env python3
"""Benchmarks: NumPy, numexpr, hand-written numba, jax.jit, torch.compile and astcompiler.

    python benchmarks/run.py                 # full sizes, peers when installed (make bench)
    python benchmarks/run.py --quick         # small sizes, no peers: a smoke test
    python benchmarks/run.py --only softmax,layernorm --json out.json --chart out.png
    python benchmarks/run.py --only scientific   # the scientific corpus (benchmarks/scientific/)
    python benchmarks/run.py --only scientific.stencil,fft_radix2 --markdown status.md

Prints the workloads table (per workload NumPy's time and every implementation's speedup over
NumPy: NumPy time / its time, above 1 is faster; the dispatch row in microseconds; the fastest
peer and astcompiler's time relative to it), the first-call (cold compile) times of astcompiler,
jax.jit and torch.compile, then the scientific corpus (per kernel NumPy's time, plain
``numba.njit`` of the same source and astcompiler as ratios to NumPy, how astcompiler ran it, and
the geometric means). Every implementation's result is checked against NumPy before it is timed;
a wrong one is reported, never timed. Benchmarks report; they never fail on speed (exit status 0
unless the arguments are wrong).

How timings are taken: NumPy, numexpr, numba and astcompiler in this process, with
OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT=4 set before NumPy is imported (idle
OpenMP/OpenBLAS threads would otherwise spin and slow whatever runs next), interleaved round by
round (the starting one rotates); each sample times enough back-to-back calls to last at least
--min-time, and the median over --repeats rounds is reported. Each peer (jax.jit, torch.compile)
runs in its own process (benchmarks/peers/worker.py, the side environment of
benchmarks/peers/setup.sh appended to sys.path), which times NumPy too, so each speedup is over
NumPy measured in the same process.
"""

from __future__ import annotations

import os

# Before NumPy, numba or numexpr are imported (see docs/benchmarks.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("NUMEXPR_MAX_THREADS", str(os.cpu_count() or 1))

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from benchtools import check_result, format_time, medians, short_error  # noqa: E402
from peers import launch  # noqa: E402

NUMPY, HAND, NJIT, AC, NUMEXPR = ("NumPy", "numba (hand)", "numba (njit)", "astcompiler",
                                   "numexpr")
JAX, TORCH = launch.LABELS["jax"], launch.LABELS["torch"]
COLUMNS = [NUMPY, NUMEXPR, HAND, NJIT, JAX, TORCH, AC]
PEER_COLUMNS = [NUMEXPR, HAND, NJIT, JAX, TORCH]  # the candidates for "fastest peer"
CORPUS_GROUP = "scientific"  # --only scientific: the whole corpus; scientific.<family>: one family
JSON_SCHEMA = "astcompiler-bench/1"


# -- results --------------------------------------------------------------------------------------


@dataclass
class Impl:
    """One implementation of one workload: its callable and what became of it."""

    label: str
    fn: Optional[Callable] = None
    median: Optional[float] = None  # seconds per call
    note: Optional[str] = None  # why there is no time: "n/a", or an error/mismatch reason
    compile_s: Optional[float] = None  # the first call: compile (when it compiles) + one run
    baseline: Optional[float] = None  # NumPy's seconds per call in the process that timed this
    process: str = "main"  # "main", or the peer's key ("jax", "torch") for a worker's timing

    def speedup(self) -> Optional[float]:
        """NumPy time / this time, both from the same process; None when either is missing."""
        if self.median is None or not self.baseline:
            return None
        return self.baseline / self.median


@dataclass
class Row:
    name: str
    size: str
    unit: str
    impls: dict[str, Impl] = field(default_factory=dict)
    title: str = ""


# -- timing and checking (benchtools: shared with the peer worker) -------------------------------


def measure(impls: list[Impl], args: tuple, repeats: int, min_time: float) -> None:
    """Median seconds per call of each implementation, interleaved round by round."""
    for impl, median in zip(impls, medians([(impl.fn, args) for impl in impls], repeats,
                                           min_time)):
        impl.median = median


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

    hand = workload.hand()
    impls = [Impl(NUMPY, workload.fn),
             Impl(HAND, hand) if hand is not None else Impl(HAND, note="n/a: none written"),
             Impl(NJIT, njit_of(workload.fn))]
    if ac is not None:
        try:
            build = workload.ac_compile or (lambda ac: ac.compile(workload.fn))
            impls.append(Impl(AC, build(ac)))
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
    row = Row(workload.name, describe_inputs(inputs), workload.unit, title=workload.title)
    impls = implementations(workload, ac, ac_problem, numexpr)
    for impl in impls:
        row.impls[impl.label] = impl
        if impl.fn is not None and impl.label != NUMPY:
            first_call(impl, inputs, expected)
    runnable = [impl for impl in impls if impl.fn is not None]
    for impl in runnable:  # one more warm-up each: page in outputs, settle caches
        impl.fn(*inputs)
    measure(runnable, inputs, args_ns.repeats, args_ns.min_time)
    for impl in impls:
        impl.baseline = row.impls[NUMPY].median
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


# -- peers (each in its own process) --------------------------------------------------------------


def requested_peers(args_ns: argparse.Namespace) -> list[str]:
    """The peer keys to run: ``--peers auto`` is all of them on full runs, none with --quick."""
    choice = args_ns.peers
    if choice == "auto":
        return [] if args_ns.quick else list(launch.LABELS)
    if choice == "none":
        return []
    return list(launch.LABELS) if choice == "all" else [choice]


def run_peers(keys: list[str], names: list[str], args_ns: argparse.Namespace,
              scratch: str) -> list[launch.PeerReport]:
    """One worker process per peer over the selected workloads (those a peer formulates)."""
    env = launch.env_dir(args_ns.peers_env)
    reports = []
    for key in keys:
        print(f"[peers] {launch.LABELS[key]} ...", file=sys.stderr, flush=True)
        reports.append(launch.run_peer(key, names, env, args_ns.quick, args_ns.repeats,
                                       args_ns.min_time, scratch, args_ns.cache_dir))
    return reports


def peer_impl(report: launch.PeerReport, name: str) -> Optional[Impl]:
    """The cell of ``report``'s peer for workload ``name``; None when it has no formulation."""
    if report.status != launch.OK:
        return Impl(report.label, note=f"{report.status}: {report.detail}", process=report.key)
    timing = report.results.get(name)
    if timing is None:
        return None
    return Impl(report.label, median=timing.peer_s, note=timing.note,
                compile_s=timing.first_call_s, baseline=timing.numpy_s, process=report.key)


def add_peers(rows: list[Row], reports: list[launch.PeerReport]) -> None:
    """Put each peer's timings into the rows (workloads without a formulation get no cell)."""
    for row in rows:
        for report in reports:
            impl = peer_impl(report, row.name)
            if impl is not None:
                row.impls[impl.label] = impl


# -- comparisons ----------------------------------------------------------------------------------


def fastest_peer(row: Row) -> Optional[Impl]:
    """The fastest timed peer of ``row``: the largest speedup over NumPy (the lowest time for a
    row in microseconds, where the time itself is the measure)."""
    timed = [row.impls[label] for label in PEER_COLUMNS
             if label in row.impls and row.impls[label].speedup() is not None]
    if not timed:
        return None
    if row.unit == "us":
        return min(timed, key=lambda impl: impl.median)
    return max(timed, key=lambda impl: impl.speedup())


def ac_vs_fastest(row: Row) -> Optional[float]:
    """astcompiler's time over the fastest peer's (1.0: as fast; 2.0: takes twice as long).

    Speedups over NumPy are compared, because the peers' times come from other processes; in
    microsecond rows the times themselves are.
    """
    best, ac_impl = fastest_peer(row), row.impls.get(AC)
    if best is None or ac_impl is None or ac_impl.speedup() is None:
        return None
    if row.unit == "us":
        return ac_impl.median / best.median
    return best.speedup() / ac_impl.speedup()


# -- printing -------------------------------------------------------------------------------------


def format_cell(impl: Optional[Impl], row: Row, notes: dict[str, list[str]]) -> str:
    """``"3.05x"`` (``"0.81 us"`` in microsecond rows, NumPy's time for NumPy); ``"-"`` when
    absent; ``"error [1]"`` with footnote 1 naming the row.

    ``notes`` maps each distinct footnote text to the rows it explains (numbered in order).
    """
    if impl is None or (impl.median is None and (impl.note or "").startswith("does not compile")):
        return "-"
    if impl.median is None:
        note = f"{impl.label}: {impl.note or 'not run'}"
        notes.setdefault(note, []).append(row.name)
        return f"{(impl.note or 'not run').split(':')[0]} [{list(notes).index(note) + 1}]"
    if impl.label == NUMPY or row.unit == "us":
        return format_time(impl.median, row.unit)
    speedup = impl.speedup()
    return f"{speedup:.2f}x" if speedup is not None else "-"


def shown_columns(rows: list[Row]) -> list[str]:
    """The columns with anything to show (a peer that was not requested has none)."""
    return [label for label in COLUMNS
            if label in (NUMPY, AC) or any(label in row.impls for row in rows)]


def workload_cells(rows: list[Row], notes: dict[str, list[str]]) -> list[list[str]]:
    """The workloads table: header, then one line per workload."""
    columns = shown_columns(rows)
    table = [["workload", "input"] + columns + ["fastest peer", "ac / fastest"]]
    for row in rows:
        cells = [row.name, row.size]
        cells += [format_cell(row.impls.get(label), row, notes) for label in columns]
        best, ratio = fastest_peer(row), ac_vs_fastest(row)
        cells += [best.label if best else "-", f"{ratio:.2f}x" if ratio is not None else "-"]
        table.append(cells)
    return table


def print_cells(table: list[list[str]], left: int) -> None:
    """A plain-text table: the first ``left`` columns left-aligned, a rule under the header."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for index, cells in enumerate(table):
        print("  ".join(c.ljust(w) if i < left else c.rjust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
        if index == 0:
            print("  ".join("-" * w for w in widths))


def print_notes(notes: dict[str, list[str]], count: int) -> None:
    """The footnotes; a note that explains every row does not list them."""
    for number, (note, where) in enumerate(notes.items(), 1):
        print(f"[{number}] {note}" + (f" ({', '.join(where)})" if len(where) < count else ""))


def print_table(rows: list[Row]) -> None:
    """The workloads table, then its footnotes."""
    notes: dict[str, list[str]] = {}
    print("speedup over NumPy measured in the same process (> 1: faster); NumPy's own time; "
          "rows in us: time per call; 'ac / fastest': astcompiler's time over the fastest peer's "
          "(target <= 1.20)")
    print_cells(workload_cells(rows, notes), 2)
    print_notes(notes, len(rows))
    drift = baseline_drift(rows)
    if drift:
        print("NumPy's time differed by more than 25% between processes (speedups are over each "
              "process' own NumPy): " + "; ".join(drift))


def baseline_drift(rows: list[Row], limit: float = 1.25) -> list[str]:
    """``"layernorm: 19.2 ms here, jax.jit 12.3 ms"`` where a peer process' NumPy time differs
    from this process' by more than ``limit``."""
    lines = []
    for row in rows:
        here = row.impls[NUMPY].median if NUMPY in row.impls else None
        others = [impl for impl in row.impls.values() if impl.process != "main" and impl.baseline]
        far = [impl for impl in others if here and max(here / impl.baseline,
                                                       impl.baseline / here) > limit]
        if far:
            lines.append(f"{row.name}: {format_time(here, row.unit)} here, " + ", ".join(
                f"{impl.label} {format_time(impl.baseline, row.unit)}" for impl in far))
    return lines


def compile_cells(rows: list[Row]) -> list[list[str]]:
    """First-call times: astcompiler's cold compile beside the peers' first calls."""
    columns = [label for label in (AC, JAX, TORCH) if any(label in row.impls for row in rows)]
    table = [["workload"] + columns]
    for row in rows:
        cells = [row.name]
        for label in columns:
            impl = row.impls.get(label)
            ok = impl is not None and impl.median is not None and impl.compile_s is not None
            cells.append(f"{impl.compile_s:.2f} s" if ok else "-")
        table.append(cells)
    return table


def print_compile_table(rows: list[Row], reports: list[launch.PeerReport]) -> None:
    """The first call of each compiler per workload, and the peers' one-time start-up."""
    print()
    print("first call (compile + one run), cold caches; astcompiler's includes rewrite, capture, "
          "guards, lowering and numba")
    print_cells(compile_cells(rows), 1)
    started = [f"{r.label} {r.startup_s:.2f} s" for r in reports if r.startup_s is not None]
    if started:
        print("one-time start-up of a peer process (its first compile, a trivial function; "
              "not included above): " + ", ".join(started))


def print_peers_line(keys: list[str], reports: list[launch.PeerReport],
                     args_ns: argparse.Namespace) -> None:
    """Which peers ran, with which versions, or why not."""
    if not keys:
        why = "--quick" if args_ns.quick and args_ns.peers == "auto" else f"--peers {args_ns.peers}"
        print(f"peers: jax.jit and torch.compile not run ({why}; add --peers all)")
        return
    parts = []
    for report in reports:
        if report.status == launch.OK:
            settings = ", ".join(f"{name} {value}" for name, value in report.settings.items())
            parts.append(f"{report.label} {report.version} (own process, numpy "
                         f"{report.numpy_version}, {settings})")
        else:
            parts.append(f"{report.label} {report.status}")
    print("peers: " + "; ".join(parts))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_numbers() -> Optional[list[float]]:
    """The 1, 5 and 15 minute load averages, None where the system has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def software(ac: Any, numexpr: Any) -> dict[str, str]:
    """The versions of this process' implementations."""
    import numba
    import numpy as np

    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "numba": numba.__version__}
    if numexpr is not None:
        versions["numexpr"] = numexpr.__version__
    if ac is not None:
        versions["astcompiler"] = getattr(ac, "__version__", "dev")
    return versions


def print_header(args_ns: argparse.Namespace, ac: Any, numexpr: Any, cache: str) -> None:
    import numba

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = [f"{name} {version}" for name, version in software(ac, numexpr).items()]
    malloc = [k for k in os.environ if k.startswith("MALLOC_")]
    print(f"astcompiler benchmarks ({'quick' if args_ns.quick else 'full'} sizes)")
    print(f"machine: {os.cpu_count()} CPUs ({usable} usable), {cpu_model()}; "
          f"load average {load_average()} (1/5/15 min) before")
    print("software: " + ", ".join(versions))
    print(f"timing: NumPy, numexpr, numba and astcompiler in this process, interleaved per round; "
          f"each peer in its own process (NumPy timed there too, before the peer is loaded); "
          f"median of {args_ns.repeats} "
          f"rounds, each sample >= {args_ns.min_time * 1e3:.0f} ms of back-to-back calls; "
          f"compile and warm-up excluded")
    print(f"env: OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} "
          f"OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']} "
          f"NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}; "
          f"{'glibc ' + ' '.join(malloc) if malloc else 'glibc malloc settings default'}")
    print(f"astcompiler cache: {cache}")
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


# -- JSON and chart -------------------------------------------------------------------------------


def impl_json(impl: Impl) -> dict[str, Any]:
    """One implementation's numbers (seconds), its speedup and why it has none."""
    return {"median_s": impl.median, "numpy_s": impl.baseline, "speedup": impl.speedup(),
            "first_call_s": impl.compile_s, "note": impl.note, "process": impl.process}


def row_json(row: Row) -> dict[str, Any]:
    best, ratio = fastest_peer(row), ac_vs_fastest(row)
    return {"name": row.name, "title": row.title or row.name, "input": row.size, "unit": row.unit,
            "fastest_peer": best.label if best else None, "ac_vs_fastest": ratio,
            "results": {label: impl_json(impl) for label, impl in row.impls.items()}}


def corpus_json(row: CorpusRow) -> dict[str, Any]:
    return {"name": row.name, "family": row.family, "input": row.size, "ac_mode": row.ac_mode,
            "ac_reason": row.ac_reason,
            "results": {label: {"median_s": impl.median, "speedup": row.ratio(label),
                                "first_call_s": impl.compile_s, "note": impl.note}
                        for label, impl in row.impls.items()}}


def peer_json(report: launch.PeerReport) -> dict[str, Any]:
    return {"label": report.label, "status": report.status, "detail": report.detail,
            "version": report.version, "numpy_version": report.numpy_version,
            "startup_s": report.startup_s, "settings": report.settings}


def results_json(rows: list[Row], corpus: list[CorpusRow], reports: list[launch.PeerReport],
                 meta: dict[str, Any]) -> dict[str, Any]:
    """Everything the run measured (schema ``JSON_SCHEMA``; times in seconds, None when absent)."""
    return {"schema": JSON_SCHEMA, **meta,
            "peers": {report.key: peer_json(report) for report in reports},
            "workloads": [row_json(row) for row in rows],
            "corpus": [corpus_json(row) for row in corpus]}


def run_meta(args_ns: argparse.Namespace, load_before: Optional[list[float]],
             versions: dict[str, str]
             ) -> dict[str, Any]:
    """When, where and how the run was taken, for the JSON file."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {"cpus": os.cpu_count(), "usable_cpus": usable, "cpu_model": cpu_model(),
                        "load_before": load_before, "load_after": load_numbers()},
            "software": versions,
            "settings": {"quick": args_ns.quick, "repeats": args_ns.repeats,
                         "min_time_s": args_ns.min_time, "peers": args_ns.peers,
                         "env": {k: os.environ[k] for k in sorted(os.environ)
                                 if k.startswith(("OMP_", "OPENBLAS_", "MALLOC_", "NUMBA_"))}}}


def draw_chart(rows: list[Row], path: str) -> Optional[str]:
    """A bar chart of speedups over NumPy per workload (log scale) and, beside it, the
    microsecond rows' times; None when written, else why not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return "--chart needs matplotlib (pip install matplotlib; it is in the bench extra)"
    slow = [row for row in rows if row.unit != "us"]
    fast = [row for row in rows if row.unit == "us"]
    labels = [label for label in shown_columns(rows) if label != NUMPY]
    figure, axes = plt.subplots(1, 2, figsize=(13, 5), width_ratios=[max(len(slow), 1), 1.5],
                                squeeze=True)
    _bars(axes[0], slow, labels, lambda impl: impl.speedup())
    axes[0].axhline(1.0, color="black", linewidth=0.8)
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    axes[0].yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[0].set_ylabel("speedup over NumPy (same process; log scale)")
    _bars(axes[1], fast, [NUMPY] + labels, lambda impl: impl.median and impl.median * 1e6)
    axes[1].set_ylabel("time per call (us; lower is better)")
    axes[0].legend(fontsize=8, ncol=2)
    axes[1].legend(fontsize=7)
    figure.suptitle(f"astcompiler benchmarks ({time.strftime('%Y-%m-%d', time.gmtime())}, "
                    f"{os.cpu_count()} CPUs, load {load_average()})", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return None


def _bars(axis: Any, rows: list[Row], labels: list[str], value: Callable[[Impl], Any]) -> None:
    """Grouped bars: one group per row, one bar per label (missing values left out)."""
    width = 0.8 / max(len(labels), 1)
    colors = {name: f"C{index}" for index, name in enumerate(COLUMNS)}  # same colour per label
    for index, label in enumerate(labels):
        xs, ys = [], []
        for position, row in enumerate(rows):
            impl = row.impls.get(label)
            y = value(impl) if impl is not None else None
            if y:
                xs.append(position + (index - (len(labels) - 1) / 2) * width)
                ys.append(y)
        axis.bar(xs, ys, width, label=label, color=colors.get(label))
    axis.set_xticks(range(len(rows)), [row.title or row.name for row in rows], rotation=20,
                    ha="right", fontsize=8)


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
                        help="astcompiler cache directory, and torch.compile's under "
                             "DIR/torchinductor (default: fresh temporary ones, so compile times "
                             "are cold)")
    parser.add_argument("--peers", default="auto", choices=["auto", "all", "none", "jax", "torch"],
                        help="which peers to run, each in its own process: auto (default) = all "
                             "on full runs, none with --quick")
    parser.add_argument("--peers-env", default=None, metavar="DIR",
                        help=f"the peers' side virtual environment (default ${launch.ENV_VAR} or "
                             f"{launch.DEFAULT_ENV}; created by benchmarks/peers/setup.sh)")
    parser.add_argument("--json", default=None, metavar="FILE",
                        help="also write every number (seconds, speedups, notes) as JSON")
    parser.add_argument("--chart", default=None, metavar="FILE.png",
                        help="also draw a bar chart of the speedups over NumPy (needs matplotlib)")
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
    load_before = load_numbers()
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
        keys = requested_peers(args) if rows else []
        scratch = tempfile.mkdtemp(prefix="peers-", dir=tmp)
        reports = run_peers(keys, [row.name for row in rows], args, scratch)
        add_peers(rows, reports)
        if rows:
            print_peers_line(keys, reports, args)
            print_table(rows)
            print_compile_table(rows, reports)
        corpus = [run_kernel(kernel, args, ac, ac_problem)
                  for kernel in scientific.KERNELS if kernel.name in names]
        if corpus:
            if rows:
                print()
            print_corpus(corpus)
            if args.markdown:
                write_markdown(corpus, args.markdown, corpus_header(args))
        print_footer()
        write_outputs(args, rows, corpus, reports,
                      run_meta(args, load_before, software(ac, numexpr)))
    return 0


def write_outputs(args_ns: argparse.Namespace, rows: list[Row], corpus: list[CorpusRow],
                  reports: list[launch.PeerReport], meta: dict[str, Any]) -> None:
    """``--json`` and ``--chart``, when asked for."""
    if args_ns.json:
        with open(args_ns.json, "w", encoding="utf-8") as handle:
            json.dump(results_json(rows, corpus, reports, meta), handle, indent=1)
        print(f"wrote {args_ns.json}")
    if args_ns.chart:
        problem = draw_chart(rows, args_ns.chart) if rows else "no workloads to chart"
        print(f"chart not drawn: {problem}" if problem else f"wrote {args_ns.chart}")


if __name__ == "__main__":
    sys.exit(main())
