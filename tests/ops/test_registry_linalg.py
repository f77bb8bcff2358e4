"""np.linalg ops: registry vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import FakeProxy, canonical, check, noncontiguous, sample

LA = np.linalg
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 1/0 in negative-order norms
MATRIX_DTYPES = ("float32", "float64", "int32", "int64", "bool")


def spd(n, dtype="float64", batch=()):
    m = sample((*batch, n, n), "float64")
    a = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
    return a.astype(dtype) if np.dtype(dtype).kind != "b" else np.eye(n, dtype=bool)


@pytest.mark.parametrize("dtype", MATRIX_DTYPES)
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), ()])
def test_norm(dtype, shape):
    x = sample(shape, dtype)
    check(LA.norm, x)
    check(LA.norm, x, keepdims=True)
    for ord_ in (None, 1, 2, np.inf, -np.inf, 0, 3, "fro", "nuc", -1, -2):
        check(LA.norm, x, ord_)
        if len(shape) >= 2:
            check(LA.norm, x, ord_, (0, 1))
            check(LA.norm, x, ord=ord_, axis=(-1, -2), keepdims=True)
        if len(shape) >= 1:
            check(LA.norm, x, ord=ord_, axis=-1)
    if len(shape) >= 2:
        check(LA.norm, x, axis=(0, 0))
        check(LA.norm, x, axis=(0, 1, 2))
        check(LA.norm, x, axis=5)


def test_norm_canonical():
    x = FakeProxy(sample((3, 4)))
    assert canonical(LA.norm, x, None, 1) == canonical(LA.norm, x, axis=(-1,))
    assert canonical(LA.norm, x, 2, (0, 1))[2]["axis"] == (0, 1)
    assert canonical(LA.norm, x, 2, (1, 0))[2]["axis"] == (1, 0)  # order matters


@pytest.mark.parametrize("dtype", MATRIX_DTYPES)
@pytest.mark.parametrize("batch", [(), (2,)])
def test_square_matrix_functions(dtype, batch):
    a = spd(3, dtype, batch)
    b = sample((*batch, 3, 2), dtype, 1)
    check(LA.solve, a, b)
    check(LA.solve, a, sample((3,), dtype, 1))
    check(LA.inv, a)
    check(LA.det, a)
    check(LA.slogdet, a)
    check(LA.cholesky, a)
    check(LA.cholesky, a, upper=True)
    check(LA.eigh, a)
    check(LA.eigh, a, "U")
    check(LA.eigh, a, UPLO="U")
    check(LA.eigvalsh, a)
    check(LA.eigvals, a)
    check(LA.eig, a)
    check(LA.matrix_power, a, 3)
    check(LA.matrix_power, a, 0)
    check(LA.matrix_power, a, -1)
    check(LA.cond, a)
    check(LA.cond, a, "fro")


@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh, LA.eigvalsh,
                                LA.eigvals, LA.eig])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (), (0, 0)])
def test_shape_errors(fn, shape):
    check(fn, sample(shape))


def test_value_errors():
    singular = np.ones((3, 3))
    check(LA.inv, singular)
    check(LA.solve, singular, np.ones(3))
    check(LA.cholesky, -np.eye(2))
    check(LA.eigh, np.eye(2), "X")
    check(LA.matrix_power, np.eye(2), 1.5)
    check(LA.solve, np.eye(3), np.ones(4))


def test_noncontiguous_inputs():
    a = noncontiguous(spd(4))
    check(LA.inv, a)
    check(LA.solve, a, noncontiguous(sample((4, 2))))
    check(LA.norm, noncontiguous(sample((3, 5))), "nuc")


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64"))
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 4, 3)])
def test_factorizations(dtype, shape):
    a = sample(shape, dtype)
    check(LA.qr, a)
    for mode in ("reduced", "complete", "r", "bogus"):
        check(LA.qr, a, mode)
    check(LA.svd, a)
    check(LA.svd, a, False)
    check(LA.svd, a, full_matrices=False, compute_uv=False)
    check(LA.pinv, a)
    check(LA.pinv, a, 1e-3)
    check(LA.pinv, a, rtol=1e-3)
    check(LA.matrix_rank, a)
    check(LA.matrix_rank, a, tol=0.5)
    if len(shape) == 2:
        b = sample((shape[0], 2), dtype, 1)
        check(LA.lstsq, a, b)
        check(LA.lstsq, a, b, rcond=None)
        check(LA.lstsq, a, b[:, 0], 1e-10)


def test_qr_raw_is_unsupported():
    with pytest.raises(Unsupported):
        REGISTRY["linalg_qr"].canonical((sample((3, 3)),), {"mode": "raw"})


def test_multi_dot():
    a, b, c = sample((2, 3)), sample((3, 4)), sample((4,))
    check(LA.multi_dot, [a, b, c])
    check(LA.multi_dot, (sample((3,)), b, c))
    check(LA.multi_dot, [a])
    check(LA.multi_dot, [a, sample((2, 2))])


def test_tuple_outputs_are_marked():
    for name in ("linalg_eigh", "linalg_slogdet", "linalg_qr", "linalg_lstsq", "linalg_svd",
                 "linalg_eig"):
        assert REGISTRY[name].tuple_output, name
        assert REGISTRY[name].kind == "extern"
    assert not REGISTRY["linalg_inv"].tuple_output
