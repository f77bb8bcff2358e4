"""Matrix products on the CUDA target (simulator): ``@``/``matmul``/``dot`` as a tiled
shared-memory kernel (``lower/numba/gpu/matmul.py``), for float32 and float64, edge tiles,
vectors and batches. The kernel adds along the contracted axis in TILE steps, not in BLAS's
order: results agree with NumPy within ``depth * eps * (|A| @ |B|)`` (the documented bound),
not bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")


def code(compiled) -> str:
    return "\n".join(e.output_code for e in compiled.entries)


def mm(a, b):
    return a @ b


def dot_plus(a, b):
    return np.dot(a, b) * 2.0 + 1.0


def batched(a, b):
    return np.matmul(a, b)


def within_bound(got, a, b, want):
    """|got - want| <= 2 * depth * eps * (|a| @ |b|) (both sides round; NumPy's BLAS too)."""
    eps = np.finfo(want.dtype).eps
    depth = a.shape[-1]
    bound = 2 * depth * eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= bound + 1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((5, 7), (7, 6)), ((9,), (9, 3)), ((4, 9), (9,)),
                                    ((1, 1), (1, 1)), ((3, 0), (0, 2))])
def test_matmul_host_and_device(dtype, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    want, compiled = mm(a, b), ac.compile(mm, device="cuda")
    within_bound(compiled(a, b), a, b, want)
    out = compiled(cuda.to_device(a), cuda.to_device(b))
    assert is_device_array(out)
    within_bound(out.copy_to_host(), a, b, want)


@pytest.mark.parametrize("shapes", [((2, 3, 5), (2, 5, 4)), ((2, 3, 5), (5, 4)),
                                    ((1, 3, 5), (3, 5, 2)), ((5,), (2, 5, 3))])
def test_batched_matmul(shapes):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s) for s in shapes)
    want, compiled = batched(a, b), ac.compile(batched, device="cuda")
    within_bound(compiled(a, b), a, b, want)
    within_bound(compiled(cuda.to_device(a), cuda.to_device(b)).copy_to_host(), a, b, want)


def test_dot_with_epilogue_runs_on_the_gpu():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((6, 11)), rng.standard_normal((11, 5))
    compiled = ac.compile(dot_plus, device="cuda")
    np.testing.assert_allclose(compiled(a, b), dot_plus(a, b), rtol=1e-13, atol=1e-13)
    text = code(compiled)
    assert "cuda.shared.array((TILE, TILE)" in text and "tiled dot" in text
    assert "multiply, add in its store" in text  # the epilogue is fused into the product
    assert "NumPy on the host" not in text


def test_sizes_change_keep_one_dynamic_entry():
    compiled = ac.compile(mm, device="cuda", dynamic=True)
    rng = np.random.default_rng(3)
    for m, k, n in ((3, 4, 5), (6, 9, 2), (2, 13, 7)):
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        within_bound(compiled(a, b), a, b, mm(a, b))
    assert len(compiled.entries) == 1


def test_mismatched_sizes_raise_numpy_error():
    compiled = ac.compile(mm, device="cuda", dynamic=True)
    compiled(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError) as plain:
        mm(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError) as got:
        compiled(np.ones((2, 3)), np.ones((4, 2)))
    assert str(got.value) == str(plain.value)


def test_integer_and_mixed_products_stay_on_the_host():
    a, b = np.arange(6).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    for x, y in ((a, a.T.copy()), (a.astype(np.float32), b)):
        compiled = ac.compile(mm, device="cuda")
        got, want = compiled(x, y), mm(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert "NumPy on the host" in code(compiled) and "tiled" not in code(compiled)


def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2


def used_twice(a, b):
    p = a @ b
    return p, np.sqrt(np.abs(p))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_epilogues_mlp(dtype):
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(dtype) for s in [(5, 7), (7, 6), (6,), (6, 3), (3,)]]
    compiled = ac.compile(mlp, device="cuda")
    want = mlp(*args)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for values in (args, [cuda.to_device(a) for a in args]):
        got = compiled(*values)
        got = got.copy_to_host() if is_device_array(got) else got
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert all(e.output_code.count("in its store") == 2 for e in compiled.entries)


def test_a_product_read_twice_is_stored():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    compiled = ac.compile(used_twice, device="cuda")
    for got, want in zip(compiled(a, b), used_twice(a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert "in its store" not in code(compiled)


def scaled_product(a, b, c):
    return (a @ b) / c


def test_fused_epilogue_warns_like_numpy():
    import warnings
    a, b, c = np.ones((3, 4)), np.ones((4, 2)), np.array([1.0, 0.0])
    compiled = ac.compile(scaled_product, device="cuda")
    with warnings.catch_warnings(record=True) as plain:
        warnings.simplefilter("always")
        want = scaled_product(a, b, c)
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        got = compiled(a, b, c)
    np.testing.assert_array_equal(got, want)
    assert [str(w.message) for w in got_warnings] == [str(w.message) for w in plain]
    assert plain and "in its store" in code(compiled)
