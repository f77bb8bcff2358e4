"""FP flags the caller's own scalar ops left set (``np.float64(1e308) * 10`` under
``np.errstate(all="ignore")`` leaves *overflow* raised) do not send a compiled call to NumPy:
a kernel after which the wrapper tests the flags clears them first (``runtime.fp_clear_flags``).
A flag the kernel itself raises still reruns the call with NumPy, which warns as the plain call.
"""

from __future__ import annotations

import numpy as np

import astcompiler as ac
from astcompiler.lower import eager
from astcompiler.lower.numba import runtime
from tests.helpers import outcome


def squared_plus_one(x):
    return x * x + 1.0


def leave_overflow_flag() -> None:
    """What a caller's scalar code does: an ignored overflow, its flag left set."""
    with np.errstate(all="ignore"):
        np.float64(1e308) * 10.0


def test_stale_flags_do_not_rerun_but_kernel_flags_do(monkeypatch):
    reruns = []
    interpret = eager.interpret

    def counted(*args, **kwargs):
        reruns.append(1)
        return interpret(*args, **kwargs)

    monkeypatch.setattr(eager, "interpret", counted)  # the NumPy rerun (before the compile)
    compiled = ac.compile(squared_plus_one, backend="numba")
    x = np.linspace(0.5, 2.0, 256)
    compiled(x)
    del reruns[:]
    for _ in range(3):
        leave_overflow_flag()
        if runtime.FP_STATUS:
            assert runtime.fp_test(runtime.FP_ALL)  # the stale flag is there
        want = outcome(squared_plus_one, [x])
        leave_overflow_flag()
        got = outcome(compiled, [x])
        assert got[1:] == want[1:] == (None, [])
        assert type(got[0]) is type(want[0]) and got[0].dtype == want[0].dtype
        np.testing.assert_array_equal(got[0], want[0])
    assert reruns == []  # no call went to NumPy for the caller's flag
    big = x.copy()
    big[7] = 1e200  # the kernel's own overflow: NumPy's warning, from the rerun
    leave_overflow_flag()
    want = outcome(squared_plus_one, [big])
    got = outcome(compiled, [big])
    assert want[2] == [(RuntimeWarning, "overflow encountered in multiply")]
    assert got[1:] == want[1:]
    np.testing.assert_array_equal(got[0], want[0])
    assert reruns == [1]
