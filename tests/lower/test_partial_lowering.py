"""numba backend: partial lowering. A region that is not one structured numba function runs as a
host loop in the wrapper around fused kernels; a region that lowers on its own is a structured
piece; a graph of which nothing compiles runs the user's function. Never op by op for the graph."""

from __future__ import annotations

import re

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.eager import interpret
from astcompiler.lower.numba import numba_backend

from numba_helpers import GraphBuilder, assert_same


@pytest.fixture(autouse=True)
def _no_blas_in_loop_kernels(monkeypatch):
    """These tests need an op that loop kernels cannot hold: ``np.linalg.solve`` is one when
    numba has no SciPy LAPACK (with SciPy it lowers into the kernel, see
    test_region_expressions.py)."""
    from astcompiler.lower.numba import region_ops
    monkeypatch.setattr(region_ops, "_SCIPY", False)


def _same(got, want):
    """Values (within float rounding), dtypes and Python types, through tuples."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert_same(got, want)


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _check(fn, calls, backend="numba"):
    """Compiled == plain for each argument tuple (results and inputs after the call)."""
    compiled = ac.compile(fn, backend=backend)
    for args in calls:
        mine, theirs = _copies(args), _copies(args)
        _same(compiled(*mine), fn(*theirs))
        for a, b in zip(mine, theirs):
            if isinstance(a, np.ndarray):
                assert_same(a, b)
    return compiled


def _entries_like_eager(fn, calls, compiled):
    eager = ac.compile(fn, backend="eager")
    for args in calls:
        eager(*_copies(args))
    assert len(compiled.entries) == len(eager.entries)


def _code(compiled) -> str:
    (entry,) = compiled.entries
    assert entry.graph is not None
    return entry.output_code


def _host_loop_for(code: str, op: str) -> bool:
    """The summary names a host loop because of ``op``."""
    header = code.split('"""')[0]
    return any("a host loop in this wrapper (no loop lowering for" in line and op in line
               for line in header.splitlines())


def solve_steps(A, b, x, n):
    for i in range(n):
        y = np.linalg.solve(A, b + x)
        x = np.tanh(x * 0.5 + np.sin(y) * 2.0) - x * 0.1
    return x


def _system(size=6):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((size, size)) + size * np.eye(size)
    return A, rng.standard_normal(size), rng.standard_normal(size)


def test_a_loop_with_an_extern_op_is_a_host_loop_around_kernels():
    A, b, x = _system()
    calls = [(A, b, x, 40), (A, b, x * 2.0, 40)]
    compiled = _check(solve_steps, calls)
    code = _code(compiled)
    assert _host_loop_for(code, "linalg_solve")
    assert "for i in range(" in code and "_body(i, " in code
    assert "kernel_" in code and "(op_linalg_solve, " in code  # at the user's line (warnings)
    assert "op by op" not in code
    _entries_like_eager(solve_steps, calls, compiled)


def solve_accumulate(A, u, out, n):
    for t in range(n):
        r = np.linalg.solve(A, u)
        u = np.tanh(u * 0.9 + r * 0.1) + 0.01
        out[t % out.shape[0]] += u.sum()
    return u


def test_a_host_loop_body_writes_to_an_input_exactly():
    A, u, _ = _system(5)
    out = np.zeros(4)
    compiled = _check(solve_accumulate, [(A, u, out, 30), (A, u * 0.5, out + 1.0, 30)])
    code = _code(compiled)
    assert "host loop" in code and "kernel_" in code and "op by op" not in code


def nested(A, a, n, m):
    total = np.zeros(a.shape[0])
    for i in range(n):
        for j in range(m):
            row = np.linalg.solve(A, a) * (i + 1)
            total = total + np.sqrt(row * row + j)
        a = a * 0.99 + 0.01
    return total, a


def test_nested_loops_lower_recursively():
    A, a, _ = _system(4)
    compiled = _check(nested, [(A, a, 70, 70), (A, a + 1.0, 70, 70)])
    code = _code(compiled)
    header = code.split('"""')[0]
    lines = [line for line in header.splitlines() if "a host loop in this wrapper" in line]
    assert len(lines) == 2 and lines[1].startswith("#" + " " * 7)  # outer loop, inner loop
    assert "(op_linalg_solve, " in code and "kernel_" in code and "op by op" not in code


