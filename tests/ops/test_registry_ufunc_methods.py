"""Ufunc methods (np.add.outer, np.add.reduce, np.maximum.accumulate, ...): registry vs NumPy.

Capture binds a ufunc method with the ufunc first: ``op.canonical((ufunc, *args), kwargs)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import lookup_bound_method, lookup_ufunc_method
from .opcheck import (DTYPES, FakeProxy, assert_canonical_is_plain, assert_same, clone,
                      noncontiguous, proxify, sample, unproxify)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 1/0, overflow in samples


def via_registry(ufunc, method_name, *args, **kwargs):
    op = lookup_ufunc_method(ufunc, method_name)
    assert op is not None
    cargs, ckwargs = op.canonical(proxify((ufunc, *args), {}), proxify(kwargs, {}))
    assert_canonical_is_plain(cargs)
    assert isinstance(cargs[0], str)
    return op.impl(*unproxify(cargs), **unproxify(ckwargs))


def check_method(ufunc, method_name, *args, **kwargs):
    """``ufunc.<method>(*args, **kwargs)`` directly and through the registry agree."""
    try:
        expected = getattr(ufunc, method_name)(*clone(args), **clone(kwargs))
    except Exception as exc:  # noqa: BLE001
        with pytest.raises(type(exc)):
            via_registry(ufunc, method_name, *clone(args), **clone(kwargs))
        return
    assert_same(via_registry(ufunc, method_name, *clone(args), **clone(kwargs)), expected)


BINARY = [np.add, np.multiply, np.maximum, np.minimum, np.subtract, np.logical_and,
          np.logical_or, np.bitwise_xor, np.fmax, np.hypot, np.power, np.true_divide]


@pytest.mark.parametrize("ufunc", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_outer(ufunc, dtype):
    a, b = sample((3,), dtype), noncontiguous(sample((2, 2), dtype, 1))
    check_method(ufunc, "outer", a, b)
    check_method(ufunc, "outer", a, 2)
    check_method(ufunc, "outer", sample((), dtype), b)
    check_method(ufunc, "outer", a, b, dtype=np.float64)


@pytest.mark.parametrize("ufunc", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(ufunc, dtype):
    x = noncontiguous(sample((3, 4, 2), dtype, low=1))
    check_method(ufunc, "reduce", x)
    for axis in (0, 1, -1, None, (0, 2), (), 3):
        check_method(ufunc, "reduce", x, axis)
        check_method(ufunc, "reduce", x, axis=axis, keepdims=True)
    check_method(ufunc, "reduce", x, 0, np.float64)
    check_method(ufunc, "reduce", x, axis=1, initial=1)
    check_method(ufunc, "reduce", sample((), dtype))
    check_method(ufunc, "reduce", sample((0, 3), dtype))
    check_method(ufunc, "reduce", [1, 2, 3])


@pytest.mark.parametrize("ufunc", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_accumulate(ufunc, dtype):
    x = noncontiguous(sample((3, 4), dtype, low=1))
    for axis in (0, 1, -1, 2, None, (0, 1)):
        check_method(ufunc, "accumulate", x, axis)
    check_method(ufunc, "accumulate", x)
    check_method(ufunc, "accumulate", x, axis=1, dtype=np.float64)
    check_method(ufunc, "accumulate", sample((), dtype))
    check_method(ufunc, "accumulate", sample((0,), dtype))


@pytest.mark.parametrize("ufunc", [np.add, np.maximum, np.multiply])
def test_reduceat(ufunc):
    x = sample((8, 3), "int64")
    check_method(ufunc, "reduceat", x, [0, 4, 1, 5])
    check_method(ufunc, "reduceat", x.T, (0, 2), axis=1)
    check_method(ufunc, "reduceat", x, [0, 9])


@pytest.mark.parametrize("method_name", ["outer", "reduce", "accumulate", "reduceat"])
def test_unary_ufuncs_raise_like_numpy(method_name):
    x = sample((3,))
    args = (x, x) if method_name == "outer" else (x, [0, 1]) if method_name == "reduceat" else (x,)
    check_method(np.sin, method_name, *args)
    check_method(np.divmod, method_name, *args)


def test_lookup():
    assert lookup_ufunc_method(np.add, "outer").name == "ufunc_outer"
    assert lookup_ufunc_method(np.maximum, "reduce").name == "ufunc_reduce"
    assert lookup_ufunc_method(np.add, "at") is None
    assert lookup_ufunc_method(np.frompyfunc(lambda a, b: a, 2, 1), "outer") is None
    assert lookup_ufunc_method(len, "outer") is None
    op, ufunc = lookup_bound_method(np.multiply.outer)
    assert op.name == "ufunc_outer" and ufunc is np.multiply
    assert lookup_bound_method(np.add.at) is None
    assert lookup_bound_method(np.sum) is None
    assert lookup_ufunc_method(np.mod, "reduce").canonical((np.mod, [1.0]), {})[0][0] == "remainder"


def test_canonical_forms_agree():
    x = FakeProxy(sample((3, 4)))
    op = lookup_ufunc_method(np.add, "reduce")
    assert op.canonical((np.add, x), {}) == op.canonical((np.add, x, 0), {}) \
        == op.canonical((np.add, x), {"axis": -2})
    by_tuple = op.canonical((np.add, x), {"axis": (1, 0)})
    assert by_tuple == ((("add", x), {"axis": (0, 1), "keepdims": False}))


def test_unsupported_arguments():
    x = FakeProxy(sample((3, 4)))
    with pytest.raises(Unsupported):
        lookup_ufunc_method(np.add, "reduce").canonical((np.add, x), {"out": np.empty(4)})
    with pytest.raises(Unsupported):
        lookup_ufunc_method(np.add, "reduce").canonical((np.add, x), {"where": np.ones(4, bool)})
    with pytest.raises(Unsupported):
        lookup_ufunc_method(np.add, "outer").canonical((np.add, x, x), {"casting": "unsafe"})
