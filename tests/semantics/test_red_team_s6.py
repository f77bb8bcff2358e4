"""Red team of session 6 (helper R): plain call against compiled call (``red_team_support.
differential``) for objects with NumPy/Python protocols (``__array__``, ``__index__``,
``__bool__``, ``__len__``), NEP 50 weak scalars, and state mutated between calls (class
attributes, keyword defaults). No difference was found in this round; these pin the behaviour."""

from __future__ import annotations

import numpy as np

import astcompiler as ac

from .red_team_support import differential


class _Value:
    """An argument object compared by its payload (the differential deep-copies arguments)."""

    def __init__(self, v) -> None:
        self.v = v

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and np.array_equal(self.v, other.v)

    __hash__ = None  # type: ignore[assignment]


class _Index(_Value):
    def __index__(self) -> int:
        return self.v


class _Flag(_Value):
    def __bool__(self) -> bool:
        return self.v


class _Sized(_Value):
    def __len__(self) -> int:
        return self.v


class _ArrayLike(_Value):
    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.v, dtype=dtype)


def protocols(x, i, flag, sized, like):
    base = x[i] + len(sized)
    if flag:
        base = base + 1.0
    return np.asarray(like) * base


def test_objects_with_protocols_match_the_plain_call():
    def calls():
        return [(np.arange(3.0), _Index(1), _Flag(True), _Sized(2), _ArrayLike([1.0, 2.0])),
                (np.arange(3.0), _Index(2), _Flag(False), _Sized(5), _ArrayLike([3.0, 4.0, 5.0]))]

    differential(protocols, calls)


def weak_scalars(x8, u8, f32, big):
    out = x8 + 1.5, u8 + 200, u8[0] * 2, f32 * 3.0, f32 + 1j, x8 + np.int8(100)
    return out + (u8 + big,)  # big=300: NumPy 2 raises OverflowError (out of bounds for uint8)


def test_nep50_weak_scalars_match_the_plain_call():
    def calls():
        return [(np.full(3, 100, dtype=np.int8), np.arange(3, dtype=np.uint8),
                 np.arange(3, dtype=np.float32), 3),
                (np.full(3, 100, dtype=np.int8), np.arange(3, dtype=np.uint8),
                 np.arange(3, dtype=np.float32), 300)]

    differential(weak_scalars, calls)


def test_class_attribute_and_keyword_default_mutated_between_calls():
    class Holder:
        factor = 2.0

    def fn(x, *, k=3.0):
        return x * Holder.factor + k

    compiled = ac.compile(fn, backend="numba")
    x = np.arange(3.0)
    assert np.array_equal(compiled(x), fn(x))
    Holder.factor = 7.0
    fn.__kwdefaults__["k"] = 5.0
    got = compiled(x)
    assert np.array_equal(got, x * 7.0 + 5.0) and got.dtype == np.float64


def zero_d_and_error_after_effects(x, log):
    y = x * 2
    log.append(y)
    return y + 1, y.reshape(5)  # a size other than 5: ValueError after the append


def test_zero_d_inputs_and_an_error_after_a_side_effect():
    def calls():
        return [(np.arange(5.0), []), (np.arange(4.0), []), (np.array(2.0), [])]

    differential(zero_d_and_error_after_effects, calls)
