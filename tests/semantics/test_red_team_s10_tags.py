"""Red team, round s10 (type tags): a value Python leaves a ``float``/``int`` on some inputs and a
NumPy scalar on others (``best = 0.0`` then ``best = x[i]`` behind ``if x[i] > best`` in a compiled
loop), used after the loop through a route the tags do not guard: ``round(v, ndigits)``,
attributes and methods (``v.real``, ``v.dtype``, ``v.sum()``), and ``v.__class__`` (which leaks the
tracer's proxy class for any traced scalar). Each case compares the plain call with the compiled
one (``differential``: value, Python type, exception, warnings) over calls that take each path;
the first call leaves ``best`` a Python number."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac

from .red_team_support import differential

N = 100  # above config.unroll_limit: the loop is a compiled region
RNG = np.random.default_rng(1)
POS, NEG = RNG.random(N) + 0.1, -RNG.random(N) - 0.1
INTS = RNG.integers(-5, 5, N)


def _float_calls():
    return [(NEG.copy(),), (POS.copy(),), (NEG.copy(),)]


def _int_calls():
    return [(np.abs(INTS),), (INTS.copy(),), (np.abs(INTS),)]


# ----- round(v, ndigits) of a tagged float: Python's float stays a float ------------------------
def rounded(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return round(best, 2), round(best, 0), round(best, -1)


def test_round_with_ndigits_of_a_tagged_float_keeps_pythons_type():
    differential(rounded, _float_calls)


# ----- .real / .imag / .conjugate() of a tagged number -------------------------------------------
def real_parts(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best.real, best.imag, best.conjugate()


def int_real(x):
    low = 0
    for i in range(x.shape[0]):
        low = min(low, x[i])
    return low.real


@pytest.mark.parametrize("fn, calls", [(real_parts, _float_calls), (int_real, _int_calls)],
                         ids=["float", "int"])
def test_real_imag_conjugate_of_a_tagged_number_keep_pythons_type(fn, calls):
    differential(fn, calls)


# ----- NumPy-only attributes of a tagged value: a Python float has none -------------------------
def dtype_of(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best.dtype


def shape_of(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best.shape, best.ndim


def summed(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best.sum()


def cast(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best.astype(np.float32)


@pytest.mark.parametrize("fn", [dtype_of, shape_of, summed, cast],
                         ids=["dtype", "shape", "sum", "astype"])
def test_numpy_only_attributes_of_a_python_float_raise_attribute_error(fn):
    differential(fn, _float_calls)  # call 1: AttributeError: 'float' object has no attribute ...


# ----- __class__ of a traced scalar: NumPy's class (or Python's), never the proxy ----------------
def class_of_element(x):
    return x[0].__class__.__name__, x.sum().__class__ is np.float64


def class_of_tagged(x):
    best = 0.0
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best.__class__, best.__class__ is float


def test_class_of_a_traced_element_is_numpys_scalar_class():
    # (backend="numba" happens to give the right answer here; aot_eager and eager leak the proxy)
    differential(class_of_element, _float_calls,
                 compiled=ac.compile(class_of_element, backend="aot_eager"))


def test_class_of_a_tagged_value_is_pythons_or_numpys_class():
    differential(class_of_tagged, _float_calls)
