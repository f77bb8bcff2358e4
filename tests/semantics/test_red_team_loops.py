"""Red team, loop bodies planned like top-level graphs (helper P): plain call vs ``backend="numba"``.

Every test runs a function plainly and compiled over calls whose sizes, dtypes and values change
and compares every observable (``red_team_support.differential``): values bit for bit, types,
dtypes, shapes, identity and aliasing of results, mutations of inputs, NumPy warnings, exceptions.
Loops run more than ``config.unroll_limit`` trips so they stay loops (regions): the limit is
lowered to ``UNROLL_LIMIT`` for every test here (the default, 64, would unroll these loops into
graphs of hundreds of ops that test no region and take seconds each to compile).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import astcompiler as ac

from .red_team_support import differential

pytest.importorskip("numba")

UNROLL_LIMIT = 4  # config.unroll_limit in this file: every loop below runs more trips
T = 40  # loop trips: past the unroll limit


@pytest.fixture(autouse=True)
def loops_stay_loops():
    """Loops of more than ``UNROLL_LIMIT`` trips are loop regions (``config.unroll_limit``)."""
    with ac.config.patch(unroll_limit=UNROLL_LIMIT):
        yield


def relax(u, v, steps):
    for _ in range(steps):
        u = u + 0.5 * (v - u)
    return u


def test_loop_broadcast_shapes_change():
    """``u`` and ``v`` broadcast against each other; which one is size 1 changes between calls."""
    def calls():
        return [(np.linspace(0, 1, 5), np.linspace(-1, 1, 5), T),
                (np.linspace(0, 1, 5), np.array([0.25]), T),
                (np.array([0.5]), np.linspace(-1, 1, 6), T),
                (np.linspace(0, 1, 7).astype(np.float32), np.linspace(-1, 1, 7), T + 1),
                (np.linspace(0, 1, 7).astype(np.float32), np.float32(2.0), T + 2),
                (np.zeros(0), np.zeros(0), T)]
    differential(relax, calls)


def test_loop_2d_row_broadcast():
    def f(x, w, steps):
        y = np.zeros((w.shape[0], x.shape[0]))
        for _ in range(steps):
            y = y * 0.5 + x[None, :] * w[:, None]
        return y
    differential(f, lambda: [(np.arange(4.0), np.arange(3.0), T), (np.arange(5.0), np.ones(1), T),
                             (np.ones(1), np.arange(3.0), T),
                             (np.arange(4, dtype=np.int64), np.arange(2.0), T)])


def test_loop_overlapping_inplace_shift():
    """``u[1:] = u[:-1] + 1`` reads what it writes (NumPy buffers the overlapping right side)."""
    def f(u, steps):
        for _ in range(steps):
            u[1:] = u[:-1] + 1.0
        return u
    differential(f, lambda: [(np.arange(6.0), T), (np.arange(9.0), T + 3), (np.ones(2), T)])


def test_loop_inplace_on_view_mutates_caller():
    def f(x, steps):
        y = x[1:]
        for _ in range(steps):
            y *= 0.5
            y += x[:-1] * 0.25
        return y
    differential(f, lambda: [(np.arange(6.0), T), (np.arange(8.0) - 3, T), (np.arange(3.0), T)])


def test_loop_reduction_feeds_pointwise():
    def f(u, steps):
        acc = 0.0
        for _ in range(steps):
            u = u / (np.sqrt((u * u).sum()) + 1.0) + 0.1 * u.mean()
            acc = acc + float(u.max())
        return u, acc
    differential(f, lambda: [(np.arange(5.0), T), (np.linspace(-2, 3, 11), T),
                             (np.linspace(-2, 3, 11).astype(np.float32), T)],
                 rtol=1e-5)  # finding F0: sums in another order than NumPy's


def test_loop_float32_stays_float32_with_python_scalars():
    def f(x, steps):
        for _ in range(steps):
            x = x * 0.999 + 1e-3
        return x, x.dtype
    differential(f, lambda: [(np.linspace(0, 1, 6).astype(np.float32), T),
                             (np.linspace(0, 1, 6), T), (np.arange(6, dtype=np.int32), T)])


def test_loop_index_error_inside_loop():
    """An out-of-bounds read at the last trip raises IndexError with NumPy's message; the writes
    of the earlier trips reached the output argument."""
    def f(x, out, n):
        for i in range(n):
            out[i] = x[i + 1] * 2.0
        return out
    differential(f, lambda: [(np.arange(50.0), np.zeros(50), 49), (np.arange(50.0), np.zeros(50), 50),
                             (np.arange(60.0), np.zeros(60), 60)])


def test_loop_negative_index_wraps():
    def f(x, n):
        s = 0.0
        for i in range(n):
            s = s + x[i - 3]
        return s
    differential(f, lambda: [(np.arange(50.0), 45), (np.arange(50.0), 50), (np.arange(45.0), 49)])


def test_loop_floating_point_error_raised_midway():
    """``np.errstate(all="raise")``: the trip that takes a log of 0 raises FloatingPointError;
    the state written before it is the plain one."""
    def f(u, hist, steps):
        for i in range(steps):
            u = np.log(u) + 1.0
            hist[i] = u.sum()
        return u
    differential(f, lambda: [(np.full(4, 3.0), np.zeros(T), T), (np.full(4, 0.5), np.zeros(T), T),
                             (np.array([3.0, np.exp(-1.0)]), np.zeros(T), T)],
                 errstate={"all": "raise"})


def test_loop_warnings_like_numpy():
    """Default errstate: the same RuntimeWarnings (category and message) as the plain loop."""
    def f(u, steps):
        for _ in range(steps):
            u = np.sqrt(u - 1.0)
        return u
    differential(f, lambda: [(np.full(3, 4.0), T), (np.array([0.5, 9.0]), T)],
                 errstate={"all": "warn"})


@ac.config.patch(unroll_limit=64)  # unrolled, as by default: see the docstring
def test_loop_int_overflow_to_array_raises():
    """A Python int grown in the loop stored into an int64 array raises OverflowError at 2**63.

    The loops here are unrolled (the default limit): in a loop region the same overflow, after
    the region wrote ``out``, puts ``out`` back and reruns in Python where a copy was kept, else
    raises astcompiler's own OverflowError ("outgrew 64 bits", tests/capture/test_regions.py)."""
    def f(out, k, n):
        v = 1
        for i in range(n):
            v = v * k
            out[i % out.shape[0]] = v
        return out
    differential(f, lambda: [(np.zeros(8, np.int64), 3, T), (np.zeros(8, np.int64), 2, 62),
                             (np.zeros(8, np.int64), 2, 70)])


