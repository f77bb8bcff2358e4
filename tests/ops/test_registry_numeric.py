"""Statistics, comparisons, 1-d numerics and np.fft ops: registry vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.exc import Unsupported
from astcompiler.ops import REGISTRY
from .opcheck import DTYPES, NUMERIC, FakeProxy, canonical, check, noncontiguous, sample

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # all-NaN slices, 0/0


def with_nans(shape, dtype, seed=0):
    x = sample(shape, dtype, seed)
    if x.dtype.kind == "f":
        x.flat[::4] = np.nan
    return x


STATS = [np.median, np.nanmedian, np.ptp, np.nansum, np.nanprod, np.nanmean, np.nanmax,
         np.nanmin, np.nanstd, np.nanvar, np.average, np.count_nonzero]


@pytest.mark.parametrize("fn", STATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_statistics(fn, dtype):
    x = noncontiguous(with_nans((3, 4), dtype))
    for axis in (None, 0, 1, -1, (0, 1), 2):
        check(fn, x, axis)
        check(fn, x, axis=axis, keepdims=True)
    check(fn, sample((), dtype))
    check(fn, [1, 2, 3])


@pytest.mark.parametrize("fn", [np.nanstd, np.nanvar])
def test_ddof(fn):
    x = with_nans((3, 4), "float64")
    check(fn, x, 0, None, None, 1)
    check(fn, x, axis=1, ddof=2, dtype=np.float32)


@pytest.mark.parametrize("fn", [np.nanargmax, np.nanargmin])
@pytest.mark.parametrize("dtype", DTYPES)
def test_nanargs(fn, dtype):
    x = with_nans((3, 5), dtype)
    if x.dtype.kind == "f":
        x[:, 0] = 1.0  # no all-NaN slices (NumPy raises ValueError for those)
    for axis in (None, 0, 1, -1, 2):
        check(fn, x, axis)
    check(fn, x, axis=1, keepdims=True)
    check(fn, x, (0, 1))


@pytest.mark.parametrize("fn", [np.percentile, np.quantile, np.nanpercentile, np.nanquantile])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_percentiles(fn, dtype):
    x = with_nans((4, 5), dtype)
    q = 30 if fn in (np.percentile, np.nanpercentile) else 0.3
    qs = [10, 50, 90] if fn in (np.percentile, np.nanpercentile) else (0.1, 0.5, 0.9)
    check(fn, x, q)
    check(fn, x, qs, axis=1)
    check(fn, x, q, 0, None, False, "nearest")
    check(fn, x, q, axis=(0, 1), keepdims=True, method="midpoint")
    check(fn, x, q, axis=-1, overwrite_input=True, inputs=False)  # NumPy scrambles x
    check(fn, x, 500 if fn in (np.percentile, np.nanpercentile) else 5.0)
    check(fn, x, q, method="bogus")
    check(fn, x, sample((2,), "float64") ** 2 / 10)


def test_average_weights():
    x = sample((3, 4))
    check(np.average, x, weights=sample((3, 4), "float64", 1) ** 2)
    check(np.average, x, 1, sample((4,), "float64", 1) ** 2)
    with pytest.raises(Unsupported):
        REGISTRY["average"].canonical((FakeProxy(x),), {"returned": True})


def test_statistics_unsupported_and_canonical():
    x = FakeProxy(sample((3, 4)))
    with pytest.raises(Unsupported):
        REGISTRY["nansum"].canonical((x,), {"out": np.empty(4)})
    with pytest.raises(Unsupported):
        REGISTRY["nansum"].canonical((x,), {"where": FakeProxy(np.ones((3, 4), bool))})
    assert canonical(np.nansum, x, 1) == canonical(np.nansum, x, axis=(-1,))
    assert canonical(np.median, x, (1, 0)) == canonical(np.median, x, axis=(0, 1))
    check(np.nansum, sample((3,)), bogus=1)
    check(np.median, sample((3,)), 0, None, False, False, 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cov_corrcoef(dtype):
    x = sample((3, 6), dtype)
    for fn in (np.cov, np.corrcoef):
        check(fn, x)
        check(fn, x.T, rowvar=False)
        check(fn, x[0], x[1])
        check(fn, x, dtype=np.float32)
    check(np.cov, x, bias=True)
    check(np.cov, x, ddof=2)
    check(np.cov, x, fweights=np.array([1, 2, 1, 1, 3, 1]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_comparisons(dtype):
    a = with_nans((3, 4), dtype)
    b = a + (1e-9 if a.dtype.kind == "f" else 0) if a.dtype.kind != "b" else a.copy()
    for fn in (np.isclose, np.allclose):
        check(fn, a, b)
        check(fn, a, b, equal_nan=True)
        check(fn, a, b, 0.0, 0.0)
        check(fn, a, 1.0, rtol=0.5, atol=0.5)
        check(fn, a, sample((4,), dtype))
        check(fn, a, sample((5,), dtype))
    check(np.array_equal, a, b)
    check(np.array_equal, a, a.copy(), equal_nan=True)
    check(np.array_equal, a, sample((2,), dtype))


def test_python_scalar_outputs_are_marked():
    assert type(REGISTRY["allclose"].impl(np.ones(2), np.ones(2))) is bool
    for name in ("allclose", "array_equal", "count_nonzero"):
        assert REGISTRY[name].python_scalar_output, name


@pytest.mark.parametrize("dtype", NUMERIC)
def test_interp(dtype):
    xp = np.sort(sample((6,), dtype))
    fp = sample((6,), dtype, 1)
    x = sample((3, 2), "float64", 2)
    check(np.interp, x, xp, fp)
    check(np.interp, 0.5, xp, fp)
    check(np.interp, x, xp, fp, left=-1, right=1)
    check(np.interp, x, xp, fp, period=3)
    check(np.interp, x, xp, fp[:3])


@pytest.mark.parametrize("fn", [np.convolve, np.correlate])
@pytest.mark.parametrize("dtype", DTYPES)
def test_convolve_correlate(fn, dtype):
    a, v = sample((7,), dtype), sample((3,), dtype, 1)
    check(fn, a, v)
    for mode in ("full", "same", "valid", "bogus"):
        check(fn, a, v, mode)
        check(fn, a, v, mode=mode)
    check(fn, a, sample((0,), dtype))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_polyval_digitize_trapezoid(dtype):
    p, x = sample((4,), dtype), sample((3, 2), dtype, 1)
    check(np.polyval, p, x)
    check(np.polyval, [1, 2, 3], 2.0)
    bins = np.sort(sample((5,), dtype, 2))
    check(np.digitize, x, bins)
    check(np.digitize, x, bins, True)
    y = sample((4, 5), dtype)
    check(np.trapezoid, y)
    check(np.trapezoid, y, dx=0.5, axis=0)
    check(np.trapezoid, y, sample((5,), "float64", 3))
    check(np.trapezoid, y, axis=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_to_num(dtype):
    x = with_nans((3, 4), dtype)
    if x.dtype.kind == "f":
        x[0, 0], x[1, 1] = np.inf, -np.inf
    check(np.nan_to_num, x)
    check(np.nan_to_num, x, nan=-1.0, posinf=9.0, neginf=-9.0)
    check(np.nan_to_num, x, True, 5)
    with pytest.raises(Unsupported):
        REGISTRY["nan_to_num"].canonical((FakeProxy(x),), {"copy": False})


def test_select():
    x = sample((5,))
    check(np.select, [x < -0.5, x > 0.5], [x, x ** 2])
    check(np.select, [x < -0.5, x > 0.5], [x, x ** 2], default=-1.0)
    check(np.select, (x < 0,), (x,), 7)
    check(np.select, [x < 0], [x, x])


@pytest.mark.parametrize("dtype", NUMERIC)
def test_histogram(dtype):
    x = sample((20,), dtype)
    check(np.histogram, x)
    check(np.histogram, x, 5)
    check(np.histogram, x, bins=[-3, 0, 3])
    check(np.histogram, x, 4, (-2, 2), True)
    check(np.histogram, x, 4, weights=sample((20,), "float64", 1))
    assert REGISTRY["histogram"].tuple_output


FFTS = [np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft]


@pytest.mark.parametrize("fn", FFTS)
@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "complex128"))
def test_fft_1d(fn, dtype):
    x = noncontiguous(sample((4, 6), dtype))
    if fn is np.fft.rfft and x.dtype.kind == "c":
        x = x.real.copy()
    check(fn, x)
    check(fn, x, 8)
    check(fn, x, None, 0)
    check(fn, x, axis=-1, norm="ortho")
    check(fn, x, n=3, axis=0, norm="forward")
    check(fn, x, axis=2)
    check(fn, x, norm="bogus")


@pytest.mark.parametrize("fn", [np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn,
                                np.fft.rfftn, np.fft.irfftn])
def test_fft_nd(fn):
    x = sample((4, 6, 2))
    check(fn, x)
    check(fn, x, axes=(0, 1))
    check(fn, x, (4, 4), (1, 2))
    check(fn, x, norm="ortho")


@pytest.mark.parametrize("fn", [np.fft.fftshift, np.fft.ifftshift])
def test_fftshift(fn):
    x = sample((4, 5), "int32")
    check(fn, x)
    check(fn, x, 0)
    check(fn, x, axes=(1,))
