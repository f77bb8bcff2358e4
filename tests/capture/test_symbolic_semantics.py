"""Dynamic ints and sizes behave as Python ints: issue 9, group 1.

Each case runs the plain function and the compiled one over calls whose ints and sizes change
(the second call makes them dynamic), and compares value, type, dtype and exception.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np
import pytest
import sympy

import astcompiler as ac
from astcompiler.capture.sizes.shape_env import ShapeEnv
from tests.helpers import BACKENDS

FAST = ["eager", "aot_eager"]


def outcome(fn: Callable, args: tuple) -> tuple[Any, Any]:
    try:
        return fn(*args), None
    except Exception as error:  # noqa: BLE001 - the exception is part of the behaviour
        return None, (type(error), str(error))


def assert_same_value(value: Any, want: Any) -> None:
    assert type(value) is type(want), f"{type(value)} != {type(want)}"
    if isinstance(want, (tuple, list)):
        assert len(value) == len(want)
        for v, w in zip(value, want):
            assert_same_value(v, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert value.dtype == want.dtype and np.shape(value) == np.shape(want)
        np.testing.assert_array_equal(value, want)
    else:
        assert value == want or (value != value and want != want)


def assert_same_outcome(actual: tuple, expected: tuple) -> None:
    (value, error), (want, want_error) = actual, expected
    assert error == want_error
    assert_same_value(value, want)


def run_calls(fn: Callable, calls: list[tuple], backend: str, **options: Any) -> Any:
    compiled = ac.compile(fn, backend=backend, **options)
    for args in calls:
        assert_same_outcome(outcome(compiled, args), outcome(fn, args))
    return compiled


# ----- isinstance, type, str, format, hash -------------------------------------------------------
def double_if_int(x):
    return x * 2 if isinstance(x, int) else x + 1


def type_is_int(x):
    return (x * 2 if type(x) is int else x + 1), isinstance(x, numbers.Integral), \
        isinstance(x, (float, str))


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_of_a_dynamic_int_is_int(backend):
    compiled = run_calls(double_if_int, [(2,), (3,), (4,), (0,), (1,), (-1,)], backend)
    assert len(compiled.entries) == 2  # static for 2, then one entry for every int


@pytest.mark.parametrize("backend", FAST)
def test_type_of_a_dynamic_int_and_size_is_int(backend):
    run_calls(type_is_int, [(2,), (3,), (5,)], backend)
    run_calls(lambda x: (type(x.shape[0]) is int, isinstance(x.shape[0], int)),
              [(np.ones(2),), (np.ones(3),), (np.ones(4),)], backend)


def describe_size(x):
    n = x.shape[0]
    return "n=" + str(n), f"{n}|{n:>4}|{n!r}", format(n, "03d"), "%d-%s" % (n, n), repr(n), hash(n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strings_of_a_dynamic_size_are_its_value(backend):
    compiled = run_calls(describe_size, [(np.ones(s),) for s in (2, 3, 4, 3)], backend)
    assert len(compiled.entries) == 3  # formatting needs the value: one guarded entry per size


def describe_int(n):
    return f"n={n}", str(n), n.bit_length(), {n: "v"}.get(3, "other")


@pytest.mark.parametrize("backend", FAST)
def test_strings_of_a_dynamic_int_are_its_value(backend):
    run_calls(describe_int, [(2,), (3,), (-7,), (0,)], backend)


def decisions(x, n):
    return (n > 2) + 1, (n > 2) & (n < 10), str(n > 2), -(n == 3), isinstance(n > 2, bool)


@pytest.mark.parametrize("backend", FAST)
def test_decisions_on_a_dynamic_int_are_bools(backend):
    run_calls(decisions, [(np.ones(2), n) for n in (3, 4, 5, 1, 12)], backend)


# ----- int symbols: any sign, every decision guarded ---------------------------------------------
def tail(x, shift):
    return x[-shift:]


def head_and_skip(x, n):
    return x[:n], x[n:], x[n]


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_zero_and_one_ints_slice_as_python(backend):
    calls = [(np.arange(5.0), s) for s in (2, 3, -2, 0, 1, -1, 4)]
    run_calls(tail, calls, backend)
    calls = [(np.arange(float(k)), n) for k, n in ((6, 2), (7, 3), (8, -2), (6, 0), (9, 1), (5, -5))]
    run_calls(head_and_skip, calls, backend)


def add_int(x, n):
    return x + n, n + 1, -n, abs(n)


@pytest.mark.parametrize("backend", FAST)
def test_a_dynamic_int_keeps_one_entry_across_signs(backend):
    compiled = run_calls(add_int, [(np.ones(3), n) for n in (2, 3, 0, 1, -5, 10**20)], backend)
    assert len(compiled.entries) == 2


def loop_to(x, n):
    total = 0.0
    for i in range(n):
        total += x[i % x.shape[0]]
    return total


def loop_to_same_type(x, n):
    total = x[0] * 0.0
    for i in range(n):
        total += x[i % x.shape[0]]
    return total


@pytest.mark.parametrize("backend", FAST)
def test_range_over_a_dynamic_int_of_any_sign(backend):
    calls = [(np.arange(4.0), n) for n in (5, 6, 0, -3, 1, 70)]
    compiled = run_calls(loop_to, calls, backend)
    # `total` is a float before the loop and np.float64 after a first iteration: whether the
    # loop runs is a guard (n > 0, then n <= 0), never a merged type
    assert len(compiled.entries) == 3
    compiled = run_calls(loop_to_same_type, calls, backend)
    # `i` is bound only when the loop runs, but nothing reads it after the loop (nor on entry
    # to an iteration): not carried, no guard on whether the loop runs
    assert len(compiled.entries) == 2
    sizes = [(np.arange(float(k)), 0) for k in (4, 5, 7, 9)]
    compiled = run_calls(lambda x, n: loop_to_same_type(x, x.shape[0] + n), sizes, backend)
    assert len(compiled.entries) == 2  # a size is >= 2: the loop runs, no guard needed


def test_int_symbols_carry_no_sign_assumption():
    env = ShapeEnv()
    size = env.create_symbol(5, "L['x'].size()[0]", "x.shape[0]")
    number = env.create_symbol(-3, "L['n']", "n", min=None)
    assert size.is_positive and number.is_positive is None and number.is_integer
    assert sympy.Abs(number) != number and env.range_guards()[0][0].symbol == size
    assert env.evaluate(sympy.Lt(number, 0)) is True
    assert env.guards == [sympy.Lt(number, 0)]


# ----- NumPy functions on sizes and ints -----------------------------------------------------------
def scaled_scores(q):
    d = q.shape[-1]
    return q / np.sqrt(d), np.sqrt(d), np.prod(q.shape), np.float32(d), np.log(d), np.int64(d) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_functions_on_sizes_return_numpy_scalars(backend):
    compiled = run_calls(scaled_scores, [(np.ones((2, k), np.float32),) for k in (2, 3, 5)], backend)
    assert len(compiled.entries) == 2


def numpy_on_int(x, n):
    return np.sqrt(n), x * np.float32(n), np.maximum(n, 3), np.float32(2) * n


@pytest.mark.parametrize("backend", FAST)
def test_numpy_functions_on_dynamic_ints(backend):
    run_calls(numpy_on_int, [(np.ones(3, np.float32), n) for n in (2, 3, 7, -4)], backend)


# ----- exact integer arithmetic --------------------------------------------------------------------
def cube_times(x, n):
    return x * (n * n * n)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_python_int_arithmetic_does_not_wrap(backend, dtype):
    x = np.arange(3, dtype=dtype)
    run_calls(cube_times, [(x, 10), (x, 11), (x, 10**7), (x, 12)], backend)


def int_results(n, m):
    return n * n * n, n // m, n % m, -n // m, n / m, n ** 2, 2 ** -m if m > 0 else 0


@pytest.mark.parametrize("backend", FAST)
def test_python_int_results_are_exact(backend):
    run_calls(int_results, [(10**7, 3), (10**8, 4), (-7, 2), (7, -2), (5, 0), (2**70, 7)], backend)


def size_division(x, n):
    return x.shape[0] // (n - 3), x.shape[0] % (n - 3)


@pytest.mark.parametrize("backend", FAST)
def test_division_by_a_zero_int_raises(backend):
    run_calls(size_division, [(np.ones(4), 5), (np.ones(5), 6), (np.ones(6), 3), (np.ones(6), 1)],
              backend)


# ----- size expressions stay cheap -------------------------------------------------------------------
def collatz_like(x, s):
    for _ in range(10):
        s = (s * 3 + 1) % 1000
    return x + s, s // 7


def test_long_size_expressions_are_specialized_not_simplified(monkeypatch):
    calls = []
    real = sympy.simplify
    monkeypatch.setattr(sympy, "simplify", lambda *a, **k: calls.append(a) or real(*a, **k))
    compiled = run_calls(collatz_like, [(np.ones(3), s) for s in (5, 6, 7)], "eager")
    assert calls == []
    guards = compiled.entries[-1].guards
    assert "% 1000" in guards and " / " not in guards


def halves(x, n):
    return x[: n // 3], n // 3


@pytest.mark.parametrize("backend", FAST)
def test_floor_division_guards_are_integer_code(backend):
    compiled = run_calls(halves, [(np.arange(20.0), n) for n in (4, 7, 13, -3)], backend)
    assert any("// 3" in entry.guards for entry in compiled.entries)
    assert not any("/ 3" in entry.guards.replace("// 3", "") for entry in compiled.entries)


def true_division(x, n):
    return x.shape[0] / n, n / 2, n * 1.5, n < 2.5, n == 3.0


@pytest.mark.parametrize("backend", FAST)
def test_true_division_and_floats_do_not_specialize(backend):
    compiled = run_calls(true_division, [(np.ones(4), n) for n in (3, 4, 5, 7)], backend)
    assert len(compiled.entries) <= 3  # n < 2.5 and n == 3.0 are guards, not a value pin


def test_guard_relations_print_as_integer_code():
    from astcompiler.guards.sympy_print import to_python
    n = sympy.Symbol("s0", integer=True)
    names = {n: "n"}
    assert to_python(sympy.Lt(n / 2, 3), names) == "(-6 + n) < 0"  # no float division
    assert to_python(sympy.Gt(sympy.floor(n / 3), 2), names) == "(n // 3) > 2"
    assert to_python(sympy.Eq(sympy.Mod(n, 7), 1), names) == "(n % 7) == 1"
    for value in range(-20, 20):
        assert eval(to_python(sympy.Lt(n / 2, 3), {n: str(value)})) == (value / 2 < 3)
