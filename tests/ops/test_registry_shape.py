"""Indexing extras (take, take_along_axis, boolean-mask reads) and registry-wide invariants."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import DTYPES, FakeProxy, canonical, check, method, noncontiguous, sample


@pytest.mark.parametrize("dtype", DTYPES)
def test_take(dtype):
    x = noncontiguous(sample((3, 4), dtype))
    idx = np.array([[0, 2], [1, 1]])
    for fn in (np.take, method("take")):
        check(fn, x, 5)
        check(fn, x, [0, 3, 11])
        check(fn, x, idx, 1)
        check(fn, x, idx, axis=0)
        check(fn, x, [0, -1], axis=-1)
        check(fn, x, 100)
        check(fn, x, [0, 100], mode="clip")
        check(fn, x, [0, 100], 1, None, "wrap")
        check(fn, x, [0], mode="bogus")
        check(fn, x, [0], axis=2)
    check(np.take, [1, 2, 3], 1)


def test_take_canonical_and_out():
    x = FakeProxy(sample((3, 4)))
    assert canonical(np.take, x, [0, 1], 1) == canonical(method("take"), x, (0, 1), axis=-1)
    with pytest.raises(Unsupported):
        REGISTRY["take"].canonical((x, 0), {"out": np.empty(())})


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_axis(dtype):
    x = sample((3, 4), dtype)
    order = np.argsort(sample((3, 4), "float64", 1), axis=1)
    check(np.take_along_axis, x, order, 1)
    check(np.take_along_axis, x, order, axis=-1)
    check(np.take_along_axis, x, np.argmax(x, axis=0, keepdims=True), axis=0)
    check(np.take_along_axis, x, np.array([0, 5]), axis=None)
    check(np.take_along_axis, x, np.array([0, 1]), axis=1)
    check(np.take_along_axis, x, order.astype(float), axis=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_boolean_mask_read_is_getitem(dtype):
    x = noncontiguous(sample((3, 4), dtype))
    mask = sample((3, 4), "bool", 1)
    op = REGISTRY.lookup_callable(operator.getitem)
    assert op.name == "getitem"
    positive = x > 0 if x.dtype.kind != "b" else x
    for index in (mask, mask[:, 0], (mask[:, 0], slice(None)), (Ellipsis, mask[0]), positive,
                  np.zeros((3, 4), bool), (slice(1, None), mask[0])):
        np.testing.assert_array_equal(op.impl(x, index), x[index], strict=True)
    check(operator.getitem, x, mask)
    check(operator.getitem, x, mask[:2])


MY_FAMILIES = ("creation", "manipulation", "sorting", "scans", "contractions", "linalg",
               "ufunc_methods", "numeric")


def _family_ops():
    import importlib

    names = []
    for family in MY_FAMILIES:
        module = importlib.import_module(f"astcompiler.ops.{family}")
        for op in REGISTRY.ops.values():
            if getattr(op.normalize, "__module__", None) == module.__name__:
                names.append(op.name)
    return sorted(set(names))


@pytest.mark.parametrize("name", _family_ops())
def test_registry_entry_is_well_formed(name):
    op = REGISTRY[name]
    assert callable(op.impl) and callable(op.normalize)
    assert op.kind in ("view", "creation", "mutation", "extern")
    assert op.scalar is None and op.reduction is None
    assert op.doc
    for alias in op.aliases:
        assert REGISTRY.lookup_callable(alias) is op, f"{alias} reaches another op"
    for method_name in op.methods:
        assert REGISTRY.lookup_method(method_name) is op
        assert hasattr(np.ndarray, method_name)
    if op.kind == "mutation":
        assert op.side_effects


def test_every_family_is_imported_by_the_package():
    import astcompiler.ops as ops

    for family in MY_FAMILIES:
        assert hasattr(ops, family)
    assert len(_family_ops()) > 100


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_conventions(dtype):
    x = noncontiguous(sample((3, 4), dtype))
    for fn in (np.reshape, method("reshape")):
        check(fn, x, (4, 3))
        check(fn, x, [2, -1])
        check(fn, x, -1)
        check(fn, x, (5, -1))
        check(fn, x, (2.0, 6))
    check(method("reshape"), x, 6, 2)
    check(method("reshape"), x, 2, 3, 2, order="F")
    check(np.reshape, x, shape=(12,))


def test_reshape_keeps_symbolic_sizes():
    import sympy

    n = sympy.Symbol("s0", integer=True, positive=True)
    name, args, kwargs = canonical(method("reshape"), FakeProxy(sample((4, 3))), 2 * n, -1)
    assert args[1] == (2 * n, -1)
