"""Transfers of one call without loops (simulator): each host input is copied to the device
once per call however many kernels read it, results are copied back once, a host scalar (a
dynamic int, a NumPy scalar, a 0-d array) is a kernel argument (never copied, one entry for
every value), and device inputs are not copied at all."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import runtime
from astcompiler.lower.numba.gpu.devices import is_device_array

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


def address(array):
    """The data pointer (a simulator device array shows its host memory's interface)."""
    face = getattr(array, "__cuda_array_interface__", None) or array.__array_interface__
    return face["data"][0]


def views(x):
    return x[1:, ::2], x.T, x.reshape(-1), x[0], x[..., None], np.asarray(x), (x * 2.0).T


def test_views_of_device_arrays_are_device_views(copies):
    """Where NumPy returns a view, the compiled call on a device array returns a device array
    viewing the same device memory (NumPy's offset and strides; a write to it reaches the
    input), also of a kernel's result; ``np.asarray`` returns the input itself. No copies."""
    x = np.arange(12.0).reshape(3, 4)
    xd = cuda.to_device(x)
    compiled = ac.compile(views)
    compiled(xd)
    copies.update(up=0, down=0)
    got, want = compiled(xd), views(x)
    assert copies == {"up": 0, "down": 0}
    assert got[5] is xd
    for g, w in zip(got[:5], want[:5]):
        assert is_device_array(g) and g.shape == w.shape and g.strides == w.strides
        assert address(g) - address(xd) == address(w) - address(x)
        np.testing.assert_array_equal(g.copy_to_host(), w)
    assert got[6].strides == want[6].strides
    np.testing.assert_array_equal(got[6].copy_to_host(), want[6])
    got[0][0, 1] = -1.0  # x[1, 2] in the input, as NumPy's view would write
    assert xd.copy_to_host()[1, 2] == -1.0


def bump(x):
    v = x[1:]
    v[0] = 5.0
    return v, v * 2.0


def test_writes_through_views_reach_the_device_input():
    x = np.arange(6.0)
    xd = cuda.to_device(x)
    (view, doubled), want = ac.compile(bump)(xd), bump(x)
    np.testing.assert_array_equal(xd.copy_to_host(), x)  # bump wrote x[1] (and xd's)
    np.testing.assert_array_equal(view.copy_to_host(), want[0])
    np.testing.assert_array_equal(doubled.copy_to_host(), want[1])
    view[2] = -1.0
    assert xd.copy_to_host()[3] == -1.0


def flipped(x):
    return x[::-1]


def test_negative_stride_views_are_device_copies():
    """The exact behaviour today (not yet the plain call's): a view with a negative stride is
    computed with NumPy on the host and returned as a new device array (no aliasing)."""
    x = np.arange(6.0)
    xd = cuda.to_device(x)
    got = ac.compile(flipped)(xd)
    assert is_device_array(got)
    np.testing.assert_array_equal(got.copy_to_host(), flipped(x))
    got[0] = -1.0
    assert xd.copy_to_host()[5] == 5.0
