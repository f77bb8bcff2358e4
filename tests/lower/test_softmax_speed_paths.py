"""Row max/min with the vector lanes in registers (``lane_loops.py``, issue 11 softmax).

The intrinsics run the whole blocks of a float max/min row reduction's 64 lanes in vector
registers; the accumulators must end exactly as the array lane loop (``cpu.py``) leaves them, so
compiled row max/min stay NumPy's values (NaN, signed zeros, infinities, tails), on unit-stride
rows and on strided ones (which keep the array loop).
"""

from __future__ import annotations

import io

import numba
import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.lane_loops import LANES, lanes_max, lanes_min

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@numba.njit(cache=False)
def _run_max(row, lo, hi, acc, nan):
    return lanes_max(row, lo, hi, acc, nan)


@numba.njit(cache=False)
def _run_min(row, lo, hi, acc, nan):
    return lanes_min(row, lo, hi, acc, nan)


def _reference(row, lo, hi, acc, nan, take):
    """The array lane loop, in Python: lane ``u`` takes ``row[lo + 64*k + u]``."""
    end = lo + max(hi - lo, 0) // LANES * LANES
    for b in range(lo, end, LANES):
        for u in range(LANES):
            v = row[b + u]
            acc[u] = v if take(v, acc[u]) else acc[u]
            nan[u] = nan[u] | (v != v)
    return end


def _row(dtype, n=3 * LANES + 21, seed=0):
    rng = np.random.default_rng(seed)
    row = rng.uniform(-3, 3, n).astype(dtype)
    row[[5, 70, 150]] = [np.nan, -0.0, np.inf]
    row[[6, 71]] = [0.0, -np.inf]
    return row


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lo, hi", [(0, 3 * LANES + 21), (7, 3 * LANES + 21), (0, LANES - 1),
                                    (10, 5)])
def test_intrinsics_match_the_array_lane_loop(dtype, lo, hi):
    row = _row(dtype)
    for run, take, init in ((_run_max, lambda v, a: v >= a, -np.inf),
                            (_run_min, lambda v, a: v <= a, np.inf)):
        acc = np.full(LANES, init, dtype)
        acc[3] = -0.0
        nan = np.zeros(LANES, np.bool_)
        nan[9] = True
        acc_ref, nan_ref = acc.copy(), nan.copy()
        end = run(row, lo, hi, acc, nan)
        assert end == _reference(row, lo, hi, acc_ref, nan_ref, take)
        assert acc.tobytes() == acc_ref.tobytes()  # bits: signed zeros too
        assert np.array_equal(nan, nan_ref)


def row_extremes(x):
    return x.max(axis=1), x.min(axis=-1)


def softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def compiled():
    return ac.compile(row_extremes), ac.compile(softmax)


def _rows(dtype):
    x = np.stack([_row(dtype, 5 * LANES + 21, seed=s) for s in range(4)])  # ::2: long rows too
    x[1, :] = np.abs(x[1]) * 0.0  # all zeros with signs: which zero wins is NumPy's
    x[1, ::3] = -0.0
    x[2, 5] = 1.0  # no NaN in this row
    x[3, :] = -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_max_min_are_numpys(compiled, dtype):
    fn, _ = compiled
    x = _rows(dtype)
    for arg in (x, x[:, ::2]):  # unit stride (registers) and strided (array lanes)
        got, want = fn(arg), row_extremes(arg)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes()


def test_softmax_rows(compiled):
    _, fn = compiled
    x = np.random.default_rng(3).uniform(-4, 4, (5, 3 * LANES + 9)).astype(np.float32)
    x[2, 17] = np.nan
    got, want = fn(x), softmax(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.allclose(got[ok], want[ok], rtol=4 * np.finfo(np.float32).eps, atol=0)
    text = io.StringIO()
    ac.show(fn, file=text)
    assert "lanes_max(" in text.getvalue()  # the row max ran in registers


# -- sin/cos in blocks: the Cody-Waite fast variant, the block again past 2**15 -------------------

def trig_chain(x, y):
    return np.exp(np.sin(x)) * np.sqrt(np.abs(y)) + np.cos(y)


def sin_in_place(x):
    np.sin(x, out=x)
    return x


@pytest.fixture(scope="module")
def trig():
    with ac.config.patch(vector_math_min_elements=0, fast_trig_blocks=True):
        yield ac.compile(trig_chain), ac.compile(sin_in_place)


def _trig_inputs(n=64 * 5 + 13):
    rng = np.random.default_rng(7)
    return rng.uniform(-3, 3, n), rng.uniform(-40000, 40000, n)


def test_trig_blocks_match_numpy_and_do_not_depend_on_neighbours(trig):
    fn, _ = trig
    from astcompiler.lower.numba.vecmath.trig import FAST_BOUND
    x, y = _trig_inputs()
    y[np.abs(y) >= FAST_BOUND] = 1.0  # every block on the fast variant
    base = fn(x, y)
    ref = trig_chain(x.astype(np.longdouble), y.astype(np.longdouble))
    assert np.max(np.abs(base - ref) / np.spacing(np.abs(ref.astype(np.float64)))) <= 4
    x2, y2 = x.copy(), y.copy()
    x2[70], y2[200] = 1e300, -4e10  # blocks 1 and 3 run again with the full reduction
    x2[-1] = 5e5  # the tail
    got, want = fn(x2, y2), trig_chain(x2, y2)
    keep = np.ones(x.size, bool)
    keep[[70, 200, x.size - 1]] = False
    assert np.array_equal(got[keep], base[keep])  # same bits, rerun block or not
    assert np.allclose(got, want, rtol=1e-15, atol=0)
    text = io.StringIO()
    ac.show(fn, file=text)
    assert "vm_sin_fast_float64(" in text.getvalue() and "vm_cos_fast_float64(" in text.getvalue()


def test_trig_blocks_special_values_and_warnings(trig):
    fn, _ = trig
    x, y = _trig_inputs()
    x[[3, 100]] = [np.inf, np.nan]
    y[[5, 150]] = [-np.inf, -0.0]
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as plain:
            trig_chain(x, y)
        with pytest.raises(FloatingPointError) as compiled:
            fn(x, y)
    assert str(compiled.value) == str(plain.value)
    with np.errstate(all="ignore"):
        got, want = fn(x, y), trig_chain(x, y)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.allclose(got[ok], want[ok], rtol=1e-15, atol=0)


def test_sin_in_place_with_big_arguments(trig):
    _, fn = trig
    x, _ = _trig_inputs()
    x[[10, 300]] = [1e22, 40000.0]
    got, want = fn(x.copy()), sin_in_place(x.copy())
    assert np.allclose(got, want, rtol=1e-15, atol=0)
    text = io.StringIO()
    ac.show(fn, file=text)
    assert "_fast_" not in text.getvalue()  # the output is the input: no block runs twice
