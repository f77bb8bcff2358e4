"""Red team, round s7: cases probed this round that no earlier round covered. Each compares the
plain call with the compiled one over several calls (value, type, dtype, and the observable
state: generator state, mutated defaults, the global RNG)."""

from __future__ import annotations

import numpy as np

import astcompiler as ac


def draw(rng, n):
    return rng.standard_normal(n) * 2, rng.integers(0, 10, 3)


def test_generator_argument_advances_like_the_plain_call() -> None:
    compiled = ac.compile(draw, backend="numba")
    for seed in range(3):
        plain_rng, compiled_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        for want, got in zip(draw(plain_rng, 4), compiled(compiled_rng, 4)):
            assert got.dtype == want.dtype and np.array_equal(got, want)
        assert compiled_rng.bit_generator.state == plain_rng.bit_generator.state


def legacy_random(n):
    return np.random.rand(n) + 1


def test_global_numpy_random_state_advances_like_the_plain_call() -> None:
    compiled = ac.compile(legacy_random, backend="numba")
    for seed in (3, 4):
        np.random.seed(seed)
        want, want_next = legacy_random(3), np.random.rand()
        np.random.seed(seed)
        got, got_next = compiled(3), np.random.rand()
        assert np.array_equal(got, want) and got_next == want_next


def remember(x, seen=[]):  # noqa: B006 -- the mutable default is the case under test
    seen.append(float(x.sum()))
    return len(seen)


def test_a_mutated_default_list_grows_once_per_call() -> None:
    plain = [remember(np.ones(3)) for _ in range(3)]
    remember.__defaults__[0].clear()
    compiled = ac.compile(remember, backend="numba")
    assert [compiled(np.ones(3)) for _ in range(3)] == plain == [1, 2, 3]
    assert remember.__defaults__[0] == [3.0, 3.0, 3.0]


def reverse_into(a, b):
    b[...] = a[::-1]
    return b


def test_self_overlapping_store_through_two_arguments() -> None:
    compiled = ac.compile(reverse_into, backend="numba")
    for n in (5, 6):
        x, y = np.arange(float(n)), np.arange(float(n))
        want = reverse_into(x, x)
        got = compiled(y, y)
        assert got is y and np.array_equal(got, want)


@ac.compile(backend="numba")
def doubled(x):
    return x * 2


@ac.nonstrict_trace
def calls_compiled(x):
    return doubled(x) + 1  # a compiled function entered again from inside a compiled call


def reenter(x):
    return calls_compiled(x) * 3


def test_compiled_function_called_from_inside_a_nonstrict_call() -> None:
    compiled = ac.compile(reenter, backend="numba")
    for k in range(3):
        x = np.arange(3.0) + k
        assert np.array_equal(compiled(x), reenter(x))
    assert len(compiled.entries) == 1
