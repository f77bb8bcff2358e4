"""Transfers of one call without loops (simulator): each host input is copied to the device
once per call however many kernels read it, results are copied back once, a host scalar (a
dynamic int, a NumPy scalar, a 0-d array) is a kernel argument (never copied, one entry for
every value), and device inputs are not copied at all."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.cuda import runtime
from astcompiler.lower.numba.cuda.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")




def scaled(x, y, s):
    return x * s + y, (x * y).sum(), np.maximum(x, y) * s


@pytest.mark.parametrize("values", [(2, 3, -5), (np.float64(2.0), np.float64(-0.5)),
                                    (np.array(2.0), np.array(3.5))])
def test_host_inputs_once_per_call_and_scalars_as_arguments(copies, values):
    compiled = ac.compile(scaled, device="cuda", dynamic=True)
    x, y = np.linspace(-2.0, 2.0, 7), np.arange(7.0)
    compiled(x, y, values[0])  # allocates each kernel's FP flag once
    for s in values:
        copies.update(up=0, down=0)
        got, want = compiled(x, y, s), scaled(x, y, s)
        assert copies == {"up": 2, "down": 2}  # x and y once each; the two arrays back
        for g, w in zip(got, want):
            assert type(g) is type(w) and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    assert len(compiled.entries) == 1
    calls = [line for line in compiled.entries[0].output_code.splitlines()
             if "___kernels[" in line]
    assert calls and all(", s" in line for line in calls)  # s is a kernel argument


def test_device_inputs_are_not_copied(copies):
    compiled = ac.compile(scaled, dynamic=True)
    x, y = np.linspace(-2.0, 2.0, 7), np.arange(7.0)
    xd, yd = cuda.to_device(x), cuda.to_device(y)
    compiled(xd, yd, 3)
    copies.update(up=0, down=0)
    got, want = compiled(xd, yd, 4), scaled(x, y, 4)
    assert copies == {"up": 0, "down": 0}
    assert is_device_array(got[0]) and is_device_array(got[2]) and type(got[1]) is type(want[1])
    np.testing.assert_array_equal(got[0].copy_to_host(), want[0])
    assert got[1] == want[1]
    np.testing.assert_array_equal(got[2].copy_to_host(), want[2])
