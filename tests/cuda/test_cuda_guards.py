"""Guards and dynamic shapes of the CUDA target (simulator): ``mark_dynamic`` on device arrays,
the guard on which GPU an array lives on (the simulator has one: a fake ordinal), arrays that
only expose ``__cuda_array_interface__``, and the CuPy output path (CuPy is not installed here:
its conversion is checked with a stand-in module)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import devices
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")
# stand-ins that only the simulator accepts (host memory as "device" memory, a fake ordinal)
simulator_only = pytest.mark.skipif(not devices.simulator_enabled(),
                                    reason="a stand-in for the simulator only")


def scaled(x, y):
    return x * 2.0 + y.sum(axis=0)


def test_mark_dynamic_on_device_arrays_keeps_one_entry():
    compiled = ac.compile(scaled, device="cuda")
    for rows in (3, 5, 8):
        x, y = np.arange(rows * 4.0).reshape(rows, 4), np.ones((rows, 4))
        xd, yd = cuda.to_device(x), cuda.to_device(y)
        ac.mark_dynamic(xd, 0)
        ac.mark_dynamic(yd, 0)
        out = compiled(xd, yd)
        assert is_device_array(out)
        np.testing.assert_array_equal(out.copy_to_host(), scaled(x, y))
    assert len(compiled.entries) == 1


class InterfaceArray:
    """A device array known only by its ``__cuda_array_interface__`` (as CuPy's are). Under
    the simulator "device" memory is host memory: it wraps a host buffer."""

    def __init__(self, host: np.ndarray):
        self.host = np.ascontiguousarray(host)

    @property
    def __cuda_array_interface__(self) -> dict:
        face = self.host.__array_interface__
        return {"shape": face["shape"], "typestr": face["typestr"], "data": face["data"],
                "strides": None, "version": 3}

    @property
    def shape(self):
        return self.host.shape

    @property
    def ndim(self):
        return self.host.ndim

    @property
    def dtype(self):
        return self.host.dtype


def bump(x, y):
    x[0] = -1.0  # a mutation of a device input is visible to the caller
    return np.exp(y) + x


@simulator_only
def test_cuda_array_interface_objects():
    x, y = np.arange(4.0), np.linspace(0.0, 1.0, 4)
    fx, fy = InterfaceArray(x), InterfaceArray(y)
    assert is_device_array(fx)
    compiled = ac.compile(bump, device=None)
    out = compiled(fx, fy)
    want_x = x.copy()
    want = bump(want_x, y)
    assert is_device_array(out)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-15)
    np.testing.assert_array_equal(fx.host, want_x)
    assert "CUDA kernel" in "\n".join(e.output_code for e in compiled.entries)


@simulator_only
def test_cupy_inputs_give_cupy_outputs(monkeypatch):
    class FakeCupyArray(InterfaceArray):
        pass
    FakeCupyArray.__module__ = "cupy._core.core"
    made = []

    def asarray(value):
        made.append(value)
        return FakeCupyArray(devices.to_host(value))
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(asarray=asarray))
    compiled = ac.compile(scaled, device=None)
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    out = compiled(FakeCupyArray(x), FakeCupyArray(y))
    assert type(out) is FakeCupyArray and len(made) == 1
    np.testing.assert_array_equal(out.host, scaled(x, y))
    assert "CuPy arrays" in "\n".join(e.output_code for e in compiled.entries)