def shrink(A, x, limit):
    steps = 0
    while np.abs(x).max() > limit:
        x = np.linalg.solve(A, x) * 0.5 + 0.001
        steps = steps + 1
    return x, steps


def test_while_loop_host_loop():
    A, x, _ = _system(5)
    compiled = _check(shrink, [(A, x * 40.0, 0.01), (A, x * 300.0, 0.01)])
    code = _code(compiled)
    assert "while " in code and "host loop" in code and "op by op" not in code


def first_big(A, a, b, limit, n):
    acc = np.zeros_like(a)
    for i in range(n):
        acc = acc + np.abs(np.linalg.solve(A, a)) * b
        if acc[0] > limit[0]:
            break
    return acc, i


def test_break_in_a_host_loop():
    A, a, _ = _system(8)
    b = np.full(8, 0.5)
    step = np.abs(np.linalg.solve(A, a))[0] * 0.5
    limits = [np.array([t]) for t in (step * 10.5, 1e9, -1.0)]
    compiled = _check(first_big, [(A, a, b, t, 100) for t in limits])
    code = _code(compiled)
    assert "host loop" in code and "break" in code and "op by op" not in code


def two_loops(A, x, n):
    s = 0.0
    for i in range(n):  # lowers on its own: a structured piece
        s = s + x[i % x.shape[0]] * 2.0
    y = x
    for i in range(n):  # linalg.solve has no loop lowering: a host loop
        y = np.linalg.solve(A, y) * 0.5 + s
    return y


def test_a_region_that_lowers_alone_beside_one_that_does_not():
    A, x, _ = _system(5)
    compiled = _check(two_loops, [(A, x, 100), (A, x + 1.0, 100)])
    code = _code(compiled)
    assert "one structured numba function (for_range_structured)" in code
    assert _host_loop_for(code, "linalg_solve")
    assert "op by op" not in code


def branchy(A, x, y):
    if x.sum() > 0:
        z = np.linalg.solve(A, x) * y + 1.0
    else:
        z = x * y - 1.0
    return z


def test_data_dependent_branch_as_host_if():
    A, x, y = _system(6)
    compiled = _check(branchy, [(A, np.abs(x), y), (A, -np.abs(x), y)])
    code = _code(compiled)
    assert "cond at test_partial_lowering.py:" in code and "a host `if` in this wrapper" in code
    assert "else:" in code and "op by op" not in code


def only_solves(A, x, n):
    for i in range(n):
        x = np.linalg.solve(A, x)
    return x


def test_nothing_compiles_the_original_function_runs():
    A, _, x = _system(4)
    compiled = _check(only_solves, [(A, x, 40), (A * 2.0, x, 40)])
    code = _code(compiled)
    assert code.startswith("# the original function runs")
    (entry,) = compiled.entries
    assert entry.run is only_solves


def reshape_written(x, y):
    a = x.T * 2.0  # NumPy: Fortran-ordered
    v = a.reshape(-1)  # so this is a copy in NumPy ...
    v[0] = 100.0  # ... and this write does not reach `a`
    z = np.sin(y) + y * 3.0  # unrelated pointwise work still fuses
    return a, v, z


def test_layout_hazard_is_local():
    x = np.arange(12.0).reshape(3, 4)
    y = np.linspace(0.0, 1.0, 6)
    compiled = _check(reshape_written, [(x, y), (x + 1.0, y)])
    code = _code(compiled)
    assert "kernel_" in code and "op by op" not in code


def test_partial_lowering_is_exact_on_the_eager_backends_too():
    """The same functions on aot_eager (the reference) give what plain calls give."""
    A, b, x = _system()
    _check(solve_steps, [(A, b, x, 40)], backend="aot_eager")
    _check(two_loops, [(A[:5, :5], x[:5], 100)], backend="aot_eager")


def test_host_loop_over_a_dynamic_range_including_empty_and_single_iterations():
    A, b, x = _system()
    compiled = ac.compile(solve_steps, backend="numba")
    for count in (40, 0, 1, 100, 0):
        _same(compiled(A, b, x.copy(), count), solve_steps(A, b, x.copy(), count))
    codes = [e.output_code for e in compiled.entries]
    assert any("for i in range(0, n, 1):" in code and _host_loop_for(code, "linalg_solve")
               for code in codes)