def test_loop_int64_array_wraps():
    def f(x, steps):
        for _ in range(steps):
            x = x * 3 + 1
        return x
    differential(f, lambda: [(np.arange(5, dtype=np.int64), T), (np.arange(5, dtype=np.int32), T),
                             (np.arange(5, dtype=np.uint8), T)])


def test_loop_collects_distinct_arrays():
    """Arrays appended to a list in the loop are distinct objects with their own values."""
    def f(u, steps):
        out = []
        for _ in range(steps):
            u = u * 2.0 - 1.0
            out.append(u)
        return out
    differential(f, lambda: [(np.arange(3.0), T), (np.arange(4.0), T)])


def test_loop_branch_on_reduction():
    def f(u, steps):
        for _ in range(steps):
            if u.sum() > 10.0:
                u = u * 0.5
            else:
                u = u + 1.0
        return u
    differential(f, lambda: [(np.arange(4.0), T), (np.arange(9.0) - 4, T),
                             (np.arange(9.0).astype(np.float32) - 4, T)])


def test_loop_stencil_writes_slice_of_other_array():
    def f(u, steps):
        v = u.copy()
        for _ in range(steps):
            v[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
            u, v = v, u
        return u, v
    differential(f, lambda: [(np.arange(8.0) ** 2, T), (np.arange(3.0), T), (np.arange(2.0), T + 1),
                             (np.linspace(0, 1, 9).astype(np.float32), T)])


def test_loop_stencil_2d_in_place_alias():
    """``u[1:-1, 1:-1] = ...u...`` in place (Gauss-Seidel-like via NumPy's buffered semantics)."""
    def f(u, steps):
        for _ in range(steps):
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return u
    differential(f, lambda: [(np.arange(25.0).reshape(5, 5), T), (np.arange(12.0).reshape(3, 4), T),
                             (np.arange(30.0).reshape(5, 6).T, T)])


def test_loop_noncontiguous_and_readonly_inputs():
    def f(x, w, steps):
        acc = np.zeros_like(x)
        for _ in range(steps):
            acc = acc + x * w
        return acc
    def calls():
        ro = np.arange(6.0)
        ro.flags.writeable = False
        return [(np.arange(12.0)[::2], np.arange(6.0), T), (ro, np.arange(6.0)[::-1], T),
                (np.arange(12.0).reshape(3, 4).T, np.ones((4, 3)), T)]
    differential(f, calls)


def test_loop_same_array_passed_twice():
    def f(a, b, steps):
        for _ in range(steps):
            a += b * 0.5
        return a
    def calls():
        x = np.arange(4.0)
        y = np.arange(4.0)
        return [(x, x, T), (y, y[::-1], T), (np.arange(4.0), np.arange(4.0), T)]
    differential(f, calls)


def test_loop_returns_input_when_no_trip():
    def f(u, steps):
        for _ in range(steps):
            u = u + 1.0
        return u
    differential(f, lambda: [(np.arange(3.0), 0), (np.arange(3.0), T), (np.arange(3.0), 0)])


def test_loop_where_and_clip_in_body():
    def f(u, lo, steps):
        for _ in range(steps):
            u = np.where(u > lo, u - 1.0, -u)
            u = np.clip(u, -3.0, 3.0)
        return u
    differential(f, lambda: [(np.linspace(-5, 5, 7), 0.0, T), (np.linspace(-5, 5, 7), -0.0, T),
                             (np.array([np.nan, 1.0, -0.0]), 0.5, T)])


def test_loop_min_max_nan_propagation():
    def f(u, steps):
        m = u[0]
        for i in range(steps):
            m = np.maximum(m, u[i % u.shape[0]])
            u = np.minimum(u, m)
        return m, u
    differential(f, lambda: [(np.array([1.0, np.nan, 3.0]), T), (np.array([-0.0, 0.0]), T),
                             (np.array([2.0, 1.0, 5.0]), T)])


def test_loop_integer_division_by_zero():
    def f(x, d, steps):
        for _ in range(steps):
            x = x // d + x % d
        return x
    differential(f, lambda: [(np.arange(6, dtype=np.int64), np.array([1, 2, 3, 1, 2, 3]), T),
                             (np.arange(6, dtype=np.int64), np.array([1, 0, 3, 1, 2, 3]), T),
                             (np.arange(6.0), np.array([1.0, 0.0, 3.0, -1.0, 2.0, 3.0]), T)],
                 errstate={"all": "warn"})


OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b * 0.5,
    "mul": lambda a, b: a * b,
    "max": lambda a, b: np.maximum(a, b),
    "where": lambda a, b: np.where(a > b, a, b - 1.0),
    "tanh": lambda a, b: np.tanh(a) + b,
    "abs": lambda a, b: np.abs(a - b),
    "sumrow": lambda a, b: a - a.sum(axis=-1, keepdims=True) * 0.1,
}


