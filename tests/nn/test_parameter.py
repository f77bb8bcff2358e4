"""Parameter: an ndarray subclass whose derived arrays are plain ndarrays."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from astcompiler.nn import Parameter


@pytest.fixture
def p() -> Parameter:
    return Parameter(np.arange(6.0).reshape(2, 3))


def test_wraps_and_shares_memory() -> None:
    data = np.zeros(3)
    p = Parameter(data)
    assert isinstance(p, np.ndarray) and type(p) is Parameter
    assert np.shares_memory(p, data)
    assert Parameter().shape == (0,)
    assert Parameter([1.0, 2.0]).dtype == np.float64


@pytest.mark.parametrize("expr", [
    "p + 1", "-p", "abs(p)", "p * p", "x @ p.T", "p.T", "p.mT", "p[0]", "p[:, 1:]", "p.reshape(-1)",
    "p.ravel()", "p.flatten()", "p.copy()", "p.astype(np.float32)", "p.transpose()",
    "p.squeeze()", "p.sum(axis=0)", "p.mean(axis=1)", "p.max(axis=0)", "p.cumsum()",
    "p.clip(0, 1)", "p.dot(p.T)", "p.view()", "np.exp(p)", "np.concatenate([p, p])",
    "np.stack((p, p))", "np.zeros_like(p)", "np.where(p > 2, p, 0)", "list(p)[0]",
    "np.einsum('ij->j', p)",
])
def test_derived_arrays_are_plain(p: Parameter, expr: str) -> None:
    x = np.ones((4, 3))
    result = eval(expr, {"np": np, "p": p, "x": x})
    assert type(result) is np.ndarray, expr


def test_reductions_give_scalars(p: Parameter) -> None:
    assert type(p.sum()) is np.float64
    assert type(p.std()) is np.float64


def test_in_place_updates_keep_the_parameter(p: Parameter) -> None:
    q = p
    q += 1
    assert q is p and type(p) is Parameter and p[0, 0] == 1.0
    np.copyto(p, 5.0)
    assert (p == 5.0).all()
    np.multiply(p, 2, out=p)
    assert p[1, 2] == 10.0
    p[0] = 0.0
    assert p[0].sum() == 0.0 and type(p) is Parameter


def test_views_as_requested(p: Parameter) -> None:
    assert type(p.view(np.ndarray)) is np.ndarray
    assert type(p.view(Parameter)) is Parameter
    assert np.shares_memory(p.view(np.ndarray), p)


def test_hash_is_identity(p: Parameter) -> None:
    other = Parameter(np.arange(6.0).reshape(2, 3))
    assert len({p, other, p}) == 2
    assert {p: 1}[p] == 1


def test_copy_deepcopy_pickle_keep_the_class(p: Parameter) -> None:
    for clone in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(clone) is Parameter and not np.shares_memory(clone, p)
        np.testing.assert_array_equal(clone, p)


def test_repr(p: Parameter) -> None:
    assert repr(Parameter(np.zeros(2))) == "Parameter containing:\narray([0., 0.])"
