"""Plain vs compiled, session 5 gaps of issue 10: where the warnings of ops whose NumPy reference
is a Python function come from, NumPy's integer scalar overflow in numba kernels and loops, dead
ops that raise (an index out of bounds), and ``capture/fp_effects.py`` naming no op."""

from __future__ import annotations

import ast
import inspect
import itertools

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.capture import fp_effects
from astcompiler.ops import REGISTRY
from tests.helpers import outcome

BACKENDS = ["eager", "aot_eager", "numba"]


def same(compiled, fn, args, locations=True):
    """Value (type, dtype, bits), exception and warnings (with file and line) as the plain call."""
    got = outcome(compiled, tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args),
                  locations)
    want = outcome(fn, tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args),
                   locations)
    assert got[1:] == want[1:]
    if want[1] is None:
        for got_value, want_value in zip(*(v if isinstance(v, tuple) else (v,)
                                           for v in (got[0], want[0]))):
            assert type(got_value) is type(want_value)
            np.testing.assert_array_equal(got_value, want_value)


# --- 1. warnings of ops whose reference is a Python function come from where NumPy warns ---------

def cast_method(x):
    return x.astype(np.int32)


def cast_then_add(x):
    return x.astype(np.int32) + 1


def round_method(x):
    return x.round(5)


def round_function(x):
    return np.round(x, 5)


def sum_method(x):
    return x.sum()


def prod_method(x):
    return x.prod()


def mean_of_empty(x):
    return x[:0].mean()


def dot_method(x):
    return x.dot(x)


def cumsum_method(x):
    return x.cumsum()


def complex_cast(z):
    return z.astype(np.float64)


BIG = np.array([np.nan, 1e308, 1e308])
LOCATED = [cast_method, cast_then_add, round_method, round_function, sum_method, prod_method,
           mean_of_empty, dot_method, cumsum_method]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", LOCATED, ids=[f.__name__ for f in LOCATED])