def _program(ops: tuple[str, ...]):
    funcs = [OPS[o] for o in ops]

    def f(u, v, steps):
        for _ in range(steps):
            for g in funcs:
                u = g(u, v)
            u = u * 0.5
        return u
    return f


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@example(ops=("abs", "tanh"), shape=(4,), dtype=np.float64, seed=0)  # 4 ulp apart: see below
@given(ops=st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=3).map(tuple),
       shape=st.sampled_from([(4,), (1,), (3, 4), (2, 1)]),
       dtype=st.sampled_from([np.float64, np.float32]), seed=st.integers(0, 100))
def test_loop_generated_bodies(ops, shape, dtype, seed):
    """Random pointwise/row-reduction bodies inside a loop; ops other than tanh are exact."""
    fn = _program(ops)

    def calls():
        rng = np.random.default_rng(seed)
        u = rng.standard_normal(shape).astype(dtype)
        v = rng.standard_normal(shape[-1:]).astype(dtype)
        u2 = rng.standard_normal((2,) + shape).astype(dtype)
        return [(u, v, T), (u2, v, T + 1)]
    # tanh is not NumPy's bits: NumPy's SVML loop and libm's tanh (small static kernels) are
    # each within 1-2 ulp of the exact value, and 40 trips of `tanh(u) + v` then `|u - v|`
    # (a cancellation) can turn 2 ulp of tanh into more ulp of a small result: relative tolerance
    differential(fn, calls, ulp=2 if "tanh" in ops else 0,
                 rtol=1e-4 if "sumrow" in ops else 1e-13 if "tanh" in ops else 0.0)  # finding F0


