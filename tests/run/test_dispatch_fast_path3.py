"""The dispatch with its entries' guarded runs pasted in (``run/dispatch.py``, ``inline_entry``)
and the 1-d ``np.empty`` of the numba wrapper: behaviour only. Every entry still rejects what its
guard rejects, a guard that raises is a miss, side effects replay in order, and the result is the
plain call's (value, type, dtype, shape)."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.run.dispatch import inline_entry
from astcompiler.testing import CompileCounter

SCALE = 2.0


def two(x, y):
    return x * y + 1.0


def scaled(x):
    return x * SCALE


def appends(x, log):
    log.append(len(log))
    return x + 1.0


def same(got, want):
    np.testing.assert_array_equal(got, want)
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape


def test_every_entry_is_pasted_in_and_each_guard_still_rejects():
    counter = CompileCounter()
    compiled = ac.compile(two, backend=counter, dynamic=False)
    cases = [(np.ones(4), np.ones(4)), (np.ones(4, np.float32), np.ones(4, np.float32)),
             (np.ones(5), np.ones(5)), (np.ones((4, 1)), np.ones(4)), (np.ones(4), 3.0)]
    for x, y in cases:
        same(compiled(x, y), two(x, y))
    assert counter.frame_count == len(cases)
    source = type(compiled).__call__.source
    for index in range(len(cases)):  # each entry's guard and run, in the dispatch itself
        assert f"# entry {index} inline: its guard" in source
    for x, y in cases:  # hits: no new entry, the right one serves each
        same(compiled(x + 1, y), two(x + 1, y))
    assert counter.frame_count == len(cases)
    x = np.ones(6)
    same(compiled(x, x), two(x, x))  # no entry holds: the slow path compiles one more
    assert counter.frame_count == len(cases) + 1


def test_a_changed_global_recompiles_through_the_pasted_guard():
    global SCALE
    counter = CompileCounter()
    compiled = ac.compile(scaled, backend=counter)
    x = np.arange(3.0)
    same(compiled(x), scaled(x))
    try:
        SCALE = 5.0
        same(compiled(x), scaled(x))
        assert counter.frame_count == 2
    finally:
        SCALE = 2.0
    same(compiled(x), scaled(x))
    assert counter.frame_count == 2


def test_a_guard_that_raises_is_a_miss():
    class Odd:  # its dtype attribute raises: the guard fails, the call runs as Python does
        @property
        def dtype(self):
            raise RuntimeError("no dtype")

        def __mul__(self, other):
            return 7.0

    compiled = ac.compile(two, backend="eager")
    x = np.ones(3)
    same(compiled(x, x), two(x, x))
    assert compiled(Odd(), 1.0) == two(Odd(), 1.0)


def test_side_effects_replay_in_order_on_hits():
    compiled = ac.compile(appends, backend="eager")
    log, plain = [], []
    x = np.arange(3.0)
    for _ in range(3):
        same(compiled(x, log), appends(x, plain))
    assert log == plain == [0, 1, 2]


def test_stance_and_surplus_arguments_still_take_the_generic_path():
    compiled = ac.compile(two, backend="eager")
    x = np.ones(3)
    same(compiled(x, x), two(x, x))
    with pytest.raises(TypeError) as got:
        compiled(x, x, x)
    with pytest.raises(TypeError) as want:
        two(x, x, x)
    assert str(got.value) == str(want.value)
    with ac.set_stance("force_eager"):
        same(compiled(x, x), two(x, x))
    assert len(compiled.entries) == 1


def test_functions_of_another_shape_are_called_not_pasted():
    def guarded(*args, **kwargs):  # not a run module's twin
        return args

    assert inline_entry(guarded, 0) is None
    assert inline_entry(len, 0) is None


def test_numba_one_dimensional_outputs_keep_shape_dtype_and_layout():
    compiled = ac.compile(two, backend="numba")
    for x in (np.arange(8.0), np.arange(16.0)[::2], np.arange(8, dtype=np.float32)):
        got = compiled(x, x)
        same(got, two(x, x))
        assert got.flags.c_contiguous and got.flags.owndata
    entry = compiled.entries[0]
    assert "___empty(len(x)" in entry.output_code  # an int, not a shape tuple, per call
