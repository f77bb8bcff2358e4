"""The scientific benchmark corpus (``benchmarks/scientific/``) compiled with numba against plain calls.

Every kernel at its tiny size: the compiled call (default numba backend) returns what the plain
call returns (Python type, dtype, shape, values; ``allclose`` for floats) and leaves its inputs
as the plain call leaves them. A fast subset of cheap kernels runs in ``make test``; the rest is
``slow``. ``test_corpus_kernel_lowers`` checks that a kernel runs as numba code (no op-by-op
interpretation, no split, no eager fallback); kernels that do not yet are strict xfails with the
reason astcompiler gives, so a fix shows up as an XPASS.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import astcompiler as ac
from benchmarks.scientific import BY_NAME, KERNELS, Kernel
from benchmarks.scientific.check import ac_mode, compare

ROOT = Path(__file__).resolve().parents[2]

# Cheap to compile and to run: these run in ``make test``.
FAST = {"gemm", "atax", "relu_bias", "knapsack", "discounted_returns", "reverse_cumsum"}

# Wrong (or crashing) today at the tiny size: kernel -> what goes wrong.
WRONG: dict[str, str] = {}

# Not lowered to numba code today at the tiny size: kernel -> astcompiler's reason.
NOT_LOWERED: dict[str, str] = {}


def _marks(kernel: Kernel, failing: dict[str, str]) -> list:
    marks = [] if kernel.name in FAST else [pytest.mark.slow]
    if kernel.name in failing:
        marks.append(pytest.mark.xfail(strict=True, reason=failing[kernel.name]))
    return marks


def _params(failing: dict[str, str]) -> list:
    return [pytest.param(kernel, id=kernel.name, marks=_marks(kernel, failing))
            for kernel in KERNELS]


def _inputs(kernel: Kernel) -> tuple:
    return kernel.inputs(np.random.default_rng(0), "tiny")


def _assert_same_inputs(after_compiled: tuple, after_plain: tuple) -> None:
    for got, want in zip(after_compiled, after_plain):
        if isinstance(want, np.ndarray):
            np.testing.assert_array_equal(got, want)


@dataclass
class Run:
    """One kernel compiled and called once at its tiny size, next to its plain call."""

    compiled: Any
    expected: Any
    result: Any
    plain_args: tuple
    compiled_args: tuple


@functools.lru_cache(maxsize=None)
def _run(name: str) -> Run:
    """Compiled once per test session: both tests of a kernel share the (costly) compile."""
    kernel = BY_NAME[name]
    plain_args, compiled_args = _inputs(kernel), _inputs(kernel)
    expected = kernel.fn(*plain_args)
    compiled = ac.compile(kernel.fn)
    return Run(compiled, expected, compiled(*compiled_args), plain_args, compiled_args)


@pytest.mark.parametrize("kernel", _params(WRONG))
def test_corpus_kernel_matches_plain(kernel: Kernel) -> None:
    run = _run(kernel.name)
    problem = compare(run.result, run.expected, kernel.rtol)
    assert problem is None, problem
    _assert_same_inputs(run.compiled_args, run.plain_args)
    again = run.compiled(*_inputs(kernel))  # the cached entry, on fresh inputs of the same shapes
    assert compare(again, run.expected, kernel.rtol) is None
    assert len(run.compiled.entries) == 1


@pytest.mark.parametrize("kernel", _params({**WRONG, **NOT_LOWERED}))
def test_corpus_kernel_lowers(kernel: Kernel) -> None:
    mode, reason = ac_mode(_run(kernel.name).compiled)
    assert mode == "kernels", f"{mode}: {reason}"


def test_corpus_is_large_and_names_are_unique() -> None:
    names = [kernel.name for kernel in KERNELS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)
    assert len({kernel.family for kernel in KERNELS}) >= 10


def test_compare_reports_type_dtype_and_values() -> None:
    x = np.arange(3.0)
    assert compare(x.copy(), x) is None
    assert "dtype" in compare(x.astype(np.float32), x)
    assert "type" in compare(float(x[1]), x[1])
    assert compare(float(x[1]), x[1], strict_types=False) is None
    assert "values differ" in compare(x + 1e-6, x)
    assert "item 1" in compare((x, x[:2]), (x, x))


def test_bench_runs_a_corpus_kernel() -> None:
    """``benchmarks/run.py --quick --only gemm`` prints the corpus table with gemm checked."""
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick",
                             "--only", "gemm", "--repeats", "1"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("gemm ") for line in lines), result.stdout
    assert any(line.startswith("geomean ") for line in lines), result.stdout
    assert "WRONG" not in result.stdout and "error [" not in result.stdout, result.stdout
