"""Gradients through regions: loops over run-time ranges (a tape and a reverse loop), branches
on array data (the taken branch's rules), and the clear errors for while loops, ``break`` and
writes inside a loop. Float64, against central finite differences; ``unroll_limit=2`` makes
short loops regions (cheap to check by differences)."""

from __future__ import annotations

import contextlib
import io
import inspect
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.exc import Unsupported

from .fd import assert_gradients, numeric_grad

RNG = np.random.default_rng(13)


def rnn(x, W, h0):
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + x[t])
    return np.sum(h * h)


LOOP_LINE = inspect.getsourcelines(rnn)[1] + 2  # ``for t in range(x.shape[0]):``


def cumulative(x, n):
    p = 1.0
    s = 0.0
    for t in range(n):
        p = p * x[t]
        s = s + p
    return s


def stepped(x, a, b):
    s = x[0] * 0.0
    for t in range(a, b, 2):
        s = s * np.cos(x[t]) + x[t] ** 2
    return s


def branchy(x, w):
    y = x * w
    if np.sum(y) > 0:
        y = np.sin(y) * w
    else:
        y = np.exp(y)
    return np.sum(y)


def with_while(x):
    s = x[0]
    while s < 10.0:
        s = s * 2.0 + x[1]
    return s


def with_break(x, n):
    s = 0.0
    for t in range(n):
        if s > 2.0:
            break
        s = s + x[t]
    return s


def with_write(x, n):
    y = np.zeros(n)
    for t in range(n):
        y[t] = x[t] * 2.0
    return np.sum(y)


def gated_rnn(x, w):
    h = np.zeros(3)
    for t in range(x.shape[0]):
        if x[t, 0] > 0:  # a branch on array data inside the loop
            h = np.tanh(w * h + x[t])
        else:
            h = h * 0.5 + w
    return np.sum(h * h)


def layered(x, w):
    h = np.zeros(3)
    for t in range(x.shape[0]):
        for k in range(x.shape[1]):  # a loop inside the loop
            h = np.tanh(w * h + x[t, k])
    return np.sum(h * h)


def nested_with_break(x, n):
    s = 0.0
    for t in range(n):
        for k in range(n):
            if s > 2.0:
                break
            s = s + x[k]
    return s


def _rnn_inputs() -> tuple:
    return RNG.standard_normal((5, 3)), 0.5 * RNG.standard_normal((3, 3)), RNG.standard_normal(3)


def _regions(entry) -> list[str]:
    return [n.target for n in entry.graph.nodes if n.op == "region"]


def _grad(fn, nums, backend="eager"):
    return ac.compile(ac.grad(fn, argnums=nums), backend=backend, fullgraph=True)


def test_recurrence_gradients_and_reverse_loop():
    x, W, h0 = _rnn_inputs()
    with ac.config.patch(unroll_limit=2):
        g = _grad(rnn, (0, 1, 2))
        assert_gradients(rnn, [x, W, h0], g(x, W, h0))
    # the taping loop (which is the forward loop too: it runs once) and the reverse loop: one
    # entry, one graph
    assert len(g.entries) == 1 and _regions(g.entries[0]) == ["for_range"] * 2


def test_trip_count_argument_changes_between_calls():
    x = RNG.uniform(0.5, 1.5, 9)
    with ac.config.patch(unroll_limit=2):
        g = _grad(cumulative, 0)
        for n in (5, 6, 8, 3):
            np.testing.assert_allclose(g(x, n), numeric_grad(cumulative, [x, n], 0),
                                       rtol=1e-6, atol=1e-6)
    assert len(g.entries) == 2  # 5 specialized, then one entry for a run-time trip count


def test_loop_that_does_not_run_passes_the_cotangent_through():
    x = RNG.uniform(0.5, 1.5, 9)
    with ac.config.patch(unroll_limit=2):
        g = _grad(cumulative, 0)
        g(x, 5), g(x, 6)  # a run-time trip count
        np.testing.assert_array_equal(g(x, 0), np.zeros_like(x))


