"""The op-info table (``tests/test_opinfo.py``) on the CUDA target, at its small sizes: each op's
representative sample compiled with ``device="cuda"`` on host inputs, and on device inputs,
against plain NumPy (values, Python type, dtype, shape, inputs afterwards, NumPy's exception)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.cuda.devices import is_device_array

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
    if any(is_device_array(a) for a in compiled_args) and isinstance(expected, np.ndarray) \
            and expected.ndim > 0:  # device calls return device arrays
        assert is_device_array(actual), type(actual)
    assert_matches(_to_host(actual), expected, info)
    assert_matches(_to_host(list(compiled_args)), list(eager_args), info, "inputs after the call")


def _cases() -> list:
    cases = []
    for info in OP_INFOS:
        for dtype in info.dtypes:
            if info.numba and dtype in QUICK_NUMBA_DTYPES:
                marks = [pytest.mark.xfail(reason=info.xfail, strict=False)] if info.xfail else []
                cases.append(pytest.param(info, dtype, marks=marks, id=f"{info.name}-{dtype}"))
    return cases


@pytest.mark.parametrize("info,dtype", _cases())
def test_opinfo_cuda(info: OpInfo, dtype: str) -> None:
    samples = info.samples(np.dtype(dtype))
    sample = ([s for s in samples if s.quick] or samples)[:1]
    for item in sample:
        for on_device in (False, True):
            try:
                _check(info, item.args, on_device)
            except AssertionError as error:
                where = "device" if on_device else "host"
                raise AssertionError(f"{info.name} [{dtype}, {item.desc}, {where}]: {error}") \
                    from None
