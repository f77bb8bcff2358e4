"""numba backend: a kernel numba cannot compile when it first runs makes its graph run eagerly.

numba types and compiles each kernel at its first call, so a typing or lowering error surfaces
when the compiled function first runs, not when it is lowered. That call must return the eager
result (inputs it had already written to are restored first), with one warning and one
``graph_breaks`` log record; later calls run eagerly without asking numba again. Errors of the
program itself (raised by the compiled code at run time) still propagate as in eager.
"""

from __future__ import annotations

import logging
import re
import warnings

import numba
import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.base import RunFallback
from astcompiler.lower.eager import interpret
from astcompiler.lower.numba import is_numba_compile_error, numba_backend
from astcompiler.lower.numba import files as numba_files

from numba_helpers import GraphBuilder, copies

BAD = '    _ac_bad = "text" + 1  # injected: numba cannot type str + int\n'


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(ac.config, "cache_dir", str(tmp_path))
    ac.reset()
    yield tmp_path
    ac.reset()


@pytest.fixture
def break_kernels(monkeypatch):
    """Make numba fail to type the kernels whose module name starts with one of ``prefixes``."""
    prefixes: list[str] = []
    load = numba_files.load_source

    def load_broken(prefix: str, source: str):
        if any(prefix.startswith(p) for p in prefixes):
            source = re.sub(r"(def (?:kernel_\w+|structured_kernel)\(.*\):\n)", r"\1" + BAD, source)
        return load(prefix, source)

    monkeypatch.setattr(numba_files, "load_source", load_broken)
    return prefixes


@pytest.fixture
def compiles(monkeypatch):
    """Counts numba's compile attempts (a dispatcher typing a new signature)."""
    count = [0]
    original = numba.core.dispatcher.Dispatcher._compile_for_args

    def counting(self, *args, **kwargs):
        count[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(numba.core.dispatcher.Dispatcher, "_compile_for_args", counting)
    return count


def _fallback_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "astcompiler.graph_breaks"
            and "could not compile" in r.getMessage()]


def running_max(x):
    best = float("-inf")
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best


def masked_max(x):
    best = x[0] * 0.0 + float("-inf")
    for i in range(x.shape[0]):
        value = np.minimum(x[i], float("inf"))
        if value > best:
            best = value
    return best


@pytest.mark.parametrize("fn", [running_max, masked_max])
@pytest.mark.parametrize("dynamic", [False, True])
def test_float_infinity_in_a_loop_runs_with_numba(cache_dir, fn, dynamic):
    compiled = ac.compile(fn, backend="numba", dynamic=dynamic)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning: it compiles
        # (an input where ``best`` is never replaced, so plain Python returns the float -inf
        # itself, is a question of types across control flow, not of this lowering)
        for x in (np.array([3.0, 1.0, 5.0, 2.0]), np.array([-2.0, -7.0, -1.0, -9.0]),
                  np.array([-1e308, -np.inf, -np.inf, 7.0])):
            got, want = compiled(x), fn(x)
            assert got == want and type(got) is type(want)
    if fn is masked_max:  # the infinities are numba constants of the structured kernel
        (entry,) = compiled.entries
        assert entry.graph is not None and "(-np.inf)" in entry.output_code
        assert "np.float64(np.inf)" in entry.output_code


