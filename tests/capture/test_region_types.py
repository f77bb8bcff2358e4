"""Types across control flow and Python scalars in compiled loops: issue 9, group 4.

Branches on array data never merge two types into one, a loop never changes a variable's type
when it may run zero times, and Python numbers inside compiled loops follow Python (exceptions
included) on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.capture.test_symbolic_semantics import run_calls
from tests.helpers import BACKENDS

FAST = ["eager", "aot_eager"]


def regions(compiled) -> str:
    return "\\n".join(entry.graph_code or "" for entry in compiled.entries)


# ----- branches ---------------------------------------------------------------------------------
def float32_or_int(x):
    if x.sum() > 0:
        y = x.astype(np.float32) / 100
    else:
        y = x * 2
    return y


def int_or_float(x):
    if x.sum() > 0:
        y = 1
    else:
        y = 2.5
    return y


def same_types(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [float32_or_int, int_or_float])
def test_branches_with_different_types_are_not_merged(backend, fn):
    run_calls(fn, [(np.arange(3),), (-np.arange(1, 4),), (np.arange(3),)], backend)
    with pytest.raises(ac.exc.Unsupported, match="in one branch of an `if` on array data"):
        ac.compile(fn, backend=backend, fullgraph=True)(np.arange(3))


@pytest.mark.parametrize("backend", FAST)
def test_branches_with_the_same_type_stay_one_region(backend):
    compiled = run_calls(same_types, [(np.arange(3.0),), (-np.arange(1.0, 4),)], backend,
                         fullgraph=True)
    assert "region.cond" in regions(compiled) and len(compiled.entries) == 1


def bound_on_one_side(x):
    if x.sum() > 0:
        y = x * 2
    return y


@pytest.mark.parametrize("backend", FAST)
def test_a_variable_bound_on_one_side_is_not_compiled_into_the_branch(backend):
    with pytest.raises(ac.exc.Unsupported, match="assigned in only one branch"):
        ac.compile(bound_on_one_side, backend=backend, fullgraph=True)(np.arange(3.0))
    compiled = ac.compile(bound_on_one_side, backend=backend)
    np.testing.assert_array_equal(compiled(np.arange(3.0)), bound_on_one_side(np.arange(3.0)))


@pytest.mark.parametrize("backend", FAST)
def test_a_variable_bound_on_one_side_raises_unbound_local_error(backend):
    run_calls(bound_on_one_side, [(np.arange(3.0),), (-np.arange(1.0, 4),)], backend)


# ----- loops whose variables change type ----------------------------------------------------------
def int_then_float(x, n):
    s = 0
    for i in range(n):
        s = s + x[i % 3] * 0.5
    return s


@pytest.mark.parametrize("backend", FAST)
def test_a_loop_that_may_not_run_keeps_the_old_type(backend):
    calls = [(np.arange(3.0), n) for n in (4, 5, 0, 2, -1)]
    compiled = run_calls(int_then_float, calls, backend)
    assert len(compiled.entries) == 3  # static; dynamic n > 0; dynamic n <= 0


def int_then_float_in_while(x):
    s = 0
    while x.sum() > s:
        s = s + x[0] + 1.5
    return s


@pytest.mark.parametrize("backend", FAST)
def test_a_while_loop_that_changes_a_type_runs_in_python(backend):
    run_calls(int_then_float_in_while, [(np.arange(4.0),), (-np.ones(2),)], backend)
    with pytest.raises(ac.exc.Unsupported, match="before a compiled while loop"):
        ac.compile(int_then_float_in_while, backend=backend, fullgraph=True)(np.arange(4.0))


# ----- Python scalars in compiled loops ---------------------------------------------------------------
def float_division(x):
    s = 1.0
    for i in range(x.shape[0]):
        s = s / (i - 2)
    return s


def int_division(x):
    s = 0
    for i in range(x.shape[0]):
        s = s + 10 // (i - 3) + (-7) % (i - 3) + (-7) // (i + 1) + 7 % (-1 - i)
    return s


def float_floor_and_modulo(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (-3.5) // (i - 2.0) + (-3.5) % (i + 1.0) + 3.5 % -(i + 1.0)
    return s


def numeric_tower(x):
    s = 0
    for i in range(1, x.shape[0]):
        s = s + i / 2 + i ** -2 + i ** 2 + True + (i > 1) + round(2.5 + i) + round(i + 0.5)
    return s


def rounding(x):
    r = 0
    for i in range(x.shape[0]):
        r = r + round(i + 0.5) * 10 + round(-i - 0.5)
    return r


def big_counter(x):
    p = 1
    for i in range(x.shape[0]):
        p = p * 3
    return p


def negative_infinity(x):
    best = float("-inf")
    worst = float("inf")
    for i in range(x.shape[0]):
        if x[i] * i > best:
            best = i * 1.0
        if -x[i] * i < worst:
            worst = -i * 1.0
    return best, worst


@pytest.mark.filterwarnings("error:astcompiler")  # compiled by the backend, no eager fallback
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, sizes", [
    (float_division, (2, 4, 5)),           # ZeroDivisionError: float division by zero
    (int_division, (2, 3, 5)),             # integer division or modulo by zero; floor semantics
    (float_floor_and_modulo, (2, 3, 4)),   # float floor division by zero
    (numeric_tower, (3, 4, 6)),
    (rounding, (3, 4, 6)),
    (big_counter, (5, 70, 100)),           # outgrows 64 bits: Python's ints
    (negative_infinity, (3, 4)),
])
def test_python_scalars_in_compiled_loops_follow_python(backend, fn, sizes):
    compiled = run_calls(fn, [(np.ones(n),) for n in sizes], backend, dynamic=True)
    assert "for_range" in regions(compiled)


def complex_power(x):
    s = -1.0
    t = 0.0
    for i in range(x.shape[0]):
        t = s ** 0.5
        s = s - i
    return t


@pytest.mark.parametrize("backend", FAST)
def test_a_python_power_whose_type_depends_on_the_value_is_not_compiled(backend):
    run_calls(complex_power, [(np.ones(3),), (np.ones(4),)], backend, dynamic=True)
    with pytest.raises(ac.exc.Unsupported, match="result type depends on the values"):
        ac.compile(complex_power, backend=backend, dynamic=True, fullgraph=True)(np.ones(3))


def weak_int_in_loop_no_write(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        total = total + x[i] * (i * 40)
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_python_int_meeting_a_narrow_dtype_in_a_loop_is_checked(backend):
    # int8 + a Python int that does not fit int8 raises OverflowError in NumPy (NEP 50)
    calls = [(np.ones(n, np.int8),) for n in (2, 3, 5)]
    run_calls(weak_int_in_loop_no_write, calls, backend, dynamic=True)
