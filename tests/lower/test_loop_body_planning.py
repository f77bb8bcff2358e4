"""Loop bodies of a structured numba function are planned like top-level graphs (``build_plan``):
fused kernels (pointwise chains with broadcasting, reductions with producers and per-row
consumers, stores fused into slices) called from the loop, barriers at mutations. Each kernel runs
compiled and plainly on several inputs: same values, dtypes, shapes, input mutations and errors;
the output code shows the loop calling kernels and no second fusion of the structured lowering."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import assert_same, clone

RNG = np.random.default_rng(1010)
S = 70  # loop trips: past config.unroll_limit, so loops stay loops (regions)


def _outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as err:  # the exact error is part of the behaviour
        return None, (type(err), str(err))


def check(fn, *argsets) -> str:
    """Compiled against plain on each argument set (results, errors, mutations); every entry (a
    second one: int arguments no longer specialized) is one structured function that ran
    without a fallback; returns the first entry's output code (static shapes: the planner
    keeps sizes like ``s0 - 2``, which could be 1, out of kernels)."""
    compiled = ac.compile(fn, backend="numba")
    for args in argsets:
        mine, theirs = [clone(a) for a in args], [clone(a) for a in args]
        expected, expected_error = _outcome(fn, theirs)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a run-time fallback warns
            got, got_error = _outcome(compiled, mine)
        assert got_error == expected_error
        if expected_error is None:
            assert_same(got, expected)
        for a, b in zip(mine, theirs):
            if isinstance(b, np.ndarray):
                assert_same(a, b)
    assert 1 <= len(compiled.entries) <= 2
    for entry in compiled.entries:
        assert "one structured numba function" in entry.output_code, entry.output_code
    return compiled.entries[0].output_code


def structured_source(code: str) -> str:
    """The structured function itself (without the kernel modules appended to the code)."""
    start = code.index("def structured_kernel(")
    end = code.find("\n# ---- ", start)
    return code[start:] if end < 0 else code[start:end]


def kernel_calls(code: str) -> list[str]:
    return re.findall(r"\b(kernel_\d+_\w+)\(", structured_source(code))


def assert_planned(code: str, at_least: int = 1) -> None:
    """The loop calls fused kernels, and there is no inline fusion of the structured lowering
    (a fresh array filled by a loop nest of its own: ``for k0 in range(...)``)."""
    assert len(kernel_calls(code)) >= at_least, code
    assert not re.search(r"for k\d+(_\d+)? in range\(", structured_source(code)), code
    assert "# ---- kernel_" in code  # the kernels' sources follow the structured function


def kernel_styles(code: str) -> list[str]:
    return re.findall(r"kernel_\d+_\w+: (pointwise|rows|columns) kernel", code)


# ----------------------------------------------------------------- pointwise with broadcasting


def broadcast_chain(x, w, steps):
    y = np.zeros((w.shape[0], x.shape[0]))
    for t in range(steps):
        y = 0.5 * y + np.sin(x[None, :] * w[:, None]) * t - w[:, None] / (t + 1.0)
    return y


def test_pointwise_chain_with_broadcasting_is_one_kernel():
    code = check(broadcast_chain, (RNG.random(7), RNG.random(5), S), (RNG.random(9), RNG.random(3), S + 5))
    assert_planned(code)
    # the (m, n) chain is one kernel; w[:, None] / (t + 1.0), of shape (m, 1), another
    assert any("multiply_sin_add_subtract" in name for name in kernel_calls(code)), code
    assert len(kernel_calls(code)) == 2


def float32_with_python_floats(x, steps):
    y = x.copy()
    for t in range(steps):
        dt = 0.1 * t
        y = y * dt + 1.5
    return y


def test_python_floats_of_the_loop_stay_weak():
    x = RNG.random(6).astype(np.float32)
    code = check(float32_with_python_floats, (x, S), (x * 2, S + 5))
    assert_planned(code)


# ------------------------------------------------------------------------------- reductions


def reductions(x, steps):
    total = 0.0
    cols = np.zeros(x.shape[1])
    rows = np.zeros((x.shape[0], 1))
    for t in range(steps):
        total = total + (x * x).sum() * t
        cols = cols + (x + t).sum(axis=0)
        rows = rows + x.max(axis=1, keepdims=True) - x.mean(axis=1, keepdims=True)
    return total, cols, rows


def test_whole_axis_and_keepdims_reductions_in_a_loop():
    code = check(reductions, (RNG.random((5, 8)), S), (RNG.random((4, 11)), S + 3))
    assert_planned(code, 3)
    styles = kernel_styles(code)
    assert "rows" in styles and "columns" in styles


def int8_sums(x, steps):
    acc = np.zeros(x.shape[1], np.int8)
    for t in range(steps):
        acc = acc + (x * x).sum(axis=0, dtype=np.int8)
    return acc


def test_int8_reduction_in_a_loop_wraps_like_numpy():
    x = np.array([[100, 50, -7], [100, 90, 3]], np.int8)
    check(int8_sums, (x, S), (x[:, :2], S + 3))


def centred_rows(x, steps):
    out = x.copy()
    for _ in range(steps):
        out = out - out.mean(axis=1, keepdims=True)
        out = out * 1.5
    return out


def test_row_centring_in_a_loop_fuses_like_top_level():
    """``x - x.mean(axis=1, keepdims=True)`` in a loop: one rows kernel with its consumer."""
    code = check(centred_rows, (RNG.random((6, 9)), S), (RNG.random((3, 20)), S + 2))
    assert_planned(code)
    assert "rows" in kernel_styles(code)
    body = structured_source(code)
    loop = body[body.index("for i in range"):]
    assert len(re.findall(r"\bkernel_\d+_\w+\(", loop)) == 1, body  # mean, subtract, multiply


def softmax_steps(x, steps):
    for _ in range(steps):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        x = e / e.sum(axis=1, keepdims=True) + x
    return x


def test_softmax_like_rows_in_a_loop():
    code = check(softmax_steps, (RNG.standard_normal((4, 7)), S), (RNG.standard_normal((2, 30)), S + 2))
    assert_planned(code)
    assert kernel_styles(code).count("rows") >= 1


# ------------------------------------------------------------------------ stores into slices


def jacobi(a, steps):
    a = a.copy()
    b = a.copy()
    for _ in range(steps):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    return a


def test_stores_into_slices_write_in_place():
    code = check(jacobi, (RNG.random(30), S), (RNG.random(7), S + 3))
    assert_planned(code, 2)
    body = structured_source(code)
    assert "view_" in body and "_ac_may_share_memory(" in body, body


def shift_in_place(a, steps):
    for _ in range(steps):
        a[1:] = a[:-1] * 0.5 + 1.0
    return a


def test_store_reading_an_overlapping_view():
    """NumPy reads the whole right-hand side before writing: the kernel writes a temporary."""
    check(shift_in_place, (RNG.random(12), S), (RNG.random(5), S + 2))


def store_between_two_arrays(a, b, steps):
    for _ in range(steps):
        b[1:] = a[1:] * 2.0 - b[:-1]
        a[:-1] = b[1:] + 0.5
    return a, b


def test_store_into_an_argument_that_may_be_the_other_one():
    x = RNG.random(10)
    check(store_between_two_arrays, (x, RNG.random(10), S))
    check(store_between_two_arrays, (x, x, S))  # the same array twice: NumPy's overlap rules


def in_place_scale(a, steps):
    for t in range(steps):
        a[1:-1] = a[1:-1] * 0.5 + t
    return a


def test_store_reading_its_own_view_element_for_element():
    code = check(in_place_scale, (RNG.random(9), S))
    assert "_ac_may_share_memory(" not in structured_source(code)  # the same element, read first


# --------------------------------------------------------------------------- mutation order


def producer_read_after_a_store(x, steps):
    out = np.zeros(x.shape[0])
    for t in range(steps):
        first = x[:, 0] * 2.0 + 1.0
        x[:, 0] = -1.0 * t
        x[:, 1] = x[:, 0] + first
        out = out + first * 3.0
    return out, x


def test_producer_read_after_a_store_in_the_same_body():
    code = check(producer_read_after_a_store, (RNG.random((5, 3)), S), (RNG.random((2, 4)), S + 2))
    assert_planned(code)


def thomas(a, b, c, d):
    nz = d.shape[-1]
    cp, dp = np.zeros_like(d), np.zeros_like(d)
    cprev = c[:, :, 0] / b[:, :, 0]
    dprev = d[:, :, 0] / b[:, :, 0]
    cp[:, :, 0], dp[:, :, 0] = cprev, dprev
    for k in range(1, nz):
        denom = b[:, :, k] - a[:, :, k] * cprev
        dp[:, :, k] = d[:, :, k] - a[:, :, k] * dprev
        dp[:, :, k] = dp[:, :, k] / denom
        cprev = c[:, :, k] / denom
        cp[:, :, k] = cprev
        dprev = dp[:, :, k]
    return cp, dp


def test_tridiagonal_sweep_with_two_stores_per_level():
    def make(nz):
        shape = (3, 4, nz)
        return RNG.random(shape), RNG.random(shape) + 4.0, RNG.random(shape), RNG.random(shape)
    check(thomas, make(S), make(S + 12))


# ------------------------------------------------------------------ nested and while loops


def nested(x, steps):
    y = x.copy()
    for t in range(steps):
        for j in range(x.shape[0]):
            y[j] = y[j] * 0.5 + x[j].sum() * t
        y = y - y.mean(axis=0)
    return y


def test_nested_loops_call_kernels_at_each_level():
    code = check(nested, (RNG.random((S, 6)), 3), (RNG.random((S + 2, 9)), 2))
    assert_planned(code, 3)


def until_small(x):
    n = 0
    while np.abs(x).sum() > 1e-3:
        x = x * 0.5 - x.mean() * 0.1
        n += 1
    return x, n


def test_while_loop_body_and_condition_are_planned():
    code = check(until_small, (RNG.random(8),), (RNG.random(30) * 100.0,))
    assert_planned(code, 2)


def branchy(x, steps):
    for t in range(steps):
        if t % 2 == 0:
            x = x * 0.5 + 1.0
        else:
            x = np.sqrt(np.abs(x)) - x.mean()
    return x


def test_branches_in_a_loop_are_planned():
    code = check(branchy, (RNG.random(5), S), (RNG.random(3), S + 5))
    assert_planned(code, 2)


# ------------------------------------------------------------- Python ints and NumPy errors


def add_counter(x, steps, k):
    y = x.copy()
    for t in range(steps):
        y = y + x * 2 + (k + t)
    return y


def test_python_int_out_of_range_for_uint8_raises_like_numpy():
    x = np.array([1, 2, 3], np.uint8)
    check(add_counter, (x, S, 10), (x, S, 250), (x, S, -1), (x, S, 4))


def empty_max(x, steps):
    total = 0.0
    for t in range(steps):
        total = total + x[t:].max()
    return total


def test_reduction_of_an_empty_slice_raises_like_numpy():
    check(empty_max, (RNG.random(S + 10), S), (RNG.random(S + 10), S + 20))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signed_zeros_in_loop_kernels(dtype):
    def fn(x, steps):
        for _ in range(steps):
            x = np.maximum(x, -x) * np.sign(x) + np.minimum(x, 0.0)
        return x
    x = np.array([-0.0, 0.0, 1.0, -2.0, np.nan], dtype)
    check(fn, (x, S), (-x, S + 3))


def nbody(pos, vel, mass, steps):
    for _ in range(steps):
        diff = pos[None, :, :] - pos[:, None, :]
        r2 = (diff ** 2).sum(axis=-1) + 1e-3
        acc = (diff * (mass[None, :, None] * (r2 ** -1.5)[:, :, None])).sum(axis=1)
        vel += 0.01 * acc
        pos += 0.01 * vel
    return pos, vel


def test_short_rows_reduce_with_one_accumulator():
    """Rows of 3 (points in space) are summed without vector lanes (they cost more than a row)."""
    def make(n):
        return RNG.standard_normal((n, 3)), RNG.standard_normal((n, 3)), RNG.random(n) + 0.5, S
    code = check(nbody, make(9), make(5))
    assert_planned(code, 4)
    assert "rows" in kernel_styles(code) and "for u in range(64)" not in code
