"""A graph that writes to its inputs and raises at run time: the effects recorded before the
error still happen, in Python's order, and the inputs end as the plain call leaves them."""

import numpy as np
import pytest

import astcompiler as ac


def write_then_index(x, idx, log):
    log.append(1)
    x += 1
    x[idx[0]] = 5
    log.append(2)
    return x.sum()


def loop_writes(x, idx, log):
    log.append("start")
    for i in range(x.shape[0]):
        x[i] = x[i] * 2 + idx[i % idx.shape[0]]
    x[idx[0]] = -1.0
    return x


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as error:  # noqa: BLE001 - compared by type and message
        return type(error), str(error)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
@pytest.mark.parametrize("fn", [write_then_index, loop_writes])
def test_effects_and_writes_before_a_run_time_error_match_plain(fn, backend):
    compiled = ac.compile(fn, backend=backend)
    for idx in ([1, 0], [2, 1], [9, 0], [-1, 1], [1, 0]):
        x_plain, x_comp = np.arange(4.0), np.arange(4.0)
        log_plain, log_comp = [], []
        want = _outcome(fn, x_plain, np.array(idx), log_plain)
        got = _outcome(compiled, x_comp, np.array(idx), log_comp)
        assert got[0] == want[0]
        if want[0] == "ok":
            np.testing.assert_array_equal(got[1], want[1])
        else:
            assert got[1] == want[1]
        assert log_comp == log_plain
        np.testing.assert_array_equal(x_comp, x_plain)
    assert len(compiled.entries) == 1
