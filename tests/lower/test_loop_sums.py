"""Float sums inside structured loop code give NumPy's bits on every layout (issue 10, item 1).

A loop whose trip count varies is one structured numba function (``structured.py``). Its kernels'
float sums run with NumPy in an ``objmode`` step on layouts whose NumPy order they do not add
(``loop_numpy.py``, ``flat_sums.exact_sum_test``); float sums loop code writes as statements
(reordered axes, cast summands) always do, from NumPy's own temporaries. Compared bit for bit
with the plain call over changing inputs and trip counts (the first trip count traces a host
loop, the next ones run the structured function).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import assert_same_bits

pytestmark = pytest.mark.filterwarnings("ignore:astcompiler:RuntimeWarning")


def _data(rng, shape, complex_=False):
    """Values over 40 binades and a signed zero: sums whose order shows in the last bits."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)
    if x.size:
        x.flat[rng.integers(0, x.size)] = -0.0
    return x + 1j * _data(rng, shape) if complex_ else x


LAYOUTS = {"C": lambda x: x, "F": np.asfortranarray, "reversed": lambda x: x[..., ::-1],
           "broadcast": lambda x: np.broadcast_to(x[:1], x.shape),
           "Fstrided": lambda x: np.asfortranarray(x)[::2]}


def rows(x, n):
    total = np.zeros(x.shape[:-1])
    whole = 0.0
    for k in range(n):
        y = x * (k + 1)
        total = total + y.sum(axis=-1) + x.var(axis=-1)
        whole = whole + y.sum() + x.mean()
    return total, whole


def reordered(x, n):
    total = np.zeros(x.shape[1])
    for k in range(n):
        total = total + (x * k).sum(axis=(0, 2)) + x.sum(axis=(0, 2)) \
            + x.astype(np.float32).sum(dtype=np.float64)
    return total


def complex_sums(z, n):
    total = 0j
    for k in range(n):
        total = total + (z * k).sum() + z.sum(axis=-1)[0] + z.mean(axis=0)[1]
    return total


ROWS = ac.compile(rows, backend="numba")
REORDERED = ac.compile(reordered, backend="numba")
COMPLEX = ac.compile(complex_sums, backend="numba")


def _same_over_trips(compiled, fn, x):
    for n in (2, 5, 3):
        assert_same_bits(compiled(x, n), fn(x, n))


SLOW = pytest.mark.slow  # a structured compile per layout (5-30 s each under load)


@SLOW
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_row_and_whole_sums_in_a_loop(layout):
    x = _data(np.random.default_rng(0), (6, 300))
    _same_over_trips(ROWS, rows, LAYOUTS[layout](x))


@SLOW
@pytest.mark.parametrize("layout", ["C", "F", "reversed"])
def test_reordered_and_cast_sums_in_a_loop(layout):
    x = LAYOUTS[layout](_data(np.random.default_rng(2), (5, 6, 70)))
    _same_over_trips(REORDERED, reordered, x)


@pytest.mark.parametrize("layout", ["C", pytest.param("F", marks=SLOW),
                                    pytest.param("reversed", marks=SLOW)])
def test_complex_sums_in_a_loop(layout):
    z = LAYOUTS[layout](_data(np.random.default_rng(3), (6, 50), complex_=True))
    _same_over_trips(COMPLEX, complex_sums, z)


def _same_bits_and_warnings(compiled, fn, *args) -> list:
    """The compiled call gives the plain call's bits and warnings (astcompiler's own notices
    aside); returns the plain call's warnings."""
    with warnings.catch_warnings(record=True) as compiled_warned:
        warnings.simplefilter("always")
        got = compiled(*args)
    with warnings.catch_warnings(record=True) as plain_warned:
        warnings.simplefilter("always")
        want = fn(*args)
    assert_same_bits(got, want)
    assert [(w.category, str(w.message)) for w in compiled_warned
            if "astcompiler" not in str(w.message)] \
        == [(w.category, str(w.message)) for w in plain_warned]
    return plain_warned


@SLOW
def test_empty_rows_in_a_loop():
    x = np.asfortranarray(np.zeros((4, 0)))
    _same_bits_and_warnings(lambda v: [ROWS(v, n) for n in (2, 3)],
                            lambda v: [rows(v, n) for n in (2, 3)], x)


def test_a_numpy_step_that_warns_reruns_with_numpy():
    x = np.asfortranarray(_data(np.random.default_rng(4), (6, 40)))
    x[2, 3] = np.inf  # inf * 0 on the first trip: "invalid value encountered in multiply"
    for n in (2, 3):
        _same_bits_and_warnings(REORDERED, reordered, x[None], n)


def _means(x, n):
    total = 0.0
    for i in range(n):
        total += x[:, i:].mean(axis=(1, 0))  # reordered axes: a NumPy step; empty from i = 6
    return total


def _sums(x, n):
    total = 0.0
    for i in range(n):
        total += x[:, i:].sum(axis=(1, 0))
    return total


def test_numpy_steps_record_warnings_only_where_an_op_may_warn():
    """A step of ``sum`` (NumPy only sets FP flags) runs without catching warnings (about 6 us
    a trip); a step of ``mean`` catches them: "Mean of empty slice" reruns the call with NumPy,
    which warns as the plain call, trip by trip."""
    x = _data(np.random.default_rng(7), (5, 6))
    with ac.config.patch(unroll_limit=4):
        for fn, record in ((_means, True), (_sums, False)):
            compiled = ac.compile(fn)
            for n in (7, 8, 9):
                plain_warned = _same_bits_and_warnings(compiled, fn, x, n)
            code = compiled.entries[-1].output_code
            assert "one structured numba function" in code
            assert f"with _ac_numpy_step({record}):" in code
            assert f"with _ac_numpy_step({not record}):" not in code
    assert [str(w) for w in plain_warned] == []  # (sums: none)


def _transposed_rows(a, n):
    out = np.zeros(a.shape[1])
    for i in range(n):
        out = out + (a * i).T.sum(axis=1)  # the transpose of NumPy's temporary (order K)
    return out


@pytest.mark.parametrize("layout", ["C", "F"])
def test_a_sum_of_a_view_of_a_loop_temporary_adds_in_numpys_order(layout):
    """NumPy's ``a * i`` of an F-ordered ``a`` is F-ordered, so its transpose has contiguous
    rows (pairwise sums); loop code's buffer is C-ordered, its transpose not. The kernel feeding
    the sum through the view runs with NumPy where its operands are not C-ordered."""
    a = _data(np.random.default_rng(8), (300, 40))
    a = np.asfortranarray(a) if layout == "F" else a
    with ac.config.patch(unroll_limit=4):
        compiled = ac.compile(_transposed_rows)
        for n in (7, 9):
            assert_same_bits(compiled(a, n), _transposed_rows(a, n))
        assert "one structured numba function" in compiled.entries[-1].output_code
