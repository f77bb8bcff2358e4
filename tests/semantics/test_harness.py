"""The harness itself: every observable it promises to compare is told apart."""

from __future__ import annotations

import numpy as np
import pytest

from .harness import Case, Program, compare_records, run_calls, run_case, snapshot, compare


def first_difference(plain_fn, compiled_fn, make_calls, observe=None):
    """Run two different functions over equal fresh inputs; the first differing observable."""
    plain = run_calls(plain_fn, Program(plain_fn, make_calls(), observe=observe))
    other = run_calls(compiled_fn, Program(compiled_fn, make_calls(), observe=observe))
    for p, c in zip(plain, other):
        found = compare_records(p, c)
        if found:
            return found
    return None


def one_array():
    return [(np.arange(3.0),)]


@pytest.mark.parametrize("a, b, what", [
    (lambda x: 2, lambda x: 2.0, "type"),
    (lambda x: 1, lambda x: True, "type"),
    (lambda x: 0.0, lambda x: -0.0, "value"),
    (lambda x: float("nan"), lambda x: 0.0, "value"),
    (lambda x: x.astype(np.float32), lambda x: x, "dtype"),
    (lambda x: x[:2], lambda x: x, "shape"),
    (lambda x: x + 1e-3, lambda x: x, "values"),
    (lambda x: [1, 2], lambda x: (1, 2), "type"),
    (lambda x: {"a": 1}, lambda x: {"b": 1}, "keys"),
    (lambda x: np.float64(1.0), lambda x: 1.0, "type"),
    (lambda x: "n=3", lambda x: "n=SymInt(s0)", "value"),
])
def test_return_values_told_apart(a, b, what):
    observable, detail = first_difference(a, b, one_array)
    assert observable == "return value" and detail.startswith(what), detail


def test_float_rounding_tolerated():
    assert first_difference(lambda x: x * 3.0, lambda x: x * 3.0 * (1 + 1e-13), one_array) is None
    assert first_difference(lambda x: 0.1 + 0.2, lambda x: 0.3 + 1e-17, one_array) is None


def test_nan_equals_nan():
    assert first_difference(lambda x: (float("nan"), x / 0), lambda x: (float("nan"), x / 0),
                            one_array) is None


def test_identity_of_returned_argument():
    found = first_difference(lambda x, lst: lst, lambda x, lst: list(lst), lambda: [(np.ones(2), [1])])
    assert found[0] == "identity" and "args[1]" in found[1]
    nested = first_difference(lambda x, lst: (x, [lst]), lambda x, lst: (x.copy(), [lst]),
                              lambda: [(np.ones(2), [1])])
    assert nested[0] == "identity" and "result[0]" in nested[1]


def test_mutation_stdout_exception_observed():
    def appends(x, lst):
        lst.append(1)

    def prints(x, lst):
        print("hello")

    def raises(x, lst):
        raise ValueError("a")

    def raises_other(x, lst):
        raise ValueError("b")
    make = lambda: [(np.ones(2), [])]  # noqa: E731
    assert first_difference(appends, lambda x, lst: None, make)[0] == "arguments after the call"
    assert first_difference(prints, lambda x, lst: None, make)[0] == "stdout"
    assert first_difference(raises, lambda x, lst: None, make)[0] == "outcome"
    assert first_difference(raises, raises_other, make)[0] == "exception"


def test_observe_compared():
    state = {"n": 0}

    def bump(x):
        state["n"] += 1

    def bump_twice(x):
        state["n"] += 2

    found = first_difference(bump, bump_twice, lambda: [(np.ones(2),)] * 2, observe=lambda: dict(state))
    assert found[0] == "observed state"


def test_snapshot_detaches_from_later_mutation():
    lst = [1, [2]]
    snap = snapshot(lst)
    lst[1].append(3)
    assert compare(snap, snapshot([1, [2]])) is None


def test_run_case_reports_case_backend_and_call():
    def f(x, n):
        return x * 2 if isinstance(n, int) else x

    def factory():
        return Program(f, [(np.ones(2), 1), (np.ones(3), 2)])
    assert run_case(Case("meta/plain_ok", "meta", factory), "eager") is None

    def bad_factory():
        return Program(lambda x: x, [(np.ones(2),)], target=lambda x: x + 1)
    diff = run_case(Case("meta/bad", "meta", bad_factory), "eager")
    assert diff is not None and diff.call_index == 0
    assert diff.message().startswith("meta/bad [eager] call 1 of 1")
