"""Variables an ``if`` on array data leaves that nothing reads: not carried out of the branch.

A loop nested in a data-dependent branch (also the guard the rewrite puts after a
``continue``) binds its index in one branch only; Python leaves it unbound on the other side,
and a compiled branch could not carry it. Nothing reads it after the ``if``, so the region
carries nothing for it (``rewrite/liveness.Liveness.dead_after_if``). A variable that is read
later is still carried, and an unbound one still breaks the graph (the function stays right).
"""

from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest

import astcompiler as ac
from astcompiler.rewrite.structured import RewriteStructuredControlFlow
from tests.helpers import counted, outcome

RNG = np.random.default_rng(11)
X = RNG.standard_normal((70, 70))


def convert(code: str) -> str:
    return cst.parse_module(textwrap.dedent(code)).visit(RewriteStructuredControlFlow()).code


def if_call(source: str) -> str:
    return next(line.strip() for line in convert(source).splitlines()
                if "__ac.if_stmt(x[i] > 0" in line)


# ----- rewrite: which names the `if` leaves dead ------------------------------------------------
def test_an_inner_loop_index_is_dead_after_the_branch():
    call = if_call("""\
        def f(x, y, n):
            s = 0.0
            for i in range(n):
                if x[i] > 0:
                    for j in range(n):
                        s += y[j]
            return s
        """)
    assert call.endswith("('j', 's'), dead=('j',))")


def test_a_name_read_after_the_branch_or_by_the_loop_bounds_stays_live():
    after = if_call("""\
        def f(x, n):
            for i in range(n):
                if x[i] > 0:
                    for j in range(n):
                        pass
            return j
        """)
    bounds = if_call("""\
        def f(x, n):
            j = 1
            for i in range(n):
                if x[i] > 0:
                    for j in range(j, n):
                        x[j] = 0
        """)
    orelse = if_call("""\
        def f(x, n):
            for i in range(n):
                if x[i] > 0:
                    for j in range(n):
                        x[j] = 0
                    else:
                        x[j] = 1
        """)
    assert "dead=" not in after and "dead=" not in bounds and "dead=" not in orelse


def test_an_unread_name_is_dead_but_a_nested_function_counts_as_a_read():
    unread = if_call("""\
        def f(x, n):
            for i in range(n):
                if x[i] > 0:
                    t = x[i]
        """)
    closure = if_call("""\
        def f(x, n):
            for i in range(n):
                if x[i] > 0:
                    t = x[i]
            return lambda: t
        """)
    assert unread.endswith("('t',), dead=('t',))") and "dead=" not in closure


# ----- capture: one region, the plain call's results ---------------------------------------------
def continue_at_both_levels(X):
    s = 0.0
    for i in range(X.shape[0]):
        if i % 3 == 0:
            continue
        for j in range(i, X.shape[1]):
            if X[i, j] < 0:
                continue
            s += X[i, j]
    return s


def inner_loop_in_a_data_branch(X):
    total = 0.0
    for i in range(X.shape[0]):
        if X[i, 0] > 0:
            for j in range(X.shape[1]):
                total += X[i, j] * j
    return total


def unread_value_of_two_types(X):
    count = 0
    for i in range(X.shape[0]):
        if X[i, 1] > 0:
            scratch = 1
            count += 1
        else:
            scratch = 1.5
    return count


def index_read_after_the_loop(X):
    for i in range(X.shape[0]):
        if X[i, 2] > 5:
            for j in range(3):
                X[i, j] = 0.0
    return X.sum()


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("fn", [continue_at_both_levels, inner_loop_in_a_data_branch,
                                unread_value_of_two_types], ids=lambda f: f.__name__)
def test_one_graph_with_the_outer_loop_as_one_region(fn, backend):
    counter, counting = counted(backend)
    compiled = ac.compile(fn, backend=counting, fullgraph=True)
    for data in (X, -X, X[:, ::-1].copy()):
        expected = outcome(fn, (data.copy(),))
        got = outcome(compiled, (data.copy(),))
        assert got == expected and type(got[0]) is type(expected[0])
    assert counter.frame_count == 1
    graph = counter.graphs[0]
    regions = [n for n in graph.nodes if n.op == "region"]
    assert len(regions) == 1, graph  # the outer loop, not 70 unrolled inner loops


def test_a_loop_index_left_unbound_by_a_branch_is_never_read_unbound():
    # `j` is read after the outer loop's last branch only when that branch ran: a real use,
    # Python raises UnboundLocalError when no branch ran; the compiled call does the same
    def last_index(X):
        for i in range(X.shape[0]):
            if X[i, 0] > 0:
                for j in range(4):
                    X[i, j] += 1.0
        return j

    for data in (X, -np.abs(X)):
        assert outcome(ac.compile(last_index), (data.copy(),)) == outcome(last_index, (data.copy(),))


def test_a_short_static_inner_loop_under_a_data_branch():
    compiled = ac.compile(index_read_after_the_loop)
    for data in (X * 10, X):
        assert outcome(compiled, (data.copy(),)) == outcome(index_read_after_the_loop, (data.copy(),))
