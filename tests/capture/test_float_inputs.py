"""``config.specialize_float=False``: a float argument whose value changes is a graph input.

By default (``True``, as before) a float is baked into the graph and guarded by its value, so a
learning-rate schedule compiles one entry per value up to the recompile limit. With ``False`` a
float whose value changed between calls (like an int under automatic dynamic shapes), every
float under ``dynamic=True``, or one named by ``dynamic_sources`` is a graph input read at run
time and guarded by its type: one more entry serves every later value. The config field was
declared but not read until session 12.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import counted, outcome

LEARNING_RATES = (0.1, 0.05, 0.025, 1e-3, 0.0, -0.5, math.inf, math.nan)


def sgd_step(w, g, lr):
    return w - lr * g, lr * 2.0, type(lr * 2.0)


def decayed(w, g, lr, steps):
    for i in range(steps):
        w = w - lr * g / (i + 1)
    return w


def clipped(x, limit):
    if limit > 0.5:
        return x * limit
    return x - limit


LR = 0.1


def global_rate(w, g):
    return w - LR * g


def _same(compiled, fn, args):
    assert repr(outcome(compiled, args)) == repr(outcome(fn, args))


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
def test_a_learning_rate_schedule_keeps_two_entries(backend):
    counter, counting = counted(backend)
    with ac.config.patch(specialize_float=False):
        compiled = ac.compile(sgd_step, backend=counting)
        w, g = np.linspace(0.0, 1.0, 8), np.ones(8)
        for lr in LEARNING_RATES:
            _same(compiled, sgd_step, (w, g, lr))
    assert counter.frame_count == 2  # the first value, then one entry for every value


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
def test_float_inputs_in_loops_and_branches(backend):
    with ac.config.patch(specialize_float=False):
        loop = ac.compile(decayed, backend=backend)
        branch = ac.compile(clipped, backend=backend)
        for lr in LEARNING_RATES:
            _same(loop, decayed, (np.ones(5), np.full(5, 0.5), lr, 70))
            _same(branch, clipped, (np.arange(4.0), lr))
        assert len(loop.entries) == 2 and len(branch.entries) == 2


def test_dynamic_true_makes_every_float_an_input_from_the_start():
    counter, counting = counted("numba")
    with ac.config.patch(specialize_float=False):
        compiled = ac.compile(sgd_step, backend=counting, dynamic=True)
        for lr in LEARNING_RATES[:4]:
            _same(compiled, sgd_step, (np.ones(3), np.ones(3), lr))
    assert counter.frame_count == 1


def test_a_changing_global_float_is_read_at_run_time():
    global LR
    counter, counting = counted("numba")
    try:
        with ac.config.patch(specialize_float=False):
            compiled = ac.compile(global_rate, backend=counting)
            for LR in (0.1, 0.2, 0.3, 0.4):
                _same(compiled, global_rate, (np.ones(3), np.ones(3)))
    finally:
        LR = 0.1
    assert counter.frame_count == 2


def test_the_default_specializes_floats_by_value():
    counter, counting = counted("aot_eager")
    compiled = ac.compile(sgd_step, backend=counting)
    for lr in LEARNING_RATES[:3]:
        _same(compiled, sgd_step, (np.ones(3), np.ones(3), lr))
    assert counter.frame_count == 3
