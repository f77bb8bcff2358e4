"""Everyday NumPy functions that NumPy itself does best, as ``extern`` ops:

* statistics: median, percentile, quantile, average, ptp, cov, corrcoef, count_nonzero and the
  nan-aware nansum/nanprod/nanmean/nanmax/nanmin/nanstd/nanvar/nanargmax/nanargmin/nanmedian/
  nanpercentile/nanquantile;
* comparisons: isclose, allclose, array_equal;
* 1-d numerics: interp, convolve, correlate, polyval, digitize, trapezoid;
* nan_to_num, select, histogram (TUPLE OUTPUT);
* ``np.fft``: fft, ifft, rfft, irfft, fft2, ifft2, fftn, ifftn, rfftn, irfftn, fftshift,
  ifftshift (op names ``fft_<function>``).

Arguments are bound against the NumPy function's own signature, so a bad call raises the same
TypeError as NumPy. Canonical form: the array parameters positionally, every other parameter by
keyword (NumPy defaults made explicit, ``<no value>`` defaults left out), ``axis`` normalized.

PYTHON-SCALAR OUTPUTS: ``allclose`` and ``array_equal`` return a Python ``bool``,
``count_nonzero`` with ``axis=None`` a Python ``int`` (``OpDef.python_scalar_output``);
capture must treat their result as a data-dependent Python value, not an array.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..exc import Unsupported
from ._args import as_dtype, axis_index, axis_tuple, bind, freeze, ndim_of
from .registry import register

AxisMode = str  # "tuple" (int or tuple, sorted tuple), "single" (one int), "none" (no axis)


def _canonical_axis(axis: Any, a: Any, mode: AxisMode) -> Any:
    if axis is None or mode == "none":
        return axis
    ndim = ndim_of(a)
    if ndim == 0:
        return axis  # NumPy's own 0-d rules
    if mode == "single":
        return axis_index(axis, ndim)
    return axis_tuple(axis, ndim, sort=True)


def _check_unsupported(fname: str, params: dict, reject: dict[str, Any]) -> None:
    """Parameters that must keep a given value (anything else is a graph break)."""
    for name, allowed in reject.items():
        if name in params and not _same_constant(params[name], allowed):
            raise Unsupported(f"np.{fname}({name}=...) is not supported")


def _same_constant(value: Any, expected: Any) -> bool:
    """``value is expected``, or an equal plain Python constant (never compares proxies)."""
    if value is expected:
        return True
    return type(value) in (bool, int, float, str) and value == expected


def _extern_normalizer(fname: str, fn: Callable, arrays: tuple[str, ...], axis: AxisMode,
                       reject: dict[str, Any], drop: tuple[str, ...]):
    def normalize(*args, **kwargs):
        params = bind(fn, args, kwargs)
        _check_unsupported(fname, params, {"out": None, "where": True, **reject})
        for name in ("out", "where", *drop):
            params.pop(name, None)
        positional = tuple(freeze(params.pop(name)) for name in arrays)
        if "axis" in params:
            params["axis"] = _canonical_axis(params["axis"], positional[0], axis)
        if params.get("dtype") is not None:
            params["dtype"] = as_dtype(params["dtype"])
        return positional, {k: freeze(v) for k, v in params.items()}
    normalize.__name__ = f"_{fname.replace('.', '_')}_normalize"
    return normalize


def _extern_impl(fn: Callable):
    def impl(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    impl.__name__ = f"_{fn.__name__}"
    return impl


def _extern(fname: str, fn: Callable, *, arrays: tuple[str, ...] = ("a",),
            axis: AxisMode = "tuple", reject: dict[str, Any] | None = None,
            drop: tuple[str, ...] = (), name: str | None = None, doc: str = "",
            **flags: Any) -> None:
    """Register ``fn`` (``np.<fname>``) as an extern op bound through its own signature."""
    register(name or fname, _extern_impl(fn), kind="extern",
             normalize=_extern_normalizer(fname, fn, arrays, axis, reject or {}, drop), **flags,
             aliases=(fn,), doc=doc or f"np.{fname}")


# ---------------------------------------------------------------- statistics

for _name in ("median", "nanmedian"):
    _extern(_name, getattr(np, _name), drop=("overwrite_input",),
            doc=f"np.{_name}(a, axis, keepdims)")
for _name in ("percentile", "quantile", "nanpercentile", "nanquantile"):
    _extern(_name, getattr(np, _name), drop=("overwrite_input",),
            doc=f"np.{_name}(a, q=, axis, method, keepdims, weights)")
_extern("average", np.average, reject={"returned": False},
        doc="np.average(a, axis, weights, keepdims) (returned=True is a tuple: unsupported)")
_extern("ptp", np.ptp, doc="np.ptp(a, axis, keepdims)")
for _name in ("nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar"):
    _extern(_name, getattr(np, _name), doc=f"np.{_name}: NaNs ignored")
for _name in ("nanargmax", "nanargmin"):
    _extern(_name, getattr(np, _name), axis="single", doc=f"np.{_name}(a, axis, keepdims)")
_extern("count_nonzero", np.count_nonzero, doc="np.count_nonzero(a, axis, keepdims): a Python "
        "int when axis is None", python_scalar_output=True)
_extern("cov", np.cov, arrays=("m",), axis="none", doc="np.cov(m, y, rowvar, bias, ddof, ...)")
_extern("corrcoef", np.corrcoef, arrays=("x",), axis="none",
        doc="np.corrcoef(x, y, rowvar, dtype)")

# ---------------------------------------------------------------- comparisons

_extern("isclose", np.isclose, arrays=("a", "b"), axis="none",
        doc="np.isclose(a, b, rtol, atol, equal_nan): a bool array")
_extern("allclose", np.allclose, arrays=("a", "b"), axis="none",
        doc="np.allclose(a, b, rtol, atol, equal_nan): a PYTHON bool", python_scalar_output=True)
_extern("array_equal", np.array_equal, arrays=("a1", "a2"), axis="none",
        doc="np.array_equal(a1, a2, equal_nan): a PYTHON bool", python_scalar_output=True)

# ---------------------------------------------------------------- 1-d numerics

_extern("interp", np.interp, arrays=("x", "xp", "fp"), axis="none",
        doc="np.interp(x, xp, fp, left, right, period)")
_extern("convolve", np.convolve, arrays=("a", "v"), axis="none", doc="np.convolve(a, v, mode)")
_extern("correlate", np.correlate, arrays=("a", "v"), axis="none",
        doc="np.correlate(a, v, mode)")
_extern("polyval", np.polyval, arrays=("p", "x"), axis="none", doc="np.polyval(p, x)")
_extern("digitize", np.digitize, arrays=("x", "bins"), axis="none",
        doc="np.digitize(x, bins, right)")
_extern("trapezoid", np.trapezoid, arrays=("y",), axis="single",
        doc="np.trapezoid(y, x, dx, axis)")
_extern("nan_to_num", np.nan_to_num, arrays=("x",), axis="none", reject={"copy": True},
        doc="np.nan_to_num(x, nan, posinf, neginf) (copy=False writes in place: unsupported)")
_extern("select", np.select, arrays=("condlist", "choicelist"), axis="none",
        doc="np.select(condlist, choicelist, default): lists become tuples")
_extern("bincount", np.bincount, arrays=("x",), axis="none",
        data_dependent_shape=lambda args, kwargs: True,  # max(x) + 1 (at least minlength) bins
        doc="np.bincount(x, weights, minlength): as many bins as the largest value needs")
_extern("histogram", np.histogram, arrays=("a",), axis="none",
        doc="TUPLE OUTPUT: np.histogram(a, bins, range, density, weights) -> (hist, edges)",
        tuple_output=True)

# ---------------------------------------------------------------- np.fft

for _name in ("fft", "ifft", "rfft", "irfft"):
    _extern(f"fft.{_name}", getattr(np.fft, _name), axis="single", name=f"fft_{_name}",
            doc=f"np.fft.{_name}(a, n, axis, norm)")
for _name in ("fft2", "ifft2", "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift"):
    _param = "x" if _name.endswith("shift") else "a"
    _extern(f"fft.{_name}", getattr(np.fft, _name), arrays=(_param,), axis="none",
            name=f"fft_{_name}", doc=f"np.fft.{_name}")

__all__: list[str] = []
