"""Loop regions on the CUDA target (simulator): ``for``/``while``/``if`` regions run as host
loops in the generated wrapper around their subgraphs' CUDA kernels (``runtime.RegionLauncher``);
the trips share the call's transfers, so kernel results stay on the device from trip to trip
and captured host arrays are copied up once."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import runtime
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")


def code(compiled) -> str:
    return "\n".join(e.output_code for e in compiled.entries)


def smooth(u, w, steps):
    for _ in range(steps):
        u = 0.5 * u + w * np.tanh(u)
    return u


def grow(x):
    while x.sum() < 50.0:
        x = x * 2.0 + 1.0
    return x


def branch(x, flag):
    if flag:
        y = x * 3.0
    else:
        y = x - 1.0
    return y.max(axis=0)


def host(value):
    return value.copy_to_host() if is_device_array(value) else value




def test_for_loop_around_kernels_keeps_data_on_the_device(copies):
    compiled = ac.compile(smooth, device="cuda", dynamic=True)
    u, w = np.linspace(-1.0, 1.0, 6), np.full(6, 0.25)
    want = smooth(u, w, 5)
    compiled(u, w, 1)  # compiles (and allocates each kernel's FP flag once)
    copies.update(up=0, down=0)
    got = compiled(u, w, 5)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert type(got) is np.ndarray and got.dtype == want.dtype
    assert copies["up"] <= 2 and copies["down"] == 1  # u and w once, the result once
    np.testing.assert_allclose(compiled(u, w, 2), smooth(u, w, 2), rtol=1e-14)
    assert len(compiled.entries) == 1
    text = code(compiled)
    assert "host loops around CUDA kernels" in text and "cuda.jit" in text
    copies.update(up=0, down=0)
    out = compiled(cuda.to_device(u), cuda.to_device(w), 3)
    assert is_device_array(out) and copies["down"] == 0
    np.testing.assert_allclose(out.copy_to_host(), smooth(u, w, 3), rtol=1e-14)


def test_while_loop_with_a_reduction_condition():
    compiled = ac.compile(grow, device="cuda")
    x = np.array([0.5, 1.0, 0.25])
    for value in (x, cuda.to_device(x)):
        got = host(compiled(value))
        np.testing.assert_array_equal(got, grow(x))
    assert "while_loop" in code(compiled) and "kernel_0_sum" in code(compiled)


@pytest.mark.parametrize("flag", [True, False])
def test_branch_region(flag):
    compiled = ac.compile(branch, device="cuda", dynamic=True)
    x = np.arange(12.0).reshape(3, 4)
    for value in (x, cuda.to_device(x)):
        np.testing.assert_array_equal(host(compiled(value, flag)), branch(x, flag))


def bump_rows(x, n):
    for i in range(n):
        x[i] = x[i] * 2.0 + 1.0
    return x.sum()


def test_writes_in_a_loop_reach_the_caller():
    compiled = ac.compile(bump_rows, device="cuda", dynamic=True)
    x = np.arange(12.0).reshape(4, 3)
    want_x = x.copy()
    want = bump_rows(want_x, 3)
    for value in (x.copy(), cuda.to_device(x)):
        got = compiled(value, 3)
        assert got == want and type(got) is type(want)
        np.testing.assert_array_equal(host(value), want_x)