BAD = '    _ac_bad = "text" + 1  # injected: numba cannot type str + int\n'


@pytest.fixture
def break_kernel(monkeypatch):
    """Make numba fail to type the kernels whose module name starts with one of ``prefixes``."""
    from astcompiler.lower.numba import files as numba_files
    prefixes: list[str] = []
    load = numba_files.load_source

    def load_broken(prefix: str, source: str):
        if any(prefix.startswith(p) for p in prefixes):
            source = re.sub(r"(def (?:kernel_\w+|structured_kernel)\(.*\):\n)", r"\1" + BAD,
                            source)
        return load(prefix, source)

    monkeypatch.setattr(numba_files, "load_source", load_broken)
    return prefixes


def _two_kernel_graph():
    x = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    first = b("multiply", X, 2.0)
    second = b("add", b("sum", X, axis=1, keepdims=True), first)
    return b.output(first, second), x


def test_a_kernel_numba_cannot_compile_runs_with_numpy_and_the_others_stay(break_kernel, caplog):
    import logging
    import numba
    break_kernel.append("kernel_1")
    graph, x = _two_kernel_graph()
    compiled = numba_backend(graph, [x])
    with caplog.at_level(logging.INFO, logger="astcompiler.graph_breaks"):
        with pytest.warns(RuntimeWarning, match="could not compile kernel_1.*its nodes run with"):
            _same(compiled(x), interpret(graph, (x,)))
        for _ in range(2):
            _same(compiled(x + 1.0), interpret(graph, (x + 1.0,)))
    records = [r for r in caplog.records if "could not compile" in r.getMessage()]
    assert len(records) == 1
    namespace = compiled.fn.__globals__
    kernels = {k: v for k, v in namespace.items() if k.startswith("kernel_")}
    assert len(kernels) == 4  # two kernels and their prange twins
    for name, value in kernels.items():
        if name.startswith("kernel_0"):
            assert isinstance(value, numba.core.dispatcher.Dispatcher)
        else:
            assert value.__name__ == name.removesuffix("_parallel") + "_numpy"


def body_kernels(A, x, n):
    for i in range(n):
        y = np.linalg.solve(A, x)
        x = np.tanh(y) * 0.5 + x * 0.25
    return x


def test_a_kernel_failing_inside_a_host_loop_stays_local(break_kernel):
    break_kernel.append("kernel_0")
    A, x, _ = _system(5)
    compiled = ac.compile(body_kernels, backend="numba")
    with pytest.warns(RuntimeWarning, match="could not compile kernel_0"):
        _same(compiled(A, x, 100), body_kernels(A, x, 100))
    _same(compiled(A, x * 2.0, 100), body_kernels(A, x * 2.0, 100))


def running_total(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i % x.shape[0]] * 2.0
    return total


def test_a_structured_function_numba_cannot_compile_runs_piece_by_piece(break_kernel,
                                                                         monkeypatch):
    from astcompiler.lower import eager

    def no_interpreter(*args, **kwargs):
        raise AssertionError("the graph must not run op by op")

    break_kernel.append("structured")
    x = np.linspace(0.0, 1.0, 7)
    compiled = ac.compile(running_total, backend="numba")
    monkeypatch.setattr(eager, "interpret", no_interpreter)
    with pytest.warns(RuntimeWarning, match="could not compile the structured .*piece by piece"):
        _same(compiled(x, 100), running_total(x, 100))
    _same(compiled(x * 3.0, 100), running_total(x * 3.0, 100))
    assert "one structured numba function" in _code(compiled)


def test_a_structured_piece_numba_cannot_compile_becomes_a_host_loop(break_kernel, monkeypatch):
    from astcompiler.lower import eager

    def no_interpreter(*args, **kwargs):
        raise AssertionError("the region must not run op by op")

    break_kernel.append("structured")
    A, x, _ = _system(5)
    compiled = ac.compile(two_loops, backend="numba")
    monkeypatch.setattr(eager, "interpret", no_interpreter)
    with pytest.warns(RuntimeWarning, match="could not compile the structured .*piece by piece"):
        _same(compiled(A, x, 100), two_loops(A, x, 100))
    _same(compiled(A, x + 1.0, 100), two_loops(A, x + 1.0, 100))
