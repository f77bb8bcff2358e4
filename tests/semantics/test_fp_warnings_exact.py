"""NumPy's floating-point warnings and errors from compiled kernels, exactly (red-team F1).

NumPy tests the FP flags after every ufunc call and warns once per call and category (divide,
overflow, underflow, invalid: in that order), naming the ufunc; ``np.seterr`` picks warn, raise,
call, log or ignore; a ``warnings`` filter then decides what is shown. Each case compares the
plain call with the compiled one (``backend="numba"``) on: the exact list of warnings (category,
message, in order), the exception (type, message), the result, the arguments after the call and
the calls of an ``np.seterrcall`` handler. The kernels write their inputs (in-place stores,
masked stores, loop bodies updating a carried array), so NumPy cannot simply run the call again
afterwards: the wrapper runs the kernel's NumPy twin on its operands (``runtime.fp_rerun``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac

pytest.importorskip("numba")

TRIPS = 70  # past config.unroll_limit: loops stay loops


def inplace_two_ops(x):
    x[:] = np.log(x - 0.5) + np.sqrt(x - 0.7)
    return x


def inplace_categories(x):
    x[:] = np.log(x) + 1.0 / x + np.exp(x * 1000.0)
    return x


def single_ufuncs(x, y):  # one ufunc per kernel: its flags alone say what NumPy warns
    x[:] = x / y
    x[:] = x * 1e300
    return x


def shifted_store(x):  # the store overlaps an operand: kernel into a temporary, then the copy
    x[1:] = np.log(x[:-1] - 0.5)
    return x


def masked_two_ops(d, x):
    m = x < 2.0
    d[m] = np.log(x[m]) + np.sqrt(x[m])
    return d


def masked_reads_dst(d, x):
    m = x < 2.0
    d[m] = np.log(d[m]) * x[m]
    return d


def fresh_after_write(x, y):
    x[0] = 1.0
    return np.log(y) + np.sqrt(y), np.log(y * 2.0).sum()


def reduction_overflow(x, y):
    x[:] = y
    return (x * 1e300).sum(), x.sum()


def structured_loop(x, n):
    for _ in range(n):
        x[:] = np.log(x)
    return x


def host_loop(x, n):
    for _ in range(n):  # float16 round trips keep this loop out of structured functions
        x[:] = np.log(x.astype(np.float16).astype(np.float64))
    return x


CASES = {
    "inplace_two_ops": (inplace_two_ops, lambda: (np.array([1.0, 0.0, 0.6]),)),
    "inplace_categories": (inplace_categories, lambda: (np.array([0.0, -1.0, 2.0, 1.0]),)),
    "single_ufuncs": (single_ufuncs, lambda: (np.array([1.0, 1.0, 0.0, 1e10]),
                                              np.array([0.0, 1.0, 0.0, 1.0]))),
    "shifted_store": (shifted_store, lambda: (np.array([1.0, 0.0, 0.6, 2.0]),)),
    "masked_two_ops": (masked_two_ops, lambda: (np.zeros(3), np.array([1.0, -1.0, 3.0]))),
    "masked_reads_dst": (masked_reads_dst, lambda: (np.array([0.0, -1.0, 2.0]),
                                                    np.array([1.0, 1.0, 5.0]))),
    "fresh_after_write": (fresh_after_write, lambda: (np.zeros(2), np.array([0.0, -1.0, 4.0]))),
    "reduction_overflow": (reduction_overflow, lambda: (np.zeros(2), np.array([1e308, 1e308]))),
    "structured_loop": (structured_loop, lambda: (np.array([1.0, 3.0]), TRIPS)),
    "host_loop": (host_loop, lambda: (np.array([1.0, 3.0]), TRIPS)),
}
_COMPILED: dict = {}


def compiled(name):
    if name not in _COMPILED:
        _COMPILED[name] = ac.compile(CASES[name][0], backend="numba")
    return _COMPILED[name]


class Handler:
    """An ``np.seterrcall`` handler for the "call" (``__call__``) and "log" (``write``) modes."""

    def __init__(self) -> None:
        self.calls: list = []

    def __call__(self, kind: str, flag: int) -> None:
        self.calls.append((kind, flag))

    def write(self, message: str) -> None:
        self.calls.append(message)


def observe(fn, args, state):
    """Run ``fn(*args)`` under ``state``: (outcome, warnings, args after, handler calls)."""
    handler = Handler()
    calls = handler.calls
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(state.get("filter", "always"))
        warnings.onceregistry.clear()  # "once" is keyed process-wide: each run starts afresh
        old_call = np.seterrcall(handler)
        try:
            with np.errstate(**state.get("errstate", {})):
                try:
                    result = ("ok", _plain(fn(*args)))
                except Exception as exc:  # noqa: BLE001 - the exception is the observable
                    result = ("raise", type(exc).__name__, str(exc))
        finally:
            np.seterrcall(old_call)
    shown = [(w.category.__name__, str(w.message)) for w in caught
             if not str(w.message).startswith("astcompiler")]
    return result, shown, _plain(args), calls


def _plain(value):
    """Values as comparable Python data (NaN as a string, bits of floats kept)."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (np.ndarray, np.generic, float)):
        a = np.asarray(value)
        return (a.dtype.str, a.shape, [repr(float(v)) for v in a.ravel()])
    return value