def test_range_with_start_and_step():
    x = RNG.standard_normal(12)
    with ac.config.patch(unroll_limit=2):
        g = _grad(stepped, 0)
        np.testing.assert_allclose(g(x, 1, 10), numeric_grad(stepped, [x, 1, 10], 0),
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_branch_on_array_data_takes_the_taken_branch(sign):
    x, w = sign * np.abs(RNG.standard_normal(4)), np.abs(RNG.standard_normal(4))
    g = _grad(branchy, (0, 1))
    assert_gradients(branchy, [x, w], g(x, w))
    assert "cond" in _regions(g.entries[0])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("fn", [gated_rnn, layered], ids=lambda f: f.__name__)
def test_loops_and_branches_nested_in_a_loop(fn, compiled):
    # the reverse loop emits the body again with its nested region, and differentiates that
    # region inside its own body (a tape per outer iteration for an inner loop)
    x, w = 0.5 * RNG.standard_normal((6, 3)), 0.5 * RNG.standard_normal(3)
    with ac.config.patch(unroll_limit=2):
        g = _grad(fn, (0, 1)) if compiled else ac.grad(fn, argnums=(0, 1))
        assert_gradients(fn, [x, w], g(x, w))
    if compiled:
        assert len(g.entries) == 1 and g.entries[0].break_reason is None


@pytest.mark.parametrize("fn, args, message", [
    (with_while, (np.array([1.0, 0.5]),),
     r"cannot differentiate a `while` loop on run-time values.*np\.where.*\(test_region_gradients"
     r"\.py:\d+\)"),
    (with_break, (np.ones(5), 4), r"a loop with `break`"),
    (nested_with_break, (np.ones(5), 4), r"a loop with `break`.*\(test_region_gradients"),
    (with_write, (np.ones(5), 4), r"cannot differentiate a write into an array.*"
     r"\(test_region_gradients\.py:\d+\)"),
])
def test_refused_regions_name_the_line(fn, args, message):
    with ac.config.patch(unroll_limit=2), pytest.raises(Unsupported, match=message):
        ac.grad(fn)(*args)


@pytest.mark.slow  # a cold numba compile of the three loops: 10-25 s on a loaded 2-core machine
def test_numba_backend_lowers_the_backward_loops():
    x, W, h0 = _rnn_inputs()
    with ac.config.patch(unroll_limit=2), warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to piecewise running
        g = _grad(rnn, (0, 1, 2), backend="numba")
        assert_gradients(rnn, [x, W, h0], g(x, W, h0))
        x2 = RNG.standard_normal((5, 3))
        assert_gradients(rnn, [x2, W, h0], g(x2, W, h0))
    assert len(g.entries) == 1


def test_forward_loop_runs_once_and_backward_code_lists_the_loops():
    x, W, h0 = _rnn_inputs()
    with ac.config.patch(unroll_limit=2):
        g = ac.compile(ac.value_and_grad(rnn, argnums=(0, 1, 2)), backend="eager",
                       fullgraph=True)
        value, grads = g(x, W, h0)
    plain = rnn(x, W, h0)
    assert (type(value), value.tobytes()) == (type(plain), plain.tobytes())
    assert_gradients(rnn, [x, W, h0], grads)
    # the taping loop is the forward loop: it runs once, the program reads its results
    regions = [n for n in g.entries[0].graph.nodes if n.op == "region"]
    assert [r.origin for r in regions] == [f"test_region_gradients.py:{LOOP_LINE}",
                                           f"test_region_gradients.py:{LOOP_LINE} (backward)"]
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        ac.show(g)
    backward = shown.getvalue().split("# ----- backward_code -----")[1].split("# -----")[0]
    for region in regions:  # both loops, with their bodies, on the user's lines
        assert f"{region.name} = region.for_range(" in backward
    assert "np.tanh(add)  # test_region_gradients.py:" in backward
    reverse_body = backward.split("# carries: ct_h")[1].split("\ngetitem_")[0]
    assert "# gradients.py:" not in reverse_body  # not the ac.grad wrapper's line


def test_jvp_through_a_loop_names_the_loop():
    x, W, h0 = _rnn_inputs()
    message = (r"cannot differentiate a gradient \(ac\.jvp.*writes a tape "
               rf"\(test_region_gradients\.py:{LOOP_LINE} \(backward\)\)")
    with ac.config.patch(unroll_limit=2), pytest.raises(Unsupported, match=message):
        ac.jvp(rnn, (x, W, h0), (x, W, h0))
