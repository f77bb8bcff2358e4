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


def pair_sum(pair):
    return pair[0] * 2.0 + pair[1]


def keyed_difference(d):
    return d["a"] - d["b"]


def test_device_arrays_in_pytrees_stay_on_device(copies):
    """Device arrays inside a list, tuple or dict argument are guarded as device arrays: no copy,
    a device result; the same structure of host arrays is another entry with a host result."""
    x, y = np.arange(6.0), np.linspace(0.0, 1.0, 6)
    xd, yd = cuda.to_device(x), cuda.to_device(y)
    pairs = ac.compile(pair_sum)
    for structure in ([xd, yd], (xd, yd)):
        pairs(structure)
        copies.update(up=0, down=0)
        got = pairs(structure)
        assert copies == {"up": 0, "down": 0}
        assert is_device_array(got)
        np.testing.assert_array_equal(got.copy_to_host(), pair_sum((x, y)))
    keyed = ac.compile(keyed_difference)
    got = keyed({"a": xd, "b": yd})
    assert is_device_array(got)
    np.testing.assert_array_equal(got.copy_to_host(), keyed_difference({"a": x, "b": y}))
    host = pairs([x, y])  # host arrays in the same structure: not the device entry
    assert type(host) is np.ndarray and np.array_equal(host, pair_sum((x, y)))


def tail(x):
    return x[1:]


def test_view_of_a_device_input_is_a_device_copy():
    """The exact behaviour today (not yet the plain call's): where the plain call returns a view
    of a device input, the compiled call computes the view with NumPy on the host and returns it
    as a new device array: the same values, dtype and shape, but no aliasing (a write to it does
    not reach the input)."""
    x = np.arange(6.0)
    xd = cuda.to_device(x)
    got, want = ac.compile(tail)(xd), tail(xd)
    assert is_device_array(got) and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.copy_to_host(), want.copy_to_host())
    got[0] = -1.0  # the plain call's view would write through to xd; this copy does not
    assert xd.copy_to_host()[1] == 1.0
