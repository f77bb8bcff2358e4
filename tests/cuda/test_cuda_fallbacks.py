"""Eager fallbacks of device calls (simulator): a call with device arrays whose capture raised
(sizes NumPy rejects) or hit a graph break runs the function with NumPy on host copies of the
device arrays, as the plain call on host arrays would: NumPy's exception, values and warnings;
each device input gets its host copy back (also when the call raised); arrays come back as
device arrays, a returned argument as the caller's own device array."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")


def scale_then_product(a, b):
    a *= 2.0
    return a @ b


def test_rejected_sizes_raise_numpys_error_after_the_write():
    compiled = ac.compile(scale_then_product, device="cuda")
    a, b = np.arange(6.0).reshape(2, 3), np.ones((4, 2))
    want_a = a.copy()
    with pytest.raises(ValueError) as plain:
        scale_then_product(want_a, b)
    ad = cuda.to_device(a)
    with pytest.raises(ValueError) as got:
        compiled(ad, cuda.to_device(b))
    assert str(got.value) == str(plain.value) and "matmul" in str(got.value)
    np.testing.assert_array_equal(ad.copy_to_host(), want_a)  # the write reached the device
    assert compiled.entries[0].is_eager


def quiet_divide(x, y):
    with np.errstate(divide="ignore"):
        z = x / y
    x[0] = 7.0
    return z, x, float(z[1])


def test_graph_break_runs_on_host_copies():
    compiled = ac.compile(quiet_divide, device="cuda")
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.0, 4.0, 1.0])
    want_x = x.copy()
    want = quiet_divide(want_x, y)
    xd, yd = cuda.to_device(x), cuda.to_device(y)
    z, same, scalar = compiled(xd, yd)
    assert is_device_array(z) and same is xd  # the argument itself comes back
    np.testing.assert_array_equal(z.copy_to_host(), want[0])
    np.testing.assert_array_equal(xd.copy_to_host(), want_x)
    assert scalar == want[2] and type(scalar) is float
    np.testing.assert_array_equal(yd.copy_to_host(), y)  # read, not changed
    assert len(compiled.entries) == 1 and compiled.entries[0].is_eager


def product(a, b):
    return a @ b


def test_past_the_recompile_limit_device_calls_run_on_host_copies(monkeypatch):
    monkeypatch.setattr(ac.config, "recompile_limit", 1)
    compiled = ac.compile(product, device="cuda", dynamic=False)
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    np.testing.assert_array_equal(compiled(cuda.to_device(a), cuda.to_device(b)).copy_to_host(),
                                  a @ b)
    c = np.ones((3, 4))
    with pytest.warns(RuntimeWarning, match="recompile_limit"):
        out = compiled(cuda.to_device(c.T.copy()), cuda.to_device(c))  # no new entry
    assert is_device_array(out) and len(compiled.entries) == 1
    np.testing.assert_array_equal(out.copy_to_host(), c.T @ c)
    with pytest.raises(ValueError, match="matmul: Input operand 1 has a mismatch"):
        compiled(cuda.to_device(a), cuda.to_device(c.T.copy()))  # NumPy's error, not the
        # simulator arrays' TypeError
