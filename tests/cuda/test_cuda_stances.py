"""Eager paths of calls with device arrays (simulator): the eager stances, ``disable=True``, the
NumPy backends (``eager``, ``aot_eager``, ``force_backend``) and device arguments that share
memory all run the function with NumPy on host copies of the device arrays (``HostRun``):
the plain call's values and warnings, written copies back in the caller's device arrays,
results as device arrays. Host copies of device arrays that overlap overlap as they do
(``HostCopies``). And CuPy's BLAS product (a stand-in module: CuPy is not installed) warns as
NumPy's ``matmul`` does."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu import devices, matmul
from astcompiler.lower.numba.gpu.devices import HostCopies, is_device_array
from tests.cuda.test_cuda_guards import InterfaceArray, simulator_only
from tests.helpers import outcome

cuda = pytest.importorskip("numba.cuda")

SEEN: list[type] = []  # the array types the function body ran on (NumPy's, on host copies)


def bump(x, y):
    SEEN.extend((type(x), type(y)))
    x += 1.0
    return np.sqrt(np.abs(x)) * 2.0 + y, float(np.log(y - 1.0).sum())  # warns: log(0)


def run_device(compiled, x, y):
    """``compiled`` on device copies of ``x``, ``y``: (result on the host, outcome, x after)."""
    xd, yd = cuda.to_device(x), cuda.to_device(y)
    SEEN.clear()
    value, error, found = outcome(compiled, (xd, yd))
    assert error is None and is_device_array(value[0])
    assert SEEN == [np.ndarray, np.ndarray]  # NumPy ran, never on the device arrays
    return (value[0].copy_to_host(), value[1]), found, xd.copy_to_host()


def plain(x, y):
    x = x.copy()
    value, _, found = outcome(bump, (x, y))
    return value, found, x


X, Y = np.arange(4.0), np.ones(4)


def check(compiled) -> None:
    got, got_warnings, got_x = run_device(compiled, X, Y)
    want, want_warnings, want_x = plain(X, Y)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] and got_warnings == want_warnings and want_warnings
    np.testing.assert_array_equal(got_x, want_x)  # the mutation reached the caller's array


@pytest.mark.parametrize("stance", ["force_eager", "eager_on_recompile", "eager_then_compile",
                                    "aot_eager_then_compile"])
def test_eager_stances_run_numpy_on_host_copies(stance):
    compiled = ac.compile(bump)
    with ac.set_stance(stance):
        check(compiled)
    assert compiled.entries == []  # (aot_eager_then_compile: its probe's entry is not kept)


def test_eager_on_recompile_uses_a_matching_device_entry():
    compiled = ac.compile(bump)
    check(compiled)  # compiles the device entry
    assert len(compiled.entries) == 1 and not compiled.entries[0].is_eager
    with ac.set_stance("eager_on_recompile"):
        check(compiled)  # a hit: the GPU entry
        got, _, _ = run_device(compiled, np.arange(6.0), np.ones(6))  # a miss: NumPy eagerly
    assert len(compiled.entries) == 1
    np.testing.assert_array_equal(got[0], plain(np.arange(6.0), np.ones(6))[0][0])


def test_disabled_function_runs_numpy_on_host_copies():
    check(ac.compile(bump, disable=True))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_numpy_backends_run_on_host_copies(backend):
    compiled = ac.compile(bump, backend=backend)
    check(compiled)
    check(compiled)  # the entry's guard holds for device arrays: one entry
    assert len(compiled.entries) == 1
    host, _, _ = outcome(compiled, (X.copy(), Y))  # host arrays: another entry, host results
    assert isinstance(host[0], np.ndarray) and len(compiled.entries) == 2


def test_force_backend_eager_on_device_arrays():
    compiled = ac.compile(bump)
    with ac.set_stance(force_backend="eager"):
        check(compiled)


@simulator_only
def test_force_eager_on_interface_objects():
    x = X.copy()
    fx, fy = InterfaceArray(x), InterfaceArray(Y)
    compiled = ac.compile(bump)
    SEEN.clear()
    with ac.set_stance("force_eager"):
        value, _, found = outcome(compiled, (fx, fy))
    assert SEEN == [np.ndarray, np.ndarray] and is_device_array(value[0])
    want, want_warnings, want_x = plain(X, Y)
    np.testing.assert_array_equal(value[0].copy_to_host(), want[0])
    assert value[1] == want[1] and found == want_warnings
    np.testing.assert_array_equal(fx.host, want_x)


@simulator_only
def test_force_eager_on_cupy_arrays_gives_cupy_arrays(monkeypatch):
    class FakeCupyArray(InterfaceArray):
        pass
    FakeCupyArray.__module__ = "cupy._core.core"
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        asarray=lambda value: FakeCupyArray(devices.to_host(value))))
    x = X.copy()
    with ac.set_stance("force_eager"):
        value, _, found = outcome(ac.compile(bump), (FakeCupyArray(x), FakeCupyArray(Y)))
    want, want_warnings, _ = plain(X, Y)
    assert type(value[0]) is FakeCupyArray and found == want_warnings
    np.testing.assert_array_equal(value[0].host, want[0])


# ----- device arguments that share memory ----------------------------------------------------

def shift(x, y):
    SEEN.extend((type(x), type(y)))
    x[0] = 50.0  # y[1] is x[0]: NumPy sees the write through y
    seen = float(y[1])
    x += y  # overlapping operands: NumPy's ufunc copies y first
    return x * 1.0, seen


def test_overlapping_device_views_follow_numpy():
    base = np.arange(6.0)
    want_base = base.copy()
    want = shift(want_base[1:], want_base[:-1])
    d = cuda.to_device(base)
    compiled = ac.compile(shift)
    SEEN.clear()
    got = compiled(d[1:], d[:-1])
    assert SEEN == [np.ndarray, np.ndarray] and compiled.entries == []  # eagerly, no entry
    np.testing.assert_array_equal(got[0].copy_to_host(), want[0])
    assert got[1] == want[1] == 50.0
    np.testing.assert_array_equal(d.copy_to_host(), want_base)  # visible to the caller
    # disjoint views of the same buffer compile (a GPU entry), and refuse overlapping calls
    out = compiled(d[:3], d[3:])
    assert len(compiled.entries) == 1 and not compiled.entries[0].is_eager
    assert is_device_array(out[0])
    with ac.set_stance("force_eager"):
        base2 = np.arange(6.0)
        d2 = cuda.to_device(base2)
        compiled(d2[1:], d2[:-1])
        shift(base2[1:], base2[:-1])
        np.testing.assert_array_equal(d2.copy_to_host(), base2)


def test_reversed_and_strided_device_views():
    compiled = ac.compile(shift)
    for cut in ((slice(5, 2, -1), slice(3, 6)), (slice(4, None, -2), slice(1, 6, 2))):
        base = np.arange(6.0)  # reversed views of the same elements; interleaved ones
        want = shift(base[cut[0]], base[cut[1]])
        d = cuda.to_device(np.arange(6.0))
        got = compiled(d[cut[0]], d[cut[1]])
        np.testing.assert_array_equal(got[0].copy_to_host(), want[0])
        assert got[1] == want[1]
        np.testing.assert_array_equal(d.copy_to_host(), base)


@ac.disable
def helper(x):
    SEEN.append(type(x))
    return x * 2.0


def calls_a_disabled_helper(x):
    return helper(x + 1.0) - 1.0


def test_a_disabled_helper_sees_numpy_arrays():
    x = np.arange(4.0)
    SEEN.clear()
    got = ac.compile(calls_a_disabled_helper)(cuda.to_device(x))
    assert SEEN == [np.ndarray] and is_device_array(got)
    np.testing.assert_array_equal(got.copy_to_host(), calls_a_disabled_helper(x))


def star_args(*arrays, **named):
    SEEN.extend(type(a) for a in (*arrays, *named.values()))
    arrays[0][0] = 5.0
    return arrays[0] + arrays[1] * named["scale"]


def test_device_arrays_in_star_args_run_on_host_copies():
    compiled = ac.compile(star_args)
    for _ in range(2):
        x, y, s = np.arange(3.0), np.ones(3), np.full(3, 2.0)
        want = star_args(x, y, scale=s)
        SEEN.clear()
        xd = cuda.to_device(np.arange(3.0))
        got = compiled(xd, cuda.to_device(y), scale=cuda.to_device(s))
        assert SEEN == [np.ndarray] * 3 and is_device_array(got)
        np.testing.assert_array_equal(got.copy_to_host(), want)
        np.testing.assert_array_equal(xd.copy_to_host(), x)
    assert compiled.entries == []


def twice(x, y):
    x *= 3.0
    return y + 1.0


def test_the_same_device_array_twice():
    compiled = ac.compile(twice)
    for _ in range(2):
        base = np.arange(4.0)
        want = twice(base, base)
        d = cuda.to_device(np.arange(4.0))
        out = compiled(d, d)
        np.testing.assert_array_equal(out.copy_to_host(), want)
        np.testing.assert_array_equal(d.copy_to_host(), base)
    assert len(compiled.entries) == 1


def test_overlapping_host_views_on_the_cuda_target():
    compiled = ac.compile(shift, device="cuda")
    base, want_base = np.arange(6.0), np.arange(6.0)
    got = compiled(base[1:], base[:-1])
    want = shift(want_base[1:], want_base[:-1])
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    np.testing.assert_array_equal(base, want_base)


@simulator_only
def test_overlapping_interface_objects():
    buffer, want_buffer = np.arange(6.0), np.arange(6.0)
    want = shift(want_buffer[1:], want_buffer[:-1])
    got = ac.compile(shift)(InterfaceArray(buffer[1:]), InterfaceArray(buffer[:-1]))
    np.testing.assert_array_equal(got[0].copy_to_host(), want[0])
    assert got[1] == want[1]
    np.testing.assert_array_equal(buffer, want_buffer)


def test_host_copies_share_memory_as_the_device_arrays_do():
    d = cuda.to_device(np.arange(12.0).reshape(3, 4))
    e = cuda.to_device(np.arange(3.0))
    views = [d[1:], d[:, 1], d[0], e, e]
    copies = HostCopies(views)
    hosts = [copies.host(v) for v in views]
    assert all(type(h) is np.ndarray for h in hosts) and hosts[3] is hosts[4]
    for h, v in zip(hosts, views):
        np.testing.assert_array_equal(h, v.copy_to_host())
    assert np.shares_memory(hosts[0], hosts[1]) and np.shares_memory(hosts[1], hosts[2])
    assert not np.shares_memory(hosts[0], hosts[2]) and not np.shares_memory(hosts[0], hosts[3])
    hosts[1][:] = -1.0  # column 1 of d, through the copy
    copies.write_back()
    want = np.arange(12.0).reshape(3, 4)
    want[:, 1] = -1.0
    np.testing.assert_array_equal(d.copy_to_host(), want)


# ----- CuPy's BLAS: no FP flag, a finiteness check instead -----------------------------------

def product(a, b):
    return a @ b


class StandInCupy:
    """CuPy's calls the product uses, on host memory (its own matmul silent, as a GPU's is)."""

    calls: list[str] = []

    @staticmethod
    def asarray(value):
        return value.copy_to_host() if hasattr(value, "copy_to_host") else np.asarray(value)

    @classmethod
    def matmul(cls, a, b):
        cls.calls.append("matmul")
        with np.errstate(all="ignore"):
            return np.matmul(a, b)

    @classmethod
    def isfinite(cls, value):
        cls.calls.append("isfinite")
        return np.isfinite(value)


@pytest.mark.parametrize("fill", [1e200, np.inf, 1.0])
def test_cupy_products_warn_as_numpy(monkeypatch, fill):
    monkeypatch.setattr(matmul, "cupy_module", lambda: StandInCupy)
    a, b = np.full((3, 2), fill), np.full((2, 3), 1e200) * np.array([1.0, 0.0, 1.0])
    compiled = ac.compile(product, device="cuda")
    StandInCupy.calls.clear()
    value, error, found = outcome(compiled, (a, b))
    want, want_error, want_found = outcome(product, (a, b))
    assert StandInCupy.calls == ["matmul", "isfinite"] and error is want_error is None
    np.testing.assert_array_equal(value, want)
    assert found == want_found
    assert bool(want_found) == (fill != 1.0)
    with np.errstate(all="ignore"):  # nothing to warn: no check
        StandInCupy.calls.clear()
        compiled(a, b)
        assert StandInCupy.calls == ["matmul"]
