"""Dynamic sizes keep their kernels: after a second input size (automatic dynamic) or with
``dynamic=True``, sizes are sympy expressions (``s0 - 2``, an unbacked window ``u0``); the planner
fuses them as it fuses numbers, reads each loop bound from an operand of that size, and tests at
run time the sizes it could not prove equal (falling back to NumPy per kernel)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import astcompiler as ac


def jacobi(u):
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def windows(u, k):
    s = 0.0
    for i in range(u.shape[0] - k + 1):
        s += (u[i:i + k] * 2.0 + 1.0).sum()
    return s


def scaled_windows(u, k):
    out = np.zeros(u.shape[0] + 1)
    for i in range(u.shape[0] - k + 1):
        out[i:i + k] = u[i:i + k] * 2.0 + out[i + 1:i + k + 1]
    return out


def relax(u, w, n):
    for _ in range(n):
        u = 0.5 * u + w * np.sqrt(u)
    return u


def stores(a, b, out, n, reps):
    for t in range(reps):
        out[1:n] = a[1:n] * b[1:n] + t
    return out


def kernels(code: str) -> list[str]:
    return re.findall(r"^from (kernel_\d+_\w+?)_[0-9a-f]{12} import", code, re.M)


def numpy_calls(code: str) -> str:
    found = re.search(r"^#   NumPy calls in the wrapper: (.*)$", code, re.M)
    return found.group(1) if found else ""


@pytest.fixture(scope="module")
def compiled_jacobi():
    return ac.compile(jacobi, backend="numba")


def test_jacobi_after_a_second_size_is_one_fused_kernel(compiled_jacobi):
    rng = np.random.default_rng(0)
    for n in (8, 9, 5, 3, 2):  # 3: a 1 x 1 interior; 2: an empty one
        u = rng.random((n, n))
        assert np.array_equal(compiled_jacobi(u), jacobi(u))
    assert len(compiled_jacobi.entries) == 2  # the static one, then one dynamic entry
    code = compiled_jacobi.entries[-1].output_code
    assert [k for k in kernels(code) if "add" in k] == ["kernel_1_add_multiply"]
    assert "add" not in numpy_calls(code) and "multiply" not in numpy_calls(code)
    assert "view_multiply = copy[1:-1, 1:-1]" in code  # the kernel stores into the interior


def test_jacobi_edge_sizes_match_numpy(compiled_jacobi):
    for shape in ((1, 1), (0, 0), (1, 7), (7, 1)):
        u = np.arange(float(np.prod(shape))).reshape(shape)
        assert np.array_equal(compiled_jacobi(u), jacobi(u))


def test_a_window_of_run_time_length_is_a_kernel():
    compiled = ac.compile(windows, backend="numba")
    u = np.random.default_rng(1).random(12)
    for k in (3, 4, 1, 12, 2):
        assert compiled(u, k) == windows(u, k)
    assert len(compiled.entries) == 2
    assert "kernel_0_multiply_add_sum" in compiled.entries[-1].output_code


def test_a_pointwise_window_serves_every_length():
    compiled = ac.compile(scaled_windows, backend="numba")
    u = np.random.default_rng(5).random(10)
    for k in (3, 4, 1, 10, 2, 9):
        assert np.array_equal(compiled(u, k), scaled_windows(u, k))
    assert len(compiled.entries) == 2
    code = compiled.entries[-1].output_code
    assert any("multiply_add" in k for k in kernels(code))
    # the kernel's operands are tested against its run-time size, not the traced window's
    assert not re.search(r"getitem\w*\.shape\[0\] == \d", code)


def test_equal_dynamic_sizes_fuse_into_one_kernel():
    compiled = ac.compile(relax, backend="numba", dynamic=True)
    rng = np.random.default_rng(2)
    for m in (5, 7, 2):
        u, w = rng.random(m), rng.random(m)
        assert np.array_equal(compiled(u, w, 3), relax(u, w, 3))
    assert len(compiled.entries) == 1
    code = compiled.entries[-1].output_code
    for m in (1, 0):  # specialized sizes (entries of their own)
        u, w = rng.random(m), rng.random(m)
        assert np.array_equal(compiled(u, w, 3), relax(u, w, 3))
    assert kernels(code) == ["kernel_0_multiply_sqrt_add"]  # all four ops in one kernel


def test_equal_dynamic_sizes_that_differ_at_run_time_take_numpys_path():
    compiled = ac.compile(relax, backend="numba", dynamic=True)
    rng = np.random.default_rng(3)
    u, w = rng.random(6), rng.random(6)
    assert np.array_equal(compiled(u, w, 2), relax(u, w, 2))
    bad = rng.random(4)
    with pytest.raises(ValueError) as eager:
        relax(u, bad, 2)
    with pytest.raises(ValueError) as ours:
        compiled(u, bad, 2)
    assert str(ours.value) == str(eager.value)


def test_a_dynamic_store_in_a_loop_is_a_kernel():
    compiled = ac.compile(stores, backend="numba")
    rng = np.random.default_rng(4)
    for m, n, reps in ((6, 5, 3), (9, 8, 4), (9, 1, 2), (4, 4, 3), (3, 2, 2), (5, 9, 2)):
        a, b = rng.random(m), rng.random(m)
        assert np.array_equal(compiled(a, b, np.zeros(m), n, reps),
                              stores(a, b, np.zeros(m), n, reps))
    assert len(compiled.entries) == 2
    code = compiled.entries[-1].output_code
    body = code[code.index("def structured_kernel"):code.index("# ---- ")]
    assert "kernel_0_multiply_add(getitem, getitem_1, i, view_add)" in body


def test_a_dynamic_store_whose_operands_differ_raises_numpys_error():
    compiled = ac.compile(stores, backend="numba")
    rng = np.random.default_rng(6)
    for m, reps in ((6, 3), (8, 4)):
        a, b = rng.random(m), rng.random(m)
        assert np.array_equal(compiled(a, b, np.zeros(m), m - 1, reps),
                              stores(a, b, np.zeros(m), m - 1, reps))
    a, b, out = rng.random(7), rng.random(4), np.zeros(7)
    with pytest.raises(ValueError):
        stores(a, b, out.copy(), 6, 2)
    with pytest.raises(ValueError):  # (numba's array code words the broadcast error its way)
        compiled(a, b, out, 6, 2)
    assert not out.any()
