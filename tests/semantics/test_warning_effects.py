"""NumPy's floating-point warnings are effects: the compiled call warns as the plain call does,
in count (CSE must not merge two ops that warn, DCE must not drop an unused one that warns),
wording ("in scalar divide" for an operator on NumPy scalars) and location (the user's file and
line, so Python's once-per-location filter and ``filterwarnings(module=...)`` see the same)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome as call_outcome


def outcome(fn, args):
    """``helpers.outcome`` with each warning's file and line."""
    return call_outcome(fn, args, locations=True)


def copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def assert_same_outcome(compiled, fn, args, where=True):
    """``where``: the warnings' file and line too (not for ops whose NumPy reference is a Python
    function, such as ``astype``: NumPy warns from inside it)."""
    got, got_error, got_warnings = outcome(compiled, copies(args))
    want, want_error, want_warnings = outcome(fn, copies(args))
    assert got_error == want_error
    if not where:
        got_warnings, want_warnings = [w[:2] for w in got_warnings], [w[:2] for w in want_warnings]
    assert got_warnings == want_warnings
    if want_error is None:
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)


def targets(compiled) -> list[str]:
    return [n.target for n in compiled.entries[0].graph.nodes if n.op == "call"]


# --- X10: common-subexpression elimination keeps each warning op --------------------------------

def log_twice(x):
    return np.log(x) + np.log(x)


def softmax_twice(x):
    return np.exp(x - x.max()) / np.exp(x - x.max()).sum()


def quiet_twice(x):
    return np.abs(x) + np.abs(x) + x.max() + x.max()


NEG = np.array([-1.0, 1.0])


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_two_equal_warning_ops_warn_twice(backend):
    compiled = ac.compile(log_twice, backend=backend)
    assert_same_outcome(compiled, log_twice, (NEG,))
    assert targets(compiled).count("log") == 2


def test_softmax_written_twice_warns_twice():
    compiled = ac.compile(softmax_twice, backend="eager")
    assert_same_outcome(compiled, softmax_twice, (np.array([-np.inf, -np.inf]),))
    assert targets(compiled).count("max") == 1  # quiet: still merged
    assert targets(compiled).count("subtract") == 2


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_errstate_handler_runs_per_op_and_raise_stops_at_the_first(backend):
    compiled = ac.compile(log_twice, backend=backend)
    for fn in (log_twice, compiled):
        calls = []
        with np.errstate(all="call", call=lambda kind, flag: calls.append(kind)):
            fn(NEG.copy())
        assert calls == ["invalid value", "invalid value"]
    with np.errstate(all="raise"):
        assert_same_outcome(compiled, log_twice, (NEG,))


def test_ops_that_cannot_warn_are_still_merged():
    compiled = ac.compile(quiet_twice, backend="eager")
    assert_same_outcome(compiled, quiet_twice, (np.array([np.nan, -1.0]),))
    assert targets(compiled).count("absolute") == 1
    assert targets(compiled).count("max") == 1


# --- X11: dead-code elimination keeps an unused op that warns -----------------------------------

def unused_log(x):
    unused = np.log(x)  # noqa: F841 - its warning is the point
    return x * 2


def unused_divide(x):
    unused = x / 0.0  # noqa: F841
    return x * 2


def unused_cast(x):
    unused = x.astype(np.int32)  # noqa: F841
    return x + 1


def unused_floor_divide(a, b):
    unused = a // b  # noqa: F841
    return a + b


def unused_quiet(x):
    unused = np.maximum(np.abs(x), x.max())  # noqa: F841 - cannot warn: dropped
    return x * 2


UNUSED = [(unused_log, (NEG,)), (unused_divide, (NEG,)),
          (unused_cast, (np.array([np.nan, 1.0]),)),
          (unused_floor_divide, (np.array([1, 2]), np.array([0, 1])))]


@pytest.mark.parametrize("mode", ["warn", "raise"])
@pytest.mark.parametrize("fn, args", UNUSED, ids=[f.__name__ for f, _ in UNUSED])
def test_unused_op_warns_eager(fn, args, mode):
    compiled = ac.compile(fn, backend="eager")
    with np.errstate(all=mode):
        assert_same_outcome(compiled, fn, args, where=fn is not unused_cast)


@pytest.mark.parametrize("fn, args", UNUSED[:2], ids=[f.__name__ for f, _ in UNUSED[:2]])
def test_unused_op_warns_numba(fn, args):
    compiled = ac.compile(fn, backend="numba")
    for mode in ("warn", "raise"):
        with np.errstate(all=mode):
            assert_same_outcome(compiled, fn, args)


def test_unused_op_that_cannot_warn_is_dropped():
    compiled = ac.compile(unused_quiet, backend="eager")
    assert_same_outcome(compiled, unused_quiet, (NEG,))
    assert targets(compiled) == ["multiply"]


# --- X4: an operator on NumPy scalars is NumPy's scalar math ------------------------------------

def scalar_ratio(x, i):
    return x[i] / x[i + 1]


def ufunc_on_scalars(x, i):
    return np.divide(x[i], x[i + 1])


def scalar_loop(x, n):
    for i in range(n):
        x[i] = x[i] / x[i + 1]
        x *= 1e300
    return x


def int_scalar_overflow(x):
    return x[0] + x[1]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_scalar_divide_message(backend):
    for fn in (scalar_ratio, ufunc_on_scalars):
        assert_same_outcome(ac.compile(fn, backend=backend), fn, (np.array([1.0, 0.0]), 0))


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_scalar_divide_message_in_a_loop(backend):
    compiled = ac.compile(scalar_loop, backend=backend)
    assert_same_outcome(compiled, scalar_loop, (np.array([1.0, 0.0, 2.0, 0.0, 1.0]), 3))


def test_numpy_integer_scalar_overflow_warns_eager():
    compiled = ac.compile(int_scalar_overflow, backend="eager")
    assert_same_outcome(compiled, int_scalar_overflow, (np.array([2 ** 62, 2 ** 62]),))


# --- X3: warnings come from the user's line and module ------------------------------------------

def two_logs(x):
    a = np.log(x)
    b = np.log(x - 5.0)
    return a + b


def store_log(x):
    x[:] = np.log(x)
    return x


def default_filter_counts(fn, calls: int = 3) -> list[int]:
    counts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(calls):
            before = len(caught)
            fn(NEG.copy())
            counts.append(len(caught) - before)
    return counts


@pytest.mark.parametrize("fn, backend", [(two_logs, "eager"), (two_logs, "aot_eager"),
                                         (two_logs, "numba"), (store_log, "numba")])
def test_default_filter_counts_each_user_line(fn, backend):
    compiled = ac.compile(fn, backend=backend)
    assert default_filter_counts(compiled) == default_filter_counts(fn) == [
        2 if fn is two_logs else 1, 0, 0]
    assert_same_outcome(compiled, fn, (NEG,))  # file and line too


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_module_filter_matches_the_user_module(backend):
    compiled = ac.compile(two_logs, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled(NEG.copy())  # compiled before the filter changes
    for fn in (two_logs, compiled):
        with warnings.catch_warnings():
            warnings.filterwarnings("error", category=RuntimeWarning, module=__name__)
            with pytest.raises(RuntimeWarning, match="invalid value encountered in log"):
                fn(NEG.copy())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", module=__name__)
            fn(NEG.copy())
        assert caught == []