def same_as_numpy(name, state):
    fn, make = CASES[name]
    want = observe(fn, make(), state)
    fast = compiled(name)
    got = observe(fast, make(), state)
    code = fast.entries[-1].output_code
    assert "the original function runs" not in code, code[:300]  # kernels ran, not the user's
    assert got == want, f"{name} under {state}:\ncompiled {got}\nplain    {want}"
    return want


STATES = {
    "warn": {},
    "raise": {"errstate": {"all": "raise"}},
    "ignore": {"errstate": {"all": "ignore"}},
    "call": {"errstate": {"all": "call"}},
    "log": {"errstate": {"all": "log"}},
    "invalid_raise": {"errstate": {"invalid": "raise", "divide": "warn"}},
    "all_warn": {"errstate": {"all": "warn"}},  # underflow too (exp(-1000) in inplace_categories)
    "filter_error": {"filter": "error"},
    "filter_once": {"filter": "once"},
    "filter_default": {"filter": "default"},
    "filter_ignore": {"filter": "ignore"},
}


@pytest.mark.parametrize("name", list(CASES))
def test_warnings_like_numpy(name):
    want = same_as_numpy(name, STATES["warn"])
    assert want[1], "the case must warn"  # (a case that warns nothing would test nothing)
    for state in ("warn", "ignore", "raise"):  # a second call: the same again
        same_as_numpy(name, STATES[state])


@pytest.mark.parametrize("state", [s for s in STATES if s not in ("warn", "ignore", "raise")])
@pytest.mark.parametrize("name", ["inplace_categories", "masked_two_ops", "structured_loop",
                                  "host_loop"])
def test_errstate_modes_and_filters(name, state):
    want = same_as_numpy(name, STATES[state])
    if state in ("call", "log"):
        assert want[3], "NumPy calls the handler"  # (and the compiled call did the same)


def test_categories_in_numpy_order():
    """One kernel, several ops and categories: one warning per op and category, in op order
    and, within one op, divide before overflow before invalid (NumPy's order)."""
    _, shown, _, _ = same_as_numpy("inplace_categories", {})
    assert [m for _, m in shown] == [
        "divide by zero encountered in log", "invalid value encountered in log",
        "divide by zero encountered in divide", "invalid value encountered in add",
        "overflow encountered in exp"]


def test_loop_warns_per_trip():
    """A loop updating a carried array in place warns on each trip NumPy does (structured
    function and host loop alike)."""
    for name in ("structured_loop", "host_loop"):
        _, shown, _, _ = same_as_numpy(name, {})
        assert [m for _, m in shown] == [  # 1 -> 0 -> -inf -> nan; 3 -> ... -> -2.36 -> nan
            "divide by zero encountered in log", "invalid value encountered in log",
            "invalid value encountered in log"]


def test_raise_message_and_inputs_untouched():
    """``np.errstate(divide="raise")``: NumPy's FloatingPointError message, and the input as
    NumPy leaves it (it raises before the store)."""
    result, _, args, _ = same_as_numpy("inplace_categories", {"errstate": {"divide": "raise"}})
    assert result == ("raise", "FloatingPointError", "divide by zero encountered in log")
    assert args == _plain((np.array([0.0, -1.0, 2.0, 1.0]),))


def test_hot_path_copies_only_while_a_mode_warns():
    """The copy an in-place kernel keeps for NumPy's warnings is taken only while some
    ``np.seterr`` mode is not "ignore", and only by a kernel of several ops (one ufunc's flags
    are all its own); no flag raised: no warning, no NumPy rerun."""
    fn = compiled("inplace_two_ops")
    code = fn.entries[-1].output_code
    assert "___rt.snapshot(___pool, -1, view_add) if ___rt.fp_watch() else None" in code
    assert "___rt.fp_rerun(" in code and "___rt.fp_report(" not in code
    single = compiled("single_ufuncs")
    same_as_numpy("single_ufuncs", {})
    code = single.entries[-1].output_code
    assert "___rt.snapshot(" not in code and "fp_report(['divide']" in code
    x = np.array([2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(fn(x), np.log(np.array([1.5, 2.5])) + np.sqrt([1.3, 2.3]))


def test_augmented_assignment_writes_before_numpy_raises():
    """``x /= y`` under errstate raise: NumPy's ufunc writes into x, then raises; so do we."""
    def f(x, y):
        x /= y
        return x
    fast = ac.compile(f, backend="eager")
    fast(np.ones(2), np.ones(2))
    outcomes = []
    for g in (f, fast):
        x = np.array([1.0, 0.0])
        with np.errstate(divide="raise", invalid="raise"), pytest.raises(FloatingPointError):
            g(x, np.zeros(2))
        outcomes.append(_plain(x))
    assert outcomes[1] == outcomes[0]


def _dead_log(x):
    np.log(x)  # its value is never used, but NumPy still warns
    return x + 1.0


def _twice_log(x):
    return np.log(x) + np.log(x)  # two ufunc calls: two warnings


@pytest.mark.parametrize("fn", [_dead_log, _twice_log])
def test_dropped_or_merged_calls_still_warn(fn):
    fast = ac.compile(fn, backend="eager")
    got = observe(fast, (np.array([0.0, 1.0]),), {})[1]
    assert got == observe(fn, (np.array([0.0, 1.0]),), {})[1]
