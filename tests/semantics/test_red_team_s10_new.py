"""Red team, round s10 (new code of the last hour): mask lengths, empty means' warnings, user code's
attribute reads of traced values, Python ints outgrowing 64 bits in compiled loops. Each test
compares the plain call with the compiled one (``differential``: value, Python type, exception,
warnings, inputs after the call). Expected to fail today."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac

from .red_team_support import differential

N = 100  # above config.unroll_limit: loops are compiled regions


def _floats():
    return [(np.arange(5.0) + 0.5,), (np.arange(5.0) - 2.0,)]


# ----- 1. a Python number made from an intermediate's element has no NumPy-only methods ------------
def float_max(x):
    z = x * 1.0
    return float(z[1]).max()


def float_copy(x):
    z = x * 1.0
    return float(z[1]).copy()


def float_squeeze(x):
    z = x * 1.0
    return float(z[1]).squeeze()


def float_conj(x):
    z = x * 1.0
    return float(z[1]).conj()


def int_sum(x):
    z = x * 1.0
    return int(z[1]).sum()


def int_astype(x):
    z = x * 1.0
    return int(z[1]).astype(int)


def bool_max(x):
    z = x * 1.0
    return bool(z[1] > 0).max()


NUMPY_ONLY = [float_max, float_copy, float_squeeze, float_conj, int_sum, int_astype, bool_max]


@pytest.mark.parametrize("fn", NUMPY_ONLY, ids=[f.__name__ for f in NUMPY_ONLY])
def test_python_number_from_data_has_no_numpy_only_methods(fn):
    """Plain: AttributeError("'float' object has no attribute 'max'"); compiled: a value."""
    differential(fn, _floats)


# ----- 2. .conjugate() of a Python number made from data keeps Python's type --------------------------
def float_conjugate(x):
    z = x * 1.0
    return float(z[1]).conjugate()


def int_conjugate(x):
    z = x * 1.0
    return int(z[1]).conjugate()


def complex_conjugate(x):
    z = x + 0j
    return complex(z[1]).conjugate()


CONJUGATES = [float_conjugate, int_conjugate, complex_conjugate]


@pytest.mark.parametrize("fn", CONJUGATES, ids=[f.__name__ for f in CONJUGATES])
def test_conjugate_of_python_number_is_a_python_number(fn):
    """Plain: float / int / complex; compiled: np.float64 / np.int64 / np.complex128."""
    differential(fn, _floats)


# ----- 3. a NumPy scalar's .copy() is a NumPy scalar, not a 0-d array --------------------------------
def scalar_copy(x):
    z = x * 1.0
    return z[1].copy()


def test_numpy_scalar_copy_is_a_numpy_scalar():
    """Plain: np.float64; compiled: 0-d ndarray."""
    differential(scalar_copy, _floats)


# ----- 4. the eager backends: NumPy-only methods / conjugate of a Python number of an input element -
def input_float_max(x):
    return float(x[1]).max()


def input_int_conjugate(x):
    return int(x[1]).conjugate()


@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
@pytest.mark.parametrize("fn", [input_float_max, input_int_conjugate],
                         ids=["float_max", "int_conjugate"])
def test_eager_backends_python_number_methods(fn, backend):
    differential(fn, _floats, compiled=ac.compile(fn, backend=backend))


# ----- 5. a Python int outgrowing 64 bits after the loop wrote its input, errstate(all="ignore") ----
def doubling_hash(x):
    h = 0
    for i in range(len(x)):
        x[i] = x[i] * 2
        h = h * 31 + int(x[i])
    return h % 1000003


def test_overflow_after_input_writes_under_errstate_ignore():
    """Plain: an int; compiled: astcompiler's OverflowError ('... after the loop had written to
    its inputs ...'). Under the default errstate (and any errstate that is not all-ignore) the
    inputs are saved and the call is right."""
    differential(doubling_hash, lambda: [(np.arange(N),), (np.arange(N) + 3,)],
                 errstate=dict(all="ignore"))


# ----- 6. int(inf) after the loop wrote its input, errstate(all="ignore") ---------------------------
def shifted_histogram(x):
    counts = np.zeros(10, dtype=np.int64)
    for i in range(len(x)):
        x[i] = x[i] + 1
        counts[int(x[i] * 10) % 10] += 1
    return counts


def _histogram_calls():
    a = np.linspace(0, 0.9, N)
    b = a.copy()
    b[50] = np.inf
    return [(a,), (b,), (a.copy(),)]


def test_int_of_inf_after_input_writes_under_errstate_ignore():
    """Plain: OverflowError('cannot convert float infinity to integer') with x written up to
    element 50; compiled: astcompiler's own OverflowError message."""
    differential(shifted_histogram, _histogram_calls, errstate=dict(all="ignore"))


# ----- 7. empty axis mean under errstate(invalid="raise"): the warning shows twice ------------------
def axis_mean(x):
    return x.mean(axis=0)


def axis_var(x):
    return np.var(x, axis=0, ddof=1)


def _empty_rows(dtype=np.float64):
    return lambda: [(np.arange(12.0).reshape(3, 4).astype(dtype),), (np.zeros((0, 4), dtype),),
                    (np.ones((2, 4), dtype),), (np.zeros((0, 4), dtype),)]


@pytest.mark.parametrize("fn", [axis_mean, axis_var], ids=["mean", "var"])
def test_empty_axis_mean_warns_once_under_invalid_raise(fn):
    """Plain: one 'Mean of empty slice' / 'Degrees of freedom <= 0 for slice', then
    FloatingPointError; compiled: the warning twice, then FloatingPointError."""
    differential(fn, _empty_rows(), errstate=dict(invalid="raise"))


# ----- 8. an axis mean and a var of one empty array: 'Mean of empty slice' twice -------------------
def mean_then_var(x):
    return x.mean(axis=0).sum() + x.var()


@pytest.mark.parametrize("errstate", [None, dict(all="ignore")], ids=["default", "ignore"])
def test_axis_mean_and_var_of_empty_array_warn_once_each(errstate):
    """Plain: 'Mean of empty slice' once (then 'Degrees of freedom <= 0 for slice'); compiled:
    'Mean of empty slice' twice (and, by default, its 'invalid value' warning twice)."""
    differential(mean_then_var, _empty_rows(), errstate=errstate)
