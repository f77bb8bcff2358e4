"""Which GPU a call runs on (simulator, one device: fake ordinals as in the guard's own test):
the guard keeps each GPU's arrays in their own entry, kernels launch inside ``cuda.gpus[id]``
of the arrays' GPU, and device arrays on two GPUs in one call raise a clear error."""

from __future__ import annotations

import contextlib
import types

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import devices, runtime
from astcompiler.lower.numba.gpu.devices import MixedDevicesError

cuda = pytest.importorskip("numba.cuda")
pytestmark = pytest.mark.skipif(not devices.simulator_enabled(),
                                reason="fake GPU ordinals: the simulator only")


def scaled(x, y):
    return x * 2.0 + y.sum(axis=0)


def on_gpu(array, ordinal):
    """Give a simulator array a fake GPU ordinal where numba keeps it (its context's device)."""
    device = types.SimpleNamespace(id=ordinal)
    array.gpu_data = types.SimpleNamespace(context=types.SimpleNamespace(device=device))
    return array


class Gpus:
    """A stand-in for ``cuda.gpus``: records the ordinal each ``with cuda.gpus[i]`` entered,
    and which one was current at each kernel launch."""

    def __init__(self) -> None:
        self.entered: list[int] = []
        self.current: int | None = None
        self.launches: list[int | None] = []

    def __getitem__(self, ordinal: int):
        @contextlib.contextmanager
        def current():
            self.entered.append(ordinal)
            before, self.current = self.current, ordinal
            try:
                yield
            finally:
                self.current = before
        return current()


@pytest.fixture
def gpus(monkeypatch):
    fake = Gpus()
    monkeypatch.setattr(cuda, "gpus", fake)
    real = runtime.KernelLauncher.launch

    def launch(self, *args, **kwargs):
        fake.launches.append(fake.current)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(runtime.KernelLauncher, "launch", launch)
    return fake


def test_kernels_launch_on_the_gpu_of_the_arrays(gpus):
    compiled = ac.compile(scaled, device="cuda")
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    xd, yd = cuda.to_device(x), cuda.to_device(y)
    assert devices.device_id(xd) == 0
    np.testing.assert_array_equal(compiled(xd, yd).copy_to_host(), scaled(x, y))
    assert gpus.entered == [0] and gpus.launches and set(gpus.launches) == {0}
    x1, y1 = on_gpu(cuda.to_device(x), 1), on_gpu(cuda.to_device(y), 1)
    assert devices.device_id(x1) == 1
    gpus.launches.clear()
    np.testing.assert_array_equal(compiled(x1, y1).copy_to_host(), scaled(x, y))
    assert len(compiled.entries) == 2  # arrays on "GPU 1": a new entry, not the old one
    assert gpus.entered[-1] == 1 and set(gpus.launches) == {1}
    compiled(xd, yd)
    compiled(on_gpu(cuda.to_device(x), 1), on_gpu(cuda.to_device(y), 1))
    assert len(compiled.entries) == 2 and gpus.entered[-2:] == [0, 1]


def test_host_inputs_launch_in_the_current_context(gpus):
    compiled = ac.compile(scaled, device="cuda")
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    np.testing.assert_array_equal(compiled(x, y), scaled(x, y))
    assert gpus.entered == [] and gpus.launches == [None] * len(gpus.launches)


def test_arrays_on_two_gpus_are_a_clear_error(gpus):
    compiled = ac.compile(scaled, device="cuda")
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    with pytest.raises(MixedDevicesError, match=r"one GPU \(x on GPU 1, y on GPU 0\)"):
        compiled(on_gpu(cuda.to_device(x), 1), cuda.to_device(y))
    assert issubclass(MixedDevicesError, ValueError)
