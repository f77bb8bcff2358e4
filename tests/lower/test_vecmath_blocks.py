"""The vecmath index read from the numba op table (``NumbaRule.vecmath``), and float64 sin/cos
kernels in fast blocks (``cpu.fast_blocks``, on by default): an element's bits depend on its
own argument only, wherever it sits (a block, a block run again, the tail, an array shorter
than a block), and past the fast reduction they are libm's (NumPy's own scalar sin/cos)."""

from __future__ import annotations

import importlib
import io

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import optable, vecmath
from astcompiler.lower.numba.vecmath.trig import FAST_BOUND
from astcompiler.ops import REGISTRY


def test_the_index_is_the_op_tables():
    functions = vecmath.functions()
    assert functions  # the table declares some
    for name, function in functions.items():
        assert optable.numba_rule(name).vecmath is function
        assert isinstance(REGISTRY.ops[name].ufunc, np.ufunc)
        for dtype in ("float64", "float32"):
            module, attribute = vecmath.VECTOR_MATH[(name, dtype)]
            assert callable(getattr(importlib.import_module(module), attribute))
            key = vecmath.helper_key(name, dtype)
            assert (key is None) == (dtype == "float32" and not function.float32_in_kernels)
            fast = vecmath.fast_call(key) if key else None
            assert (fast is not None) == (function.fast_float64 and dtype == "float64")
    assert set(vecmath.VECTOR_MATH) == {(n, d) for n in functions for d in ("float64", "float32")}
    assert set(vecmath.NATIVE_FLOAT32) == {n for n, f in functions.items() if f.native_float32}
    assert vecmath.helper_key("add", "float64") is None  # an op without a vecmath function


def chain(x):
    return np.sin(x) * 2.0 + 1.0  # (cos: test_softmax_speed_paths.py)


@pytest.fixture(scope="module")
def compiled():
    fn = ac.compile(chain, dynamic=True)
    fn(np.linspace(-1.0, 1.0, 300))
    text = io.StringIO()
    ac.show(fn, file=text)
    assert "vm_sin_fast_float64(" in text.getvalue()  # the fast blocks are on by default
    return fn


def _close(got, want):
    """Within a few ulp of the terms (|sin * 2| + 1 <= 3; the sum may cancel)."""
    return np.max(np.abs(got - want)) <= 8 * np.spacing(3.0)


def test_bits_do_not_depend_on_the_position(compiled):
    x = np.random.default_rng(3).uniform(-20.0, 20.0, 64 * 3 + 17)
    whole = compiled(x)
    assert _close(whole, chain(x))
    for lo, hi in [(0, 1), (0, 5), (3, 66), (0, 64), (1, 129), (10, x.size), (64, 128)]:
        assert np.array_equal(compiled(x[lo:hi].copy()), whole[lo:hi]), (lo, hi)
    assert np.array_equal(compiled(x[::-1].copy()), whole[::-1])  # blocks and tail swapped


def test_past_the_fast_reduction_libm(compiled):
    x = np.random.default_rng(4).uniform(-3.0, 3.0, 64 * 3 + 9)
    base = compiled(x)
    big = x.copy()
    places = [5, 70, big.size - 2]  # a block, another block, the tail
    big[places] = [1e300, -4e10, FAST_BOUND]
    got = compiled(big)
    keep = np.ones(x.size, bool)
    keep[places] = False
    assert np.array_equal(got[keep], base[keep])  # the rerun block: the same bits
    assert np.array_equal(got[places], chain(big[places]))  # NumPy's own (libm) values
    special = x.copy()
    special[[1, 100, special.size - 1]] = [np.inf, np.nan, -0.0]
    with np.errstate(invalid="ignore"):
        got, want = compiled(special), chain(special)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert _close(got[ok], want[ok])
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError) as plain:
            chain(special)
        with pytest.raises(FloatingPointError) as ours:
            compiled(special)
    assert str(ours.value) == str(plain.value)
