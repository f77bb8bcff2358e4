"""Device loops (simulator): a ``for`` loop whose body is pointwise kernels and whose arrays fit
one thread block is ONE kernel launch per call, the loop inside the kernel (``loops.py``;
the rule is in docs/cuda.md); larger arrays run the host loop around the body's kernels. Results,
warnings and launches per call are checked against the plain call."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import loops, runtime
from astcompiler.lower.numba.gpu.devices import is_device_array
from astcompiler.lower.numba.gpu.launch import LAUNCH

cuda = pytest.importorskip("numba.cuda")


def smooth(u, w, steps):
    for i in range(steps):
        u = 0.5 * u + w * np.tanh(u) + i
    return u


def relax(v, m, steps):
    for _ in range(steps):
        v = v * 0.5 + 0.25
        m = m * 0.5 + v  # reads this trip's v: a second kernel after a syncthreads
    return v, m


def blow_up(u, steps):
    for _ in range(steps):
        u = u * 1e200
    return u


@pytest.fixture
def launches(monkeypatch):
    counts = {"loop": 0, "kernel": 0}
    real_loop, real_kernel = loops.DeviceLoopLauncher.launch, runtime.KernelLauncher.launch

    def loop(self, *args, **kwargs):
        counts["loop"] += 1
        return real_loop(self, *args, **kwargs)

    def kernel(self, *args, **kwargs):
        counts["kernel"] += 1
        return real_kernel(self, *args, **kwargs)
    monkeypatch.setattr(loops.DeviceLoopLauncher, "launch", loop)
    monkeypatch.setattr(runtime.KernelLauncher, "launch", kernel)
    return counts


@pytest.fixture(scope="module")
def smooth_compiled():
    return ac.compile(smooth, device="cuda", dynamic=True)


def host(value):
    return value.copy_to_host() if is_device_array(value) else value


def test_a_loop_that_fits_one_block_is_one_launch(smooth_compiled, launches):
    n = LAUNCH.threads
    u, w = np.linspace(-1.0, 1.0, n), np.full(n, 0.25)
    got = smooth_compiled(u, w, 7)
    np.testing.assert_allclose(got, smooth(u, w, 7), rtol=1e-14)
    assert type(got) is np.ndarray and got.dtype == np.float64
    assert launches == {"loop": 1, "kernel": 0}
    ud, wd = cuda.to_device(u), cuda.to_device(w)
    out = smooth_compiled(ud, wd, 3)
    assert is_device_array(out)
    np.testing.assert_allclose(out.copy_to_host(), smooth(u, w, 3), rtol=1e-14)
    np.testing.assert_array_equal(ud.copy_to_host(), u)  # the carried array is a copy
    assert launches == {"loop": 2, "kernel": 0}
    np.testing.assert_array_equal(smooth_compiled(u, w, 0), smooth(u, w, 0))  # no trip
    text = "\n".join(e.output_code for e in smooth_compiled.entries)
    assert "device loops (the whole loop in one kernel" in text and "cuda.syncthreads()" in text


def test_larger_arrays_run_the_host_loop(smooth_compiled, launches):
    n = LAUNCH.threads + 2
    u, w = np.linspace(-1.0, 1.0, n), np.full(n, 0.25)
    smooth_compiled(u[:-2], w[:-2], 5)  # the entry (a device loop for this size)
    entries = len(smooth_compiled.entries)
    launches.update(loop=0, kernel=0)
    np.testing.assert_allclose(smooth_compiled(u, w, 5), smooth(u, w, 5), rtol=1e-14)
    assert launches == {"loop": 0, "kernel": 5}
    assert len(smooth_compiled.entries) == entries  # the same entry chose the host loop


def test_dependent_kernels_in_one_trip(launches):
    compiled = ac.compile(relax, device="cuda", dynamic=True)
    v, m = np.array([1.0, -2.0]), np.array([[0.5, 1.5], [2.0, -1.0]])
    got_v, got_m = compiled(v, m, 6)
    want_v, want_m = relax(v, m, 6)
    np.testing.assert_allclose(got_v, want_v, rtol=1e-14)
    np.testing.assert_allclose(got_m, want_m, rtol=1e-14)
    assert launches == {"loop": 1, "kernel": 0}


def test_fp_warnings_of_a_device_loop_are_numpys(launches):
    compiled = ac.compile(blow_up, device="cuda", dynamic=True)
    u = np.array([1.0, 1e-300, -1.0])
    with warnings.catch_warnings(record=True) as plain:
        warnings.simplefilter("always")
        want = blow_up(u, 3)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        value = compiled(u, 3)
    np.testing.assert_array_equal(value, want)
    assert [str(w.message) for w in got] == [str(w.message) for w in plain] != []
    assert launches["loop"] == 1  # flagged: the host loop reran to warn as NumPy


def centre(u, steps):
    for _ in range(steps):
        u = (u - u.mean()) * 2.0  # a reduction in the body: not one block's pointwise work
    return u


def test_a_body_with_a_reduction_stays_a_host_loop(launches):
    compiled = ac.compile(centre, device="cuda", dynamic=True)
    u = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(compiled(u, 3), centre(u, 3), rtol=1e-12)
    assert launches["loop"] == 0 and launches["kernel"] >= 3
    assert "device loops" not in compiled.entries[0].output_code