def test_warning_location_of_python_reference_ops(fn, backend):
    """``x.astype`` warns from the user's line, ``x.sum()`` from NumPy's ``_methods.py``,
    ``np.round`` from ``fromnumeric.py``: the compiled call warns from the same file and line."""
    same(ac.compile(fn, backend=backend), fn, (BIG,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_cast_warning_location(backend):
    same(ac.compile(complex_cast, backend=backend), complex_cast, (np.array([1 + 2j]),))


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_cast_warning_is_shown_once_per_user_line(backend):
    """The default filter shows a warning once per location (the user module's registry)."""
    import warnings
    compiled = ac.compile(cast_method, backend=backend)
    counts = []
    for fn in (cast_method, compiled):
        globals()["__warningregistry__"] = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for _ in range(3):
                fn(BIG.copy())
        counts.append([(w.filename, w.lineno) for w in caught])
    assert counts[0] == counts[1] and len(counts[0]) == 1


def test_method_calls_take_their_canonical_arguments():
    """The method a placed call runs (``lower/places.py``) accepts each op's canonical arguments."""
    calls = [lambda x: x.argsort(kind="stable"), lambda x: x.searchsorted(0.5),
             lambda x: x.repeat(2, axis=0), lambda x: x.take([0], axis=0),
             lambda x: x.cumsum(axis=0, dtype=np.float32), lambda x: x.clip(None, 1),
             lambda x: x.var(ddof=1), lambda x: x.std(0, keepdims=True),
             lambda x: x.mean(dtype=np.float32), lambda x: x.sum(axis=0, keepdims=True),
             lambda x: x.astype(np.float32, copy=False), lambda x: x.round(2)]
    for fn in calls:
        same(ac.compile(fn, backend="eager"), fn, (np.array([0.3, 2.5, -1.0, 1e308]),),
             locations=False)


# --- 2. NumPy integer scalar overflow ------------------------------------------------------------

def scalar_math(x, b):
    """Each of NumPy's integer scalar ops that warn where they wrap, then ones that do not."""
    m = x.max()
    return (m * b, m + b, m - b, -m, abs(m), m * 3,
            np.asarray(m) * b,  # a 0-d array: array math, silent
            x * b)  # arrays wrap silently


INT_TYPES = [np.int8, np.int64, np.uint64]


def edge_values(t):
    info = np.iinfo(t)
    return sorted({info.min, info.min + 1, -1 if info.min else 0, 0, 1, 3, info.max // 2,
                   info.max})


@pytest.mark.parametrize("t", INT_TYPES, ids=[t.__name__ for t in INT_TYPES])
def test_numpy_integer_scalar_overflow_in_kernels(t):
    """``np.int64(2**62) * np.int64(4)`` warns "overflow encountered in scalar multiply" (or
    raises under ``np.errstate(over="raise")``), per op and in order; arrays and 0-d arrays
    wrap silently."""
    values = edge_values(t)
    compiled = ac.compile(scalar_math, backend="numba")
    for a, b in itertools.product(values, values[::2]):
        for mode in ("warn", "raise"):
            with np.errstate(over=mode):
                same(compiled, scalar_math, (np.array([a, a], dtype=t), t(b)), locations=False)


def accumulate_in_loop(x, n):
    s = x[0]
    for i in range(n):
        s = s * 3 + x[i]
    return s


@pytest.mark.parametrize("t", [np.int8, np.uint32], ids=["int8", "uint32"])
def test_numpy_integer_scalar_overflow_in_loops(t):
    """A loop region's NumPy scalar arithmetic warns per op like the plain call."""
    compiled = ac.compile(accumulate_in_loop, backend="numba")
    x = np.arange(1, 60, dtype=t)
    for n in (40, 59):  # a loop region (a short one is unrolled)
        for mode in ("warn", "raise"):
            with np.errstate(over=mode):
                same(compiled, accumulate_in_loop, (x, n), locations=False)


# --- 3. an unused op that raises is kept -------------------------------------------------------

def unused_dynamic_index(x, i):
    unused = x[i]  # noqa: F841 - its IndexError is the point
    return x * 2


def unused_constant_index(x):
    unused = x[3]  # noqa: F841
    return x * 2


def unused_slice_and_index(x):
    unused = x[3:4, 2]  # noqa: F841
    return x * 2


def unused_fancy_index(x, idx):
    unused = x[idx]  # noqa: F841
    return x * 2


def unused_take(x, idx):
    unused = np.take(x, idx)  # noqa: F841
    return x + 1


def unused_in_bounds(x):
    unused = x[0, 1:]  # noqa: F841 - provably inside the static shape: dropped
    return x * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_index_out_of_bounds_raises(backend):
    compiled = ac.compile(unused_dynamic_index, backend=backend)
    x = np.arange(4.0)
    for i in (0, 1, 2, 3, 7, -5):  # dynamic after the first recompiles
        same(compiled, unused_dynamic_index, (x, i))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_constant_index_on_dynamic_sizes_raises(backend):
    compiled = ac.compile(unused_constant_index, backend=backend)
    for n in (5, 6, 7, 2):  # sizes become dynamic: x[3] is no longer in bounds by the guards
        same(compiled, unused_constant_index, (np.arange(float(n)),))
    compiled = ac.compile(unused_slice_and_index, backend=backend)
    for n in (5, 6, 7, 2):
        same(compiled, unused_slice_and_index, (np.ones((n, n)),))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_index_array_out_of_bounds_raises(backend):
    x = np.arange(4)
    for fn in (unused_fancy_index, unused_take):
        compiled = ac.compile(fn, backend=backend)
        for idx in (np.array([1, 2]), np.array([1, 9])):
            same(compiled, fn, (x, idx))


def test_unused_index_inside_static_bounds_is_dropped():
    compiled = ac.compile(unused_in_bounds, backend="eager")
    same(compiled, unused_in_bounds, (np.ones((2, 3)),))
    assert [n.target for n in compiled.entries[0].graph.nodes if n.op == "call"] == ["multiply"]


# --- 5. fp_effects names no op ----------------------------------------------------------------

def test_fp_effects_names_no_op():
    """What an op may warn about is declared in its ``OpDef`` (``fp_quiet``,
    ``integer_division``, ``may_raise``): ``capture/fp_effects.py`` holds no op name and no
    NumPy ufunc, so adding an op touches one file."""
    tree = ast.parse(inspect.getsource(fp_effects))
    names = set(REGISTRY.ops)
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                and isinstance(n.value, str)}
    assert not literals & names
    ufuncs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
              and isinstance(n.value, ast.Name) and n.value.id == "np"
              and isinstance(getattr(np, n.attr, None), np.ufunc)}
    assert not ufuncs


def test_fp_quiet_fields_keep_the_rule():
    """The quiet ufuncs (max/min, sign changes, rounding, classification) are quiet on floats
    and not on complex values; integer divisions may warn whatever the dtypes."""
    quiet = {n for n, op in REGISTRY.ops.items() if "f" in op.fp_quiet}
    assert {"maximum", "negative", "floor", "isnan", "where"} <= quiet
    assert not {"add", "log", "divide", "sqrt"} & quiet
    divisions = {n for n, op in REGISTRY.ops.items() if op.integer_division}
    assert divisions == {"floor_divide", "remainder", "fmod", "power"}
