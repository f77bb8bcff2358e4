"""Loops and branches as structured regions: results, one compile, small graphs."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter
from tests.helpers import assert_same, clone
from tests.kernels import loop_kernels as k

RNG = np.random.default_rng(7)
SPD = RNG.standard_normal((70, 70))
SPD = SPD @ SPD.T + 70 * np.eye(70)

CASES = [
    (k.triangular_solve, (np.linalg.cholesky(SPD), RNG.standard_normal(70))),
    (k.cholesky, (SPD,)),
    (k.heat_stencil, (np.linspace(0.0, 1.0, 90) ** 2, 100)),
    (k.reverse_sweep, (RNG.standard_normal(100), 0.3)),
    (k.checksum, (RNG.integers(0, 256, 200).astype(np.uint8),)),
    (k.escape_time, (RNG.standard_normal(90) + 1j * RNG.standard_normal(90), 40)),
    (k.shortest_paths, (RNG.random((70, 70)),)),
    (k.overlapping_shift, (np.arange(10.0),)),
    (k.signed_sum, (RNG.standard_normal(100),)),
    (k.first_negative, (np.concatenate([np.ones(80), -np.ones(3)]),)),
    (k.first_negative, (np.ones(80),)),
    (k.skip_and_stop, (RNG.standard_normal(100), 5.0)),
    (k.flip_update, (np.arange(10.0), 0.5)),
    (k.branch_on_sum, (RNG.standard_normal(6),)),
    (k.branch_on_sum, (-np.ones(6),)),
]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
@pytest.mark.parametrize("fn, args", CASES, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_kernel_matches_eager_in_one_small_graph(fn, args, backend):
    expected = fn(*[clone(a) for a in args])
    counter = CompileCounter()

    def counting_backend(graph, inputs):
        from astcompiler.lower import lookup_backend
        counter(graph, inputs)
        return lookup_backend(backend)(graph, inputs)

    compiled = ac.compile(fn, backend=counting_backend, fullgraph=True)
    inputs = [clone(a) for a in args]
    assert_same(compiled(*inputs), expected)
    assert counter.frame_count == 1
    assert counter.op_count < 80, counter.graphs[0]
    assert_same(compiled(*[clone(a) for a in args]), expected)  # cached call
    assert counter.frame_count == 1
    graph = compiled.entries[0].graph
    if backend == "numba" and any(n.op == "region" for n in graph.nodes):
        assert "structured_kernel" in compiled.entries[0].output_code  # real loops, one njit


def test_graph_code_shows_nested_regions():
    compiled = ac.compile(k.triangular_solve, backend="eager")
    compiled(np.eye(70), np.ones(70))
    code = compiled.entries[0].graph_code
    assert code.count("region.for_range(") == 2
    # the outer loop carries nothing: `i`, `j` and `s` are assigned before they are read in
    # each iteration and read by nothing after it (rewrite/liveness.py, `unused`)
    assert "carried=0" in code and "# carries: s\n" in code
    inner = [line for line in code.splitlines() if "L[i_1, i]" in line]
    assert inner and inner[0].startswith(" " * 16)  # indented inside two bodies


def test_short_static_loops_are_still_unrolled():
    def fn(x):
        for i in range(3):
            x = x + i
        return x
    compiled = ac.compile(fn, backend="eager")
    compiled(np.zeros(2))
    graph = compiled.entries[0].graph
    assert all(n.op != "region" for n in graph.nodes)


def test_python_counters_keep_python_types():
    def fn(x):
        count = 0
        for i in range(x.shape[0]):
            if x[i] > 0:
                count += 1
        return count
    compiled = ac.compile(fn, backend="eager", fullgraph=True)
    x = RNG.standard_normal(100)
    result = compiled(x)
    assert type(result) is int and result == int((x > 0).sum())


def test_branches_with_different_shapes_are_a_graph_break():
    def fn(x):
        if x.sum() > 0:
            y = x
        else:
            y = x[:2]
        return y
    with pytest.raises(ac.exc.Unsupported, match="changes shape"):
        ac.compile(fn, backend="eager", fullgraph=True)(np.ones(4))
    assert_same(ac.compile(fn, backend="eager")(-np.ones(4)), -np.ones(4)[:2])


@pytest.mark.parametrize("fn, make", [
    (k.triangular_solve, lambda n: (np.tril(RNG.random((n, n))) + n * np.eye(n), RNG.random(n))),
    (k.heat_stencil, lambda n: (RNG.random(n), 80)),
    (k.signed_sum, lambda n: (RNG.standard_normal(n),)),
])
def test_one_numba_entry_serves_every_size_with_mark_dynamic(fn, make):
    compiled = ac.compile(fn)  # numba
    for n in (70, 90, 130):
        args = make(n)
        expected = fn(*[clone(a) for a in args])
        for a in args:
            if isinstance(a, np.ndarray):
                ac.mark_dynamic(a, list(range(a.ndim)))  # markers follow the array object
        assert_same(compiled(*args), expected)
    assert len(compiled.entries) == 1
    assert "structured_kernel" in compiled.entries[0].output_code


def grow(x, n):
    p = 1
    for i in range(n):
        if x[i % x.shape[0]] > -10:
            p = p * 3
    return p


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_python_ints_keep_arbitrary_precision_in_compiled_loops(backend):
    compiled = ac.compile(grow, backend=backend)
    x = np.ones(4)
    for n in (100, 30):  # 3**100 does not fit in 64 bits: the loop falls back to Python ints
        result = compiled(x, n)
        assert type(result) is int and result == 3 ** n


def test_python_int_overflow_after_writing_inputs_is_an_error_not_a_wrong_answer():
    """The written inputs are saved (a graph with Python ints saves them whatever the FP
    modes): they are put back and the call reruns in Python, exact."""
    def grow_and_write(x, n):
        p = 1
        for i in range(n):
            x[i % x.shape[0]] = i
            p = p * 3
        return p

    compiled = ac.compile(grow_and_write)
    x, plain_x = np.ones(4), np.ones(4)
    assert compiled(x, 100) == grow_and_write(plain_x, 100) == 3 ** 100
    np.testing.assert_array_equal(x, plain_x)
    with np.errstate(all="ignore"):
        x, plain_x = np.ones(4), np.ones(4)
        assert compiled(x, 100) == grow_and_write(plain_x, 100)
        np.testing.assert_array_equal(x, plain_x)
    assert compiled(np.ones(4), 30) == 3 ** 30
