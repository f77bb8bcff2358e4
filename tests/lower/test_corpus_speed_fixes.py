"""Corpus kernels that ran below NumPy (issue 10, "Measure"): the causes, as behaviour.

- A static loop whose trips call BLAS/LAPACK (or another op that fuses with nothing) is a loop
  region, not one copy of its kernels per trip (power iteration: 51 kernels before), so it runs
  as one structured numba function.
- A returned ``reshape`` of a fresh C-ordered result (``np.maximum(out, 0).reshape(...)``) no
  longer stops the structured lowering, nor keeps what it views out of kernels: a view and a
  copy hold the same values, flags and sharing there. What stays different is ``.base``:
  NumPy's is the reshaped array, an array a structured numba function returns has numba's
  ``MemInfo`` (true of every array it returns).
  Where the view could be observed (another returned value shares it, a later write, a
  non-C-ordered operand) the graph keeps NumPy's reshape.

Each compiled call is compared with the plain call; sizes are tiny, compiled functions shared.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from benchmarks.scientific.cnn import conv2d_offsets
from benchmarks.scientific.linalg import power_iteration


def _regions(graph) -> list:
    return [node for node in graph.nodes if node.op == "region"]


def _code(compiled) -> str:
    return compiled.entries[-1].output_code


# -- loops stay loops ----------------------------------------------------------------------------


# power_iteration: the corpus kernel itself (benchmarks/scientific/linalg.py)


def implicit_heat(u0, dt, steps):
    n = u0.shape[0]
    lap = -2.0 * np.eye(n) + np.eye(n, k=1) + np.eye(n, k=-1)
    M = np.eye(n) - dt * lap
    u = u0.copy()
    for _ in range(steps):
        u = np.linalg.solve(M, u)
    return u


def _spd(n: int) -> np.ndarray:
    a = np.random.default_rng(n).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.fixture(scope="module")
def power():
    return ac.compile(power_iteration, backend="numba")


@pytest.mark.parametrize("iters", [30, 5, 0])
def test_power_iteration_is_one_loop_not_copies(power, iters):
    A, v0 = _spd(6), np.random.default_rng(1).random(6) + 0.1
    lam, v = power(A, v0, iters)
    want_lam, want_v = power_iteration(A, v0, iters)
    assert type(lam) is type(want_lam)
    np.testing.assert_allclose(lam, want_lam, rtol=1e-12)
    np.testing.assert_allclose(v, want_v, rtol=1e-12)
    assert v.dtype == want_v.dtype and v.shape == want_v.shape
    if iters == 0:  # no trip: nothing to loop over
        return
    code = _code(power)
    assert "one structured numba function" in code
    assert code.count("for i in range") == 1  # one loop, not 30 (or 51) unrolled copies
    serial = [line for line in code.splitlines()
              if line.startswith("def kernel_") and "_parallel(" not in line]
    assert len(serial) <= 2  # v0 / norm before the loop, w / norm in it


def test_loop_of_solves_is_a_region():
    """(On numba the region is a structured function calling numba's LAPACK: the corpus test
    runs it; numba compiles its ``linalg.solve`` for seconds, too long for this file.)"""
    u0 = np.random.default_rng(2).random(7)
    compiled = ac.compile(implicit_heat, backend="eager")
    np.testing.assert_allclose(compiled(u0, 0.1, 10), implicit_heat(u0, 0.1, 10), rtol=1e-12)
    [region] = _regions(compiled.entries[0].graph)
    assert region.target == "for_range"


# -- a returned reshape of a fresh array ---------------------------------------------------------


# conv2d_offsets: the corpus kernel itself (benchmarks/scientific/cnn.py)


def _conv_inputs(n: int) -> tuple:
    rng = np.random.default_rng(n)
    return (rng.standard_normal((2, n, n)), rng.standard_normal((3, 2, 3, 3)),
            rng.standard_normal(3))


@pytest.fixture(scope="module")
def conv():
    return ac.compile(conv2d_offsets, backend="numba")


def _same_array(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.dtype == want.dtype and got.shape == want.shape
    for flag in ("c_contiguous", "f_contiguous", "owndata", "writeable"):
        assert getattr(got.flags, flag) == getattr(want.flags, flag), flag


@pytest.mark.parametrize("n", [6, 8])
def test_conv2d_offsets_lowers_and_matches(conv, n):
    args = _conv_inputs(n)
    got, want = conv(*args), conv2d_offsets(*args)
    _same_array(got, want)
    assert isinstance(want.base, np.ndarray)  # NumPy: a view of the maximum's result
    assert got.base is not None  # compiled: a view too, of numba's memory (not an ndarray)
    assert "one structured numba function" in _code(conv)
    code = conv.entries[0].output_code  # the first size's (static shapes) entry
    # out + b[:, None] and the maximum: one kernel, though the loop writes `out` and the result
    # is reshaped (NumPy's layout of the maximum is C, as the kernel's buffer)
    assert any("Nodes:" in line and "add" in line and "maximum" in line
               for line in code.splitlines())


def _shared_reshape(x, n):
    y = np.zeros((4, 6))
    for i in range(n):
        y = y + x[i]
    z = np.maximum(y, 0.0)
    return z, z.reshape(24)  # two results share memory: a copy would be observable


def _written_after(x, n):
    y = np.maximum(x * 2.0, 0.0)
    r = y.reshape(24)
    for i in range(n):
        y[i % 4, :] += 1.0  # NumPy's r is a view: it sees these writes
    return r


def _transposed(x, n):
    y = x * 1.0
    for i in range(n):
        y = y + 1.0
    return (y.T * 2.0).reshape(24)  # K order: Fortran-ordered like y.T, NumPy's reshape copies


@pytest.mark.parametrize("fn", [_shared_reshape, _written_after, _transposed])
def test_observable_reshape_keeps_numpy_semantics(fn):
    x = np.random.default_rng(4).standard_normal((70, 4, 6)) if fn is _shared_reshape else \
        np.random.default_rng(4).standard_normal((4, 6))
    compiled = ac.compile(fn, backend="numba")
    got, want = compiled(x, 70), fn(x.copy(), 70)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same_array(g, w)
        assert np.shares_memory(*got) == np.shares_memory(*want)
        got[0][0, 0] = 123.0
        assert got[1][0] == 123.0  # the caller sees the sharing NumPy gives
    else:
        _same_array(got, want)


def _written_then_reshaped(x):
    y = np.zeros((4, 6))
    y[1:3] = x[1:3]  # the graph writes a computed array: layout-dependent views are hazards
    z = np.maximum(y, 0.0) * 2.0  # C-ordered in NumPy whatever x is: a kernel may compute it
    t = y.T * 2.0  # Fortran-ordered in NumPy: stays a NumPy step
    return z.reshape(24), t.reshape(24), y


@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape_of_written_graph_keeps_numpy_layouts(order):
    compiled = ac.compile(_written_then_reshaped, backend="numba")
    x = np.asarray(np.random.default_rng(5).standard_normal((4, 6)), order=order)
    got, want = compiled(x), _written_then_reshaped(x)
    for g, w in zip(got, want):
        _same_array(g, w)
    assert np.shares_memory(got[1], got[2]) == np.shares_memory(want[1], want[2])