def loop_sum(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * 2.0
    return total


def test_structured_kernel_typing_error_falls_back_once(cache_dir, break_kernels, compiles, caplog):
    break_kernels.append("structured")
    compiled = ac.compile(loop_sum, backend="numba", dynamic=True)
    x = np.arange(5.0)
    with caplog.at_level(logging.INFO, logger="astcompiler.graph_breaks"):
        with pytest.warns(RuntimeWarning, match="could not compile .*TypingError"):
            assert compiled(x) == loop_sum(x)
        attempts = compiles[0]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no second warning
            for n in (5, 5, 5):
                y = np.linspace(0.0, 1.0, n)
                assert compiled(y) == loop_sum(y)
    assert compiles[0] == attempts  # later calls never ask numba again
    (record,) = _fallback_records(caplog)
    assert "TypingError" in record.getMessage()
    assert len(compiled.entries) == 1


def _pure_graph():
    x = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    first = b("multiply", X, 2.0)
    second = b("add", b("sum", X, axis=1, keepdims=True), first)
    return b.output(first, second), x


def test_kernel_typing_error_in_the_wrapper_falls_back_once(cache_dir, break_kernels, compiles,
                                                           caplog):
    break_kernels.append("kernel_1")
    graph, x = _pure_graph()
    compiled = numba_backend(graph, [x])
    assert len(compiled.kernels) == 2
    with caplog.at_level(logging.INFO, logger="astcompiler.graph_breaks"):
        with pytest.warns(RuntimeWarning, match="could not compile"):
            got = compiled(x)
        attempts = compiles[0]
        for _ in range(3):
            again = compiled(x)
    want = interpret(graph, (x,))
    for value in (got, again):
        assert len(value) == len(want)
        for a, b in zip(value, want):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
    assert compiles[0] == attempts
    assert len(_fallback_records(caplog)) == 1


def test_a_prange_twin_numba_cannot_compile_gives_way_to_the_serial_kernel(
        cache_dir, monkeypatch, compiles, caplog):
    load = numba_files.load_source

    def load_broken(prefix: str, source: str):
        source = re.sub(r"(def kernel_\w+_parallel\(.*\):\n)", r"\1" + BAD, source)
        return load(prefix, source)

    monkeypatch.setattr(numba_files, "load_source", load_broken)
    graph, x = _pure_graph()
    with ac.config.patch(parallel_threshold=1):
        compiled = numba_backend(graph, [x])
    want = interpret(graph, (x,))
    with caplog.at_level(logging.INFO, logger="astcompiler.graph_breaks"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the serial kernels compile: no eager fallback
            got = compiled(x)
            attempts = compiles[0]
            again = compiled(x)
    for value in (got, again):
        for a, b in zip(value, want):
            np.testing.assert_array_equal(a, b)
    assert compiles[0] == attempts
    records = [r for r in caplog.records if "runs instead" in r.getMessage()]
    assert len(records) == len(compiled.kernels) == 2


def _mutating_graph():
    x = np.arange(12.0).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    before = b("multiply", X, 2.0)
    b("setitem", X, (0, slice(None)), 100.0)
    after = b("add", X, 1.0)  # kernel 1 runs after the write to the input
    return b.output(before, after, X), x


def test_failure_after_a_write_to_an_input_restores_it_before_running_eagerly(
        cache_dir, break_kernels):
    break_kernels.append("kernel_1")
    graph, x = _mutating_graph()
    compiled = numba_backend(graph, [x])
    assert "if ___fallback.slow" in compiled.output_code
    mine, reference = copies((x,)), copies((x,))
    with pytest.warns(RuntimeWarning, match="could not compile"):
        got = compiled(*mine)
    want = interpret(graph, reference)
    np.testing.assert_array_equal(mine[0], reference[0])  # written once, not twice
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert got[2] is mine[0]  # the input itself is returned, as in eager
    third = copies((x,))
    np.testing.assert_array_equal(compiled(*third)[1], interpret(graph, copies((x,)))[1])


def _failing(*args):
    raise numba.core.errors.TypingError("no implementation for these new argument types")


def test_a_later_compile_failure_reruns_eagerly_only_before_any_write(cache_dir, monkeypatch):
    graph, x = _mutating_graph()
    compiled = numba_backend(graph, [x])
    compiled(*copies((x,)))  # compiles and runs both kernels: no copies kept from now on
    namespace = compiled.fn.__globals__
    first, second = sorted(n for n in namespace if n.startswith("kernel_")
                           and not n.endswith("_parallel"))
    # numba fails for the kernel before the write to the input: re-running eagerly is exact
    monkeypatch.setitem(namespace, first, _failing)
    mine, reference = copies((x,)), copies((x,))
    with pytest.warns(RuntimeWarning, match="could not compile"):
        got = compiled(*mine)
    want = interpret(graph, reference)
    np.testing.assert_array_equal(mine[0], reference[0])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_a_later_compile_failure_after_a_write_is_raised_not_repeated(cache_dir, monkeypatch):
    graph, x = _mutating_graph()
    compiled = numba_backend(graph, [x])
    compiled(*copies((x,)))
    namespace = compiled.fn.__globals__
    second = max(n for n in namespace if n.startswith("kernel_") and not n.endswith("_parallel"))
    monkeypatch.setitem(namespace, second, _failing)
    mine = copies((x,))
    with pytest.raises(numba.core.errors.TypingError, match="new argument types"):
        compiled(*mine)
    assert (mine[0][0] == 100.0).all() and (mine[0][1:] == x[1:]).all()  # written once


def test_a_graph_that_writes_its_inputs_compiles_normally(cache_dir):
    graph, x = _mutating_graph()
    compiled = numba_backend(graph, [x])
    for _ in range(2):  # the first call keeps a copy of the input; the second does not
        mine, reference = copies((x,)), copies((x,))
        got, want = compiled(*mine), interpret(graph, reference)
        np.testing.assert_array_equal(mine[0], reference[0])
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_compiler_errors_and_program_errors_are_told_apart():
    @numba.njit
    def untypable(a):
        return "text" + a

    @numba.njit
    def divides(a, b):
        return a // b

    with pytest.raises(Exception) as typing:
        untypable(1)
    assert is_numba_compile_error(typing.value)
    with pytest.raises(ZeroDivisionError) as division:
        divides(1, 0)
    assert not is_numba_compile_error(division.value)


@pytest.mark.parametrize("error", [
    numba.core.errors.TypingError("typing"), numba.core.errors.LoweringError("lowering"),
    numba.core.errors.UnsupportedError("unsupported"), numba.core.errors.NumbaError("other")])
def test_every_numba_compiler_error_gives_the_eager_result_once(error):
    calls = []

    def fast(a):
        calls.append(a)
        raise error

    fallback = RunFallback(lambda a: ("eager", a), is_numba_compile_error)
    run = fallback.wrap(fast)
    with pytest.warns(RuntimeWarning, match=type(error).__name__):
        assert run(1) == ("eager", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run(2) == ("eager", 2)
    assert calls == [1] and fallback.failure is error


def test_program_errors_propagate_through_the_fallback():
    calls = []

    def fast(a):
        calls.append(a)
        raise ZeroDivisionError("division by zero")

    fallback = RunFallback(lambda a: ("eager",), is_numba_compile_error)
    run = fallback.wrap(fast)
    for _ in range(2):
        with pytest.raises(ZeroDivisionError, match="division by zero"):
            run(1)
    assert len(calls) == 2 and fallback.failure is None


def test_checked_int_overflow_in_a_loop_is_not_a_compile_error(cache_dir):
    def grow(n):
        total = 1
        for i in range(n):
            total = total * 3
        return total

    compiled = ac.compile(grow, backend="numba", dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (3, 4, 50):  # 3**50 outgrows 64 bits: Python's ints, as in eager
            assert compiled(n) == grow(n)
