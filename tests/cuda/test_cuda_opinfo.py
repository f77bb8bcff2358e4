"""The op-info table (``tests/test_opinfo.py``) on the CUDA target, at its small sizes: every
op of the table in float64, int64 and float32, compiled with ``device="cuda"``: each quick
sample on host inputs (float32: the first), the first also on device inputs (float64, int64),
against plain NumPy
(values, Python type, dtype, shape, inputs afterwards, NumPy's exception).

Tolerances: the table's own (``_tolerance``: 2e-5 for float32, 1e-9 for float64), except
``CUDA_RTOL``: products (the tiled kernel adds in another order than BLAS). Sums of float32
accumulate in float64 (closer to the exact sum than NumPy's pairwise float32 sum: within its
error); libdevice's math functions are within 2 ulp. ``test_gpu_coverage`` checks that the
pointwise ops, reductions and products named there really run as GPU kernels."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import is_device_array

from ..ops.opcheck import clone
from ..test_opinfo import OP_INFOS, QUICK_NUMBA_DTYPES, OpInfo, assert_matches

cuda = pytest.importorskip("numba.cuda")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _to_device(args: tuple) -> tuple:
    return tuple(cuda.to_device(a) if isinstance(a, np.ndarray) and a.ndim > 0
                 and a.flags.c_contiguous else a for a in args)


def _to_host(value):
    if is_device_array(value):
        return value.copy_to_host()
    if isinstance(value, tuple):  # named tuples (QRResult) keep their type
        items = [_to_host(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_to_host(v) for v in value]
    return value


CUDA_DTYPES = QUICK_NUMBA_DTYPES + ("float32",)
# products: the tiled kernel's order of additions (depth <= 4 here): a few eps of the result
CUDA_RTOL = {"matmul": {"float32": 1e-5, "float64": 1e-12},
             "dot": {"float32": 1e-5, "float64": 1e-12}}
ON_GPU: dict[str, bool] = {}  # op name -> whether its graph ran GPU kernels only (no host step)


def _with_tolerance(info: OpInfo, dtype: str) -> OpInfo:
    rtol = CUDA_RTOL.get(info.name, {}).get(dtype)
    return info if rtol is None else dataclasses.replace(info, rtol=max(rtol, info.rtol or 0))


def _check(info: OpInfo, args: tuple, on_device: bool) -> None:
    eager_args, compiled_args = clone(args), clone(args)
    if on_device:
        compiled_args = _to_device(compiled_args)
    compiled = ac.compile(info.fn, device="cuda", fullgraph=info.expect_break is None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = info.fn(*eager_args)
    except Exception as error:  # noqa: BLE001 - NumPy rejects this case: so must we
        if on_device:
            return  # the eager call of a device-array case is not NumPy's
        with pytest.raises(type(error)):
            compiled(*compiled_args)
        return
    actual = compiled(*compiled_args)
    text = "\n".join(e.output_code for e in compiled.entries)
    ON_GPU[info.name] = "CUDA kernel" in text and "NumPy on the host" not in text
    if any(is_device_array(a) for a in compiled_args) and isinstance(expected, np.ndarray) \
            and expected.ndim > 0:  # device calls return device arrays
        assert is_device_array(actual), type(actual)
    assert_matches(_to_host(actual), expected, info)
    assert_matches(_to_host(list(compiled_args)), list(eager_args), info, "inputs after the call")


def _cases() -> list:
    cases = []
    for info in OP_INFOS:
        for dtype in info.dtypes:
            if info.numba and dtype in CUDA_DTYPES:
                marks = [pytest.mark.xfail(reason=info.xfail, strict=False)] if info.xfail else []
                cases.append(pytest.param(info, dtype, marks=marks, id=f"{info.name}-{dtype}"))
    return cases


@pytest.mark.parametrize("info,dtype", _cases())
def test_opinfo_cuda(info: OpInfo, dtype: str) -> None:
    samples = info.samples(np.dtype(dtype))
    quick = [s for s in samples if s.quick] or samples[:1]
    if dtype == "float32":
        quick = quick[:1]
    info = _with_tolerance(info, dtype)
    for number, item in enumerate(quick):
        for on_device in (False, True) if number == 0 and dtype != "float32" else (False,):
            try:
                _check(info, item.args, on_device)
            except AssertionError as error:
                where = "device" if on_device else "host"
                raise AssertionError(f"{info.name} [{dtype}, {item.desc}, {where}]: {error}") \
                    from None


# ops that must run as GPU kernels only (their first float64 sample, host inputs)
GPU_OPS = ("add", "multiply", "divide", "exp", "sqrt", "sin", "tanh", "maximum", "where", "sum",
           "max", "argmax", "argmin", "mean", "var", "std", "matmul", "dot")


@pytest.mark.parametrize("name", GPU_OPS)
def test_gpu_coverage(name: str) -> None:
    info = next(i for i in OP_INFOS if i.name == name)
    item = ([s for s in info.samples(np.dtype("float64")) if s.quick] or
            info.samples(np.dtype("float64")))[0]
    _check(info, item.args, False)
    assert ON_GPU[name], f"{name}: not (only) GPU kernels"
