"""A number that is a Python ``float``/``int`` or its NumPy twin, depending on the data.

``best = 0.0`` and then ``best = x[i]`` on some iterations (behind ``if x[i] > best``, through
``max(best, x[i])``, or in a loop whose trip count is data) leaves ``best`` a Python float on one
input and an ``np.float64`` on another. The regions carried the NumPy type only, so the compiled
call returned ``np.float64(0.0)`` where the plain call returned ``0.0``. Now they carry a flag
beside the value (``capture/type_tags.py``); the entry returns the type Python would have. Uses
of such a value whose result Python and NumPy could give differently still run in Python.

Each case: value, type, warnings and exception equal to the plain call's (``outcome``) on inputs
that take each path, on aot_eager and numba; and whether the function stayed one graph.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import counted, outcome

N = 100  # above config.unroll_limit: the loops are regions


def running_max_if(x):
    best = 0.0
    for i in range(x.shape[0]):
        if abs(x[i]) > best:
            best = abs(x[i])
    return best


def running_max_builtin(x):
    best = 0.0
    for i in range(x.shape[0]):
        best = max(best, x[i])
    return best


def running_min_int(x):
    low = 0
    for i in range(x.shape[0]):
        low = min(low, x[i])
    return low


def first_branch_then_store(x):
    out = np.zeros(x.shape[0])
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
        out[i] = best
    return out, best


def data_trip_count(x):
    total = 0.0
    for i in range(np.count_nonzero(x)):
        total += x[i]
    return total


def while_scan(x):
    best = 0.0
    i = 0
    while i < x.shape[0] and x[i] < 5.0:
        if x[i] > best:
            best = x[i]
        i += 1
    return best, i


def nested_loops(a):
    best = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > best:
                best = a[i, j]
    return best


def top_level_branch(x, c):
    v = 0.0
    if x.sum() > c:
        v = x[0]
    return v


def conditional_expression(x):
    best = 0.0
    for i in range(x.shape[0]):
        best = x[i] if x[i] > best else best
    return best


def compared_and_negated(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best > 0.5, -best, abs(best)


def numpy_uses(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return np.sqrt(best), best + x[0]


def scaled_after(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best * 2.0, best - 1.0, best / 2.0, best / x.shape[0]  # Python's values: NumPy's


def arithmetic_after(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best / float(x[0])  # a traced Python float divisor may be 0: Python would raise


def running_max_and_total(x):
    best = 0.0
    total = 0.0
    for i in range(x.shape[0]):
        best = max(best, x[i])
        total += best
    return best, total


def branch_then_arithmetic(x):
    best = 0.0
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = best * 0.5 + x[i]
        total = total - best
        x[i] = best * 0.5
    return best, total, x


def int_running_min_and_total(x):
    low = 0
    total = 0
    for i in range(x.shape[0]):
        low = min(low, x[i])
        total += low
    return low, total


def arithmetic_in_the_body_that_could_differ(x):
    best = 0.0
    d = 1.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
        d = d + 1.0
        x[i] = best / d  # Python's float ``/`` raises on a zero divisor (not modeled)
    return best


RNG = np.random.default_rng(7)
POS, NEG, ZERO = RNG.random(N) + 0.1, -RNG.random(N) - 0.1, np.zeros(N)
INTS = RNG.integers(-5, 5, N)

# (function, argument tuples: each path at least once, in an order that reuses the entry)
ONE_GRAPH = [
    (running_max_if, [(POS,), (ZERO,), (NEG,)]),
    (running_max_builtin, [(NEG,), (POS,), (ZERO,)]),
    (running_min_int, [(np.abs(INTS),), (INTS,)]),
    (first_branch_then_store, [(NEG,), (POS,)]),
    (data_trip_count, [(ZERO,), (POS,)]),
    (while_scan, [(NEG,), (POS * 10,), (POS,)]),
    (nested_loops, [(NEG.reshape(10, 10),), (POS.reshape(10, 10),)]),
    (top_level_branch, [(POS, 1000.0), (POS * 100, 1000.0)]),
    (conditional_expression, [(NEG,), (POS,)]),
    (compared_and_negated, [(NEG,), (POS,)]),
    (numpy_uses, [(NEG,), (POS,)]),
    (running_max_and_total, [(NEG,), (POS,)]),
    (scaled_after, [(NEG,), (POS,)]),
    (branch_then_arithmetic, [(NEG,), (POS,)]),
]
IN_PYTHON = [(arithmetic_after, [(NEG,), (POS,)])]
# a use inside the loop the tags do not model exactly: the loop runs in Python (its type right)
EAGER = [(int_running_min_and_total, [(np.abs(INTS),), (INTS,)]),
         (arithmetic_in_the_body_that_could_differ, [(NEG,), (POS,)])]


def _calls(fn, calls, backend):
    compiled = ac.compile(fn, backend=backend)
    for args in calls:  # (each call on its own copies: some functions write into x)
        got = outcome(compiled, copy.deepcopy(args))
        assert repr(got) == repr(outcome(fn, copy.deepcopy(args))), (fn.__name__, args)
    return compiled


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("fn, calls", ONE_GRAPH, ids=[f.__name__ for f, _ in ONE_GRAPH])
def test_the_plain_calls_type_from_one_graph(fn, calls, backend):
    counter, counting = counted(backend)
    compiled = _calls(fn, calls, counting)
    assert counter.frame_count == 1
    assert len(compiled.entries) == 1


@pytest.mark.parametrize("fn, calls", IN_PYTHON, ids=[f.__name__ for f, _ in IN_PYTHON])
def test_arithmetic_that_could_differ_runs_in_python_after_the_compiled_loop(fn, calls):
    counter, counting = counted("aot_eager")
    compiled = _calls(fn, calls, counting)
    assert counter.frame_count == 1  # the loop, up to the graph break at ``best / float(x[0])``
    assert [n.op for n in counter.graphs[0].nodes].count("region") == 1
    reason = compiled.entries[0].break_reason.reason
    assert reason.startswith("divide of a value that is a Python float or a NumPy scalar")


@pytest.mark.parametrize("fn, calls", EAGER, ids=[f.__name__ for f, _ in EAGER])
def test_a_use_in_the_loop_the_tags_do_not_model_runs_the_loop_in_python(fn, calls):
    counter, counting = counted("aot_eager")
    compiled = _calls(fn, calls, counting)
    assert counter.frame_count == 0
    assert "a Python" in compiled.entries[0].break_reason.reason


def test_the_flag_is_a_carried_state_variable():
    counter, counting = counted("aot_eager")
    ac.compile(running_max_builtin, backend=counting)(POS)
    regions = [n for n in counter.graphs[0].nodes if n.op == "region"]
    assert regions[0].info.names == ("best", "__ac_isnp_best")


def test_the_entry_chooses_the_type_at_run_time():
    compiled = ac.compile(running_max_if, backend="aot_eager")
    assert type(compiled(ZERO)) is float
    assert type(compiled(POS)) is np.float64
    assert len(compiled.entries) == 1
