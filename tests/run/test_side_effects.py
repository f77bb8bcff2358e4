"""Python side effects on outside objects are recorded and replayed on every call."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter

LOG: list = []


class Settings:
    last = None


SETTINGS = Settings()


def records(x, seen, table):
    y = np.sin(x)
    LOG.append(y.sum())
    seen.append(x.shape[0])
    table["max"] = y.max()
    SETTINGS.last = y
    local = []
    local.append(y * 2)
    return local[0]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_side_effects_replay_on_cached_calls(backend):
    LOG.clear()
    counter = CompileCounter()

    def counting(graph, inputs):
        from astcompiler.lower import lookup_backend
        counter(graph, inputs)
        return lookup_backend(backend)(graph, inputs)

    compiled = ac.compile(records, backend=counting, fullgraph=True)
    seen, table = [], {}
    x = np.arange(4.0)
    for _ in range(3):
        np.testing.assert_allclose(compiled(x, seen, table), np.sin(x) * 2)
    assert counter.frame_count == 1 and len(compiled.entries) == 1
    assert len(LOG) == 3 and all(np.isclose(v, np.sin(x).sum()) for v in LOG)
    assert seen == [4, 4, 4] and np.isclose(table["max"], np.sin(x).max())
    np.testing.assert_allclose(SETTINGS.last, np.sin(x))
    assert "___G['LOG'].append(" in compiled.entries[0].run_code


def test_reads_after_writes_see_the_writes_and_guard_the_start_state():
    def fn(x, items):
        items.append(1)
        return x * len(items)

    compiled = ac.compile(fn, backend="eager")
    items = []
    np.testing.assert_array_equal(compiled(np.ones(1), items), [1.0])
    np.testing.assert_array_equal(compiled(np.ones(1), items), [2.0])  # len guarded: recompiles
    assert items == [1, 1] and len(compiled.entries) == 2


def test_mutating_an_outside_list_inside_a_data_dependent_loop_breaks():
    def fn(x, out):
        for i in range(x.shape[0]):
            if x[i] > 0:
                out.append(i)
        return x

    with ac.config.patch(unroll_limit=2):
        with pytest.raises(ac.exc.Unsupported, match="cannot be replayed"):
            ac.compile(fn, backend="eager", fullgraph=True)(np.ones(5), [])