def test_loop_overlapping_ufunc_inplace_add():
    """``a[1:] += a[:-1]``: NumPy copies the overlapping operand first (not a prefix sum)."""
    def f(a, steps):
        for _ in range(steps):
            a[1:] += a[:-1]
            a *= 0.5
        return a
    differential(f, lambda: [(np.arange(6.0), T), (np.arange(3.0), T)])


def test_loop_reverse_in_place():
    def f(a, steps):
        for _ in range(steps):
            a[:] = a[::-1] * 1.5
            a[::2] = a[1::2] if a.shape[0] % 2 == 0 else a[::2]
        return a
    differential(f, lambda: [(np.arange(6.0), T), (np.arange(4.0), T + 1)])


def test_loop_argmax_index_write():
    def f(u, steps):
        for _ in range(steps):
            i = int(np.argmax(u))
            u[i] = u[i] * -0.5
        return u
    differential(f, lambda: [(np.arange(5.0), T), (np.array([1.0, 1.0, np.nan, 1.0]), T),
                             (np.array([3.0, 3.0]), T)])


def test_while_loop_break_continue():
    def f(u, tol):
        n = 0
        while True:
            n += 1
            u = u * 0.5
            if n % 3 == 0:
                continue
            if np.abs(u).max() < tol:
                break
        return n, u
    differential(f, lambda: [(np.arange(5.0) * 1e6, 1e-3), (np.ones(2), 1e-9), (np.ones(1), 0.3)])


def test_loop_empty_reduction_raises():
    def f(u, steps):
        s = 0.0
        for i in range(steps):
            s = s + u[: steps - i - 1].max()
        return s
    differential(f, lambda: [(np.arange(60.0), 50), (np.arange(60.0), 41)])


def test_loop_shape_grows_by_broadcast():
    """``u`` becomes 2-D on the first trip (broadcast against ``v``)."""
    def f(u, v, steps):
        for _ in range(steps):
            u = u + v * 0.5
        return u
    differential(f, lambda: [(np.arange(3.0), np.ones((2, 3)), T), (np.arange(3.0), np.ones(3), T)])


def test_loop_out_argument_aliases():
    def f(a, b, steps):
        for _ in range(steps):
            np.multiply(a, 0.5, out=b)
            np.add(b[::-1], a, out=a)
        return a, b
    differential(f, lambda: [(np.arange(5.0), np.zeros(5), T), (np.arange(4.0), np.zeros(4), T)])


def test_loop_python_float_accumulator_of_float32_elements():
    """NEP 50: ``0.0 + np.float32`` is ``np.float32``; the sum is rounded to float32 each trip."""
    def f(x, n):
        s = 0.0
        for i in range(n):
            s += x[i % x.shape[0]] * 0.1
        return s, type(s)
    differential(f, lambda: [(np.linspace(0, 1, 7).astype(np.float32), T),
                             (np.linspace(0, 1, 7), T), (np.arange(7, dtype=np.int32), T)])


def test_loop_python_int_accumulator_of_int8_elements_wraps():
    """``0 + np.int8`` is ``np.int8``: the sum wraps, with NumPy's overflow warning."""
    def f(x, n):
        s = 0
        for i in range(n):
            s += x[i % x.shape[0]]
        return s, type(s)
    differential(f, lambda: [(np.array([100, 27, 1], np.int8), T), (np.arange(3, dtype=np.int64), T),
                             (np.array([250, 3], np.uint8), T)], errstate={"all": "warn"})


def test_loop_uint8_element_minus_out_of_range_int_raises():
    def f(x, k, n):
        s = 0
        for i in range(n):
            s = x[i % x.shape[0]] - k
        return s
    differential(f, lambda: [(np.arange(3, dtype=np.uint8), 1, T), (np.arange(3, dtype=np.uint8), 300, T),
                             (np.arange(3, dtype=np.uint8), -1, T)], errstate={"all": "warn"})


