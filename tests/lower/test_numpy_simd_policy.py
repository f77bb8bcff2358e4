"""Ufuncs NumPy's SIMD loops compute faster stay NumPy steps (``lower/numba/numpy_simd.py``).

The policy reads NumPy's CPU features and its build's dispatch; these tests set the feature (and
the dispatch answer) themselves, so they run the same on every CPU.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import numpy_simd


@pytest.fixture(autouse=True)
def policy_on():
    """The policy at its default (the test session switches it off, tests/conftest.py); the CPU
    feature is not part of a persisted entry's key: compile afresh here."""
    with ac.config.patch(persistent_cache=False, numpy_simd_math=True):
        yield


def set_simd(monkeypatch: pytest.MonkeyPatch, available: bool) -> None:
    monkeypatch.setitem(numpy_simd.cpu_features(), numpy_simd.FEATURE, available)
    monkeypatch.setattr(numpy_simd, "dispatched", lambda ufunc, dtype: True)


def parts(compiled) -> tuple[str, str]:
    """(the wrapper's code, its kernels' code) of a compiled function's only entry."""
    code = compiled.entries[0].output_code
    cut = code.find("# ---- kernel")
    return (code, "") if cut < 0 else (code[:cut], code[cut:])


def tanh_plus_one(x):
    return np.tanh(x) + 1.0


def sqrt_sin(x, y):
    return np.sqrt(x) * np.sin(y) + 2.0


X32 = np.linspace(-3.0, 3.0, 64, dtype=np.float32)
Y32 = np.linspace(0.5, 9.0, 64, dtype=np.float32)


def test_policy_follows_numpy_cpu_features(monkeypatch):
    set_simd(monkeypatch, False)
    assert not any(numpy_simd.numpy_faster(n, d) for n, d in numpy_simd.NUMPY_FASTER)
    set_simd(monkeypatch, True)
    assert numpy_simd.numpy_faster(np.tanh, "float32")
    assert numpy_simd.numpy_faster(np.sin, "float32")
    assert not numpy_simd.numpy_faster(np.sqrt, "float32")  # not in the table: kernels keep it
    assert not numpy_simd.numpy_faster(np.tanh, "int64")
    assert not numpy_simd.numpy_faster(np.sin, "float64")  # NumPy's float64 sin is slower here


def test_dispatch_query_answers_from_numpy():
    """NumPy >= 2 reports its dispatch: a loop it does not have is never 'dispatched'."""
    pytest.importorskip("numpy.lib.introspect")
    assert numpy_simd.dispatched(np.sin, "int64") is False
    assert isinstance(numpy_simd.dispatched(np.sin, "float32"), bool)


def numpy_call(op: str, arg: str, wrapper: str) -> bool:
    """The wrapper calls NumPy's ``op`` on ``arg``: directly, or in a frame at the user's line
    (``___at_N(op, arg)``, so its warnings have the user's location)."""
    return re.search(rf"(^|[^\w]){op}\({arg}\)|___at_\d+\({op}, {arg}\)", wrapper) is not None


def test_chosen_op_is_a_numpy_step_and_bit_equal(monkeypatch):
    set_simd(monkeypatch, True)
    compiled = ac.compile(tanh_plus_one, backend="numba")
    result = compiled(X32)
    expected = tanh_plus_one(X32)
    assert result.dtype == expected.dtype and np.array_equal(result, expected)
    wrapper, kernels = parts(compiled)
    assert numpy_call("op_tanh", "x", wrapper)
    assert "np.add(" in kernels and "np.tanh(" not in kernels and "vm_tanh" not in kernels


def test_neighbours_still_fuse(monkeypatch):
    set_simd(monkeypatch, True)
    compiled = ac.compile(sqrt_sin, backend="numba")
    x, y = Y32, Y32 * np.float32(3.0)
    result = compiled(x, y)
    expected = sqrt_sin(x, y)
    assert result.dtype == expected.dtype and np.array_equal(result, expected)
    wrapper, kernels = parts(compiled)
    assert numpy_call("op_sin", "y", wrapper) and "op_sqrt" not in wrapper
    assert kernels.count("# ---- kernel") == 1
    assert "np.sqrt(" in kernels and "np.multiply(" in kernels and "np.sin(" not in kernels


@pytest.mark.parametrize("how", ["no SIMD feature", "switched off"])
def test_kernels_keep_the_op_otherwise(monkeypatch, how):
    set_simd(monkeypatch, how == "switched off")
    with ac.config.patch(numpy_simd_math=how != "switched off"):
        compiled = ac.compile(tanh_plus_one, backend="numba")
        result = compiled(X32)
    np.testing.assert_allclose(result, tanh_plus_one(X32), rtol=0, atol=3e-7)  # libm: 2 ulp
    wrapper, kernels = parts(compiled)
    assert "op_tanh" not in wrapper and "np.tanh(" in kernels


def sin_steps(x, n):
    for _ in range(n):
        x = np.sin(x) + 1.0
    return x


def test_structured_loop_code_keeps_its_rule(monkeypatch):
    """Inside one structured njit function the op stays in the compiled loop."""
    set_simd(monkeypatch, True)
    compiled = ac.compile(sin_steps, backend="numba")
    result = compiled(X32, 70)  # past unroll_limit: a loop region
    np.testing.assert_allclose(result, sin_steps(X32, 70), rtol=0, atol=1e-5)
    code = compiled.entries[0].output_code
    assert "one structured numba function" in code and "op_sin" not in code


def test_small_static_arrays_keep_the_kernel(monkeypatch):
    set_simd(monkeypatch, True)
    small = X32[: numpy_simd.MIN_ELEMENTS - 1]
    compiled = ac.compile(tanh_plus_one, backend="numba")
    np.testing.assert_allclose(compiled(small), tanh_plus_one(small), rtol=0, atol=3e-7)
    wrapper, kernels = parts(compiled)
    assert "op_tanh" not in wrapper and "np.tanh(" in kernels
