"""The numba wrapper's ``forward`` pasted into the dispatch (``run/dispatch.py``,
``forward_body``): the pasted body serves hits, guard failures recompile, FP warnings and
errors are the plain call's (at the user's line), and the eager fallback still runs."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome

pytest.importorskip("numba")


def tiny(x, y):
    return x * y + 1.0


def divide(x, y):
    return x / y


def pasted(compiled) -> str:
    return type(compiled).__call__.source


def same(got, want):
    np.testing.assert_array_equal(got, want)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape


def test_the_wrapper_body_is_pasted_and_serves_hits():
    compiled = ac.compile(tiny, backend="numba", dynamic=False)
    x, y = np.arange(8.0), np.full(8, 2.0)
    same(compiled(x, y), tiny(x, y))
    source = pasted(compiled)
    assert "the wrapper pasted" in source and "___out = ___compiled_e0(" not in source
    for _ in range(3):
        same(compiled(x + 1, y), tiny(x + 1, y))
    assert "dispatch of tiny: 1 entry" in pasted(compiled)


def test_guard_failures_recompile_and_each_entry_is_pasted():
    compiled = ac.compile(tiny, backend="numba", dynamic=False)
    cases = [(np.ones(8), np.ones(8)), (np.ones(8, np.float32), np.ones(8, np.float32)),
             (np.ones(5), np.ones(5))]
    for x, y in cases:
        same(compiled(x, y), tiny(x, y))
    source = pasted(compiled)
    assert "dispatch of tiny: 3 entries" in source
    for index in range(len(cases)):
        assert f"# entry {index}: the wrapper pasted" in source
    for x, y in cases:  # hits: the right entry serves each, no new entry
        same(compiled(x * 3, y), tiny(x * 3, y))
    assert "dispatch of tiny: 3 entries" in pasted(compiled)


def test_fp_warnings_and_errors_are_the_plain_calls():
    compiled = ac.compile(divide, backend="numba", dynamic=False)
    x, zero = np.ones(8), np.zeros(8)
    compiled(x, x)  # compiled and pasted before the warning
    assert "the wrapper pasted" in pasted(compiled)
    got, want = outcome(compiled, (x, zero), True), outcome(divide, (x, zero), True)
    same(got[0], want[0])
    assert got[1:] == want[1:] and want[2]
    with np.errstate(divide="raise"):
        got, want = outcome(compiled, (x, zero)), outcome(divide, (x, zero))
    assert got == want and want[1][0] is FloatingPointError


def test_a_raising_call_falls_back_to_the_original():
    compiled = ac.compile(tiny, backend="numba", dynamic=False)
    x = np.ones(8)
    compiled(x, np.ones(8))
    got, want = outcome(compiled, (x, None)), outcome(tiny, (x, None))
    assert got[1] == want[1] and want[1][0] is TypeError


def bump(x, y):
    x += y
    return x * 2.0


def test_a_call_that_writes_to_an_input_matches_the_plain_call():
    compiled = ac.compile(bump, backend="numba", dynamic=False)
    for _ in range(3):
        x, y = np.arange(8.0), np.ones(8)
        x2 = x.copy()
        same(compiled(x, y), bump(x2, y))
        np.testing.assert_array_equal(x, x2)  # the mutation, once per call


def test_keyword_and_aliased_arguments_take_the_pasted_entry_alike():
    compiled = ac.compile(tiny, backend="numba", dynamic=False)
    x = np.arange(8.0)
    same(compiled(x, x), tiny(x, x))
    same(compiled(y=x, x=x + 1), tiny(x + 1, x))
    same(compiled(x, y=x), tiny(x, x))