def test_loop_numpy_scalar_accumulators_keep_their_type():
    def f(x, n):
        a = np.float32(0.0)
        b = x.sum() * 0
        for i in range(n):
            a = a + x[i % x.shape[0]]
            b = b + (x > 1).sum()
        return a, b, type(a), type(b)
    differential(f, lambda: [(np.linspace(0, 2, 5).astype(np.float32), T),
                             (np.linspace(0, 2, 5), T), (np.arange(5, dtype=np.int16), T)])


def test_loop_window_shorter_than_weights_raises_broadcast_error():
    """Near the end the window ``u[i:i+3]`` is shorter than ``w``: NumPy's ValueError."""
    def f(u, w, n):
        s = np.zeros(3)
        for i in range(n):
            s = s + u[i:i + 3] * w
        return s
    differential(f, lambda: [(np.arange(60.0), np.ones(3), 50), (np.arange(60.0), np.ones(3), 59),
                             (np.arange(60.0), np.ones(1), 45)])


def test_loop_stencil_tiny_and_empty_sizes():
    def f(u, steps):
        for _ in range(steps):
            u[1:-1] = 0.5 * (u[:-2] + u[2:])
            u[2:] += u[:-2].sum()
        return u
    differential(f, lambda: [(np.arange(5.0), T), (np.arange(1.0), T), (np.zeros(0), T),
                             (np.arange(2.0), T), (np.arange(3.0), T)], rtol=1e-12)


def test_loop_warnings_with_inplace_write_each_trip():
    """In place in a loop, default errstate: one warning per trip and op, as NumPy."""
    def f(u, steps):
        for _ in range(steps):
            u[:] = np.sqrt(u) - 1.0
        return u
    differential(f, lambda: [(np.full(3, 9.0), T), (np.array([4.0, 0.5]), T)],
                 errstate={"all": "warn"})


def test_loop_window_out_of_bounds_read():
    def f(u, w, n):
        s = np.zeros(3)
        for i in range(n):
            s = w * 2.0 + s - u[i:i + 3]
        return s
    differential(f, lambda: [(np.arange(60.0), np.ones(3), 59), (np.arange(60.0), np.ones(3), 59),
                             (np.arange(60.0), np.ones(3), 60)])


def test_loop_window_of_one_row_broadcasts():
    def f(a, w, n):
        s = np.zeros((2, 4))
        for i in range(n):
            s = s + a[i:i + 2, :] * w
        return s
    differential(f, lambda: [(np.arange(200.0).reshape(50, 4), np.ones(4), 48),
                             (np.arange(200.0).reshape(50, 4), np.ones(4), 49),
                             (np.arange(200.0).reshape(50, 4), np.ones(4), 50)])


def test_loop_window_plain_add_out_of_bounds():
    def f(u, n):
        s = np.zeros(3)
        for i in range(n):
            s = s + u[i:i + 3]
        return s
    differential(f, lambda: [(np.arange(60.0), 57), (np.arange(60.0), 58), (np.arange(60.0), 59)])


def test_loop_masked_store_mask_shorter_than_destination():
    def f(x, n):
        acc = np.zeros(3)
        for i in range(n):
            m = x[i:i + 3] > 0
            acc[m] = acc[m] + 1.0
        return acc
    differential(f, lambda: [(np.arange(60.0) - 5, 50), (np.arange(60.0) - 5, 59)])


def test_loop_complex_window_out_of_bounds():
    def f(z, n):
        s = np.zeros(3, complex)
        for i in range(n):
            s = s * 0.5 + z[i:i + 3]
        return s
    differential(f, lambda: [(np.arange(60.0) + 1j, 50), (np.arange(60.0) + 1j, 59)])


def test_loop_masked_store_whose_mask_and_destination_shrink_together():
    """A window of the destination and a window of the mask shrink alike near the end: NumPy
    stores into the shorter window; the masked kernel serves any size where the shapes agree."""
    def f(x, n):
        acc = np.zeros(60)
        for i in range(n):
            window = acc[i:i + 3]
            m = x[i:i + 3] > 0
            window[m] = window[m] + 1.0
        return acc
    differential(f, lambda: [(np.arange(60.0) - 5, 50), (np.arange(60.0) - 5, 59),
                             (np.arange(60.0) - 5, 60)])
