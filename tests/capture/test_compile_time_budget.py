"""Compile-time budget of loop kernels: structural facts, never timings.

A short static loop (``for`` over a short range, ``while`` on Python values) around another loop
is one loop region (unrolling it only copies the inner loop into the code numba compiles); the
unroll budget counts the ops inside regions; the inlined bounds check defines each variable once
(numba's SSA pass costs twice-defined variables x blocks).
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.capture.runtime.api import unrolled_size
from astcompiler.lower.numba.bounds import INDEX_HELPERS


def _regions(graph) -> list:
    return [node for node in graph.nodes if node.op == "region"]


def _sweeps(x, steps):
    for _ in range(steps):  # static and short: unrolled before, a loop region now
        for i in range(1, x.shape[0]):  # 100 iterations: a loop region
            x[i] = x[i] + 0.5 * x[i - 1]
    return x


def test_static_loop_around_loop_region_stays_one_region():
    x = np.linspace(0.0, 1.0, 100)
    compiled = ac.compile(_sweeps, backend="eager")
    expected = _sweeps(x.copy(), 3)
    got = compiled(x.copy(), 3)
    np.testing.assert_array_equal(got, expected)
    [outer] = _regions(compiled.entries[0].graph)
    assert outer.target == "for_range"
    [inner] = _regions(outer.info.subgraphs["body"])
    assert inner.target == "for_range"


def test_single_iteration_loop_is_still_unrolled():
    x = np.linspace(0.0, 1.0, 100)
    compiled = ac.compile(_sweeps, backend="eager")
    np.testing.assert_array_equal(compiled(x.copy(), 1), _sweeps(x.copy(), 1))
    [only] = _regions(compiled.entries[0].graph)  # the inner loop, directly at top level
    assert only.target == "for_range"
    assert not _regions(only.info.subgraphs["body"])


def _blocks(x, flag):
    out = np.zeros(x.shape[0])
    for b in range(2):
        if flag[b] > 0:  # a branch region on data: its ops count against the unroll budget
            out = out + x * b
    return out


def test_unrolled_size_counts_region_bodies():
    compiled = ac.compile(_blocks, backend="eager")
    x, flag = np.arange(80.0), np.array([1.0, 1.0])
    np.testing.assert_array_equal(compiled(x, flag), _blocks(x, flag))
    regions = _regions(compiled.entries[0].graph)
    assert [r.target for r in regions] == ["cond", "cond"]  # short, small: unrolled
    body_ops = sum(g.op_count() for g in regions[0].info.subgraphs.values())
    assert body_ops > 0
    assert unrolled_size(regions[:1]) == 1 + body_ops


def _doubling(x, n):
    s = 1
    while s < n:  # static test on Python ints; the body holds a loop: (after one) a region
        for i in range(x.shape[0]):
            x[i] += s
        s *= 2
    return x, s


@pytest.mark.parametrize("n", [1, 50])
def test_static_while_around_loop_is_a_while_region(n):
    compiled = ac.compile(_doubling, backend="eager")
    got, s = compiled(np.arange(100.0), n)
    want, t = _doubling(np.arange(100.0), n)
    np.testing.assert_array_equal(got, want)
    assert s == t and type(s) is type(t)
    kinds = [r.target for r in _regions(compiled.entries[0].graph)]
    # the first iteration is peeled (it settles the types), the rest is one while region
    assert kinds == ([] if n == 1 else ["for_range", "while_loop"])


def _appending(x):
    seen = []
    for t in range(3):
        for i in range(x.shape[0]):
            x[i] *= 2.0
        seen.append(len(seen))
    return x, seen


def _stacking(x):
    stack = []
    while len(stack) < 3:
        for i in range(x.shape[0]):
            x[i] *= 2.0
        stack.append(len(stack))
    return x, stack


@pytest.mark.parametrize("fn", [_appending, _stacking])
def test_loop_mutating_a_list_keeps_python_semantics(fn):
    compiled = ac.compile(fn, backend="eager")
    got, items = compiled(np.arange(100.0))
    want, expected = fn(np.arange(100.0))
    np.testing.assert_array_equal(got, want)
    assert items == expected


@pytest.mark.parametrize("steps", [2, 5])
def test_region_instead_of_unrolling_matches_numba(steps):
    x = np.linspace(-1.0, 1.0, 100)
    compiled = ac.compile(_sweeps)
    np.testing.assert_allclose(compiled(x.copy(), steps), _sweeps(x.copy(), steps), rtol=1e-12)
    assert len(compiled.entries) == 1
    assert "structured_kernel" in compiled.entries[0].output_code
    assert compiled.entries[0].output_code.count("for i in range") <= 2  # not one copy per step


def _ix_helper() -> ast.FunctionDef:
    tree = ast.parse(INDEX_HELPERS)
    [fn] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_ac_ix"]
    return fn


def test_inlined_index_check_defines_each_variable_once():
    fn = _ix_helper()
    assert not [n for n in ast.walk(fn) if isinstance(n, ast.IfExp)]
    stores = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    assert len(stores) == len(set(stores))


def _gather(x, idx):
    total = 0.0
    for k in range(idx.shape[0]):
        total += x[idx[k]]
    return total


@pytest.mark.parametrize("bad", [10, -11])
def test_checked_index_raises_numpy_error(bad):
    x = np.arange(10.0)
    idx = np.array([0, -1, 3, 9, -10] * 20, dtype=np.int64)
    compiled = ac.compile(_gather)
    assert compiled(x, idx) == _gather(x, idx)
    idx[50] = bad
    with pytest.raises(IndexError) as plain:
        _gather(x, idx)
    with pytest.raises(IndexError) as got:
        compiled(x, idx)
    assert str(got.value) == str(plain.value)


def _columns(T):
    out = np.zeros_like(T)
    for k in range(T.shape[2] - 2, -1, -1):  # 29 sweeps over 2-D levels (vertical diffusion)
        out[:, :, k] = T[:, :, k] * 2.0 - out[:, :, k + 1]
    return out


def _vectors(v, A):
    for _ in range(20):  # a matmul per trip fuses with nothing: a loop region, not 20 copies
        v = A @ v
        v = v / np.abs(v).max()
    return v


def test_loop_of_matmul_steps_is_a_region():
    rng = np.random.default_rng(0)
    v, A = rng.standard_normal(5), rng.standard_normal((5, 5))
    compiled = ac.compile(_vectors, backend="eager")
    np.testing.assert_allclose(compiled(v, A), _vectors(v, A), rtol=1e-12)
    [region] = _regions(compiled.entries[0].graph)
    assert region.target == "for_range"


def _pointwise_steps(v):
    for _ in range(20):  # vector ops weigh one each: unrolled, the chain fuses across trips
        v = v * 0.5 + 1.0
    return v


def test_loop_of_pointwise_vector_ops_is_unrolled():
    v = np.random.default_rng(0).standard_normal(5)
    compiled = ac.compile(_pointwise_steps, backend="eager")
    np.testing.assert_array_equal(compiled(v), _pointwise_steps(v))
    assert not _regions(compiled.entries[0].graph)


def test_loop_of_array_ops_is_a_region_not_copies():
    T = np.random.default_rng(0).standard_normal((3, 4, 30))
    compiled = ac.compile(_columns, backend="eager")
    np.testing.assert_array_equal(compiled(T), _columns(T))
    [region] = _regions(compiled.entries[0].graph)
    assert region.target == "for_range"


def _strided(x, n):
    total = 0.0
    step = 1
    while step < n:  # a while region: `step` is a run-time int inside it
        for i in range(0, x.shape[0], step):
            total += x[i]
        for i in range(x.shape[0] - 1, -1, -step):
            total -= 0.5 * x[i]
        step *= 3
    return total


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_range_with_a_run_time_step(backend):
    x = np.random.default_rng(1).standard_normal(50)
    compiled = ac.compile(_strided, backend=backend)
    for n in (40, 41, 90):
        assert compiled(x, n) == pytest.approx(_strided(x, n), rel=1e-12, abs=1e-12)
    for entry in compiled.entries:  # (n is guarded: a recompile for the second value)
        assert not entry.is_eager
        assert [r.target for r in _regions(entry.graph)][-1] == "while_loop"
