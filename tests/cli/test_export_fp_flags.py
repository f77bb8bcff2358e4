"""FP status flags left set before a new entry's first call (by the compile's own float work, or
by what the process ran before) do not reach its first kernel: that kernel does not clear the
flags before it runs (a flag found after it reruns the call with NumPy), so a stale flag sent
the first call to NumPy, whose bits differ from the kernel's in the last place for libm's expf.
That made tests/cli/test_export.py's "the same kernels" comparison depend on the tests run
before it in the process (``run/compiled._first_run`` clears them now).
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba import runtime
from astcompiler.run import compiled as compiled_module


def exp_scaled(x):
    return np.exp(x) * 0.5


@pytest.mark.skipif(not runtime.FP_STATUS, reason="this platform's FP flags cannot be read")
def test_a_flag_left_before_the_first_call_does_not_send_it_to_numpy(monkeypatch):
    seen: list[int] = []
    dirtied: list[bool] = []
    real_fp_any, real_build = runtime.fp_any, compiled_module.build_entry
    libm = ctypes.CDLL(ctypes.util.find_library("m"))

    def fp_any() -> int:  # the wrapper's test after its kernel: what the kernel left
        seen.append(int(real_fp_any()))
        return seen[-1]

    def build_then_dirty(*args, **kwargs):  # the compile done, every flag set: stale flags
        entry = real_build(*args, **kwargs)
        libm.feraiseexcept(runtime.FP_ALL)
        dirtied.append(bool(runtime.fp_test(runtime.FP_ALL)))
        return entry

    monkeypatch.setattr(runtime, "fp_any", fp_any)
    monkeypatch.setattr(compiled_module, "build_entry", build_then_dirty)
    with ac.config.patch(persistent_cache=False):  # built here, not loaded
        fn = ac.compile(exp_scaled, backend="numba")
        x = np.linspace(-1.0, 1.0, 40)
        out = fn(x)
    np.testing.assert_allclose(out, exp_scaled(x), rtol=1e-15, atol=0)  # (bits: other tests)
    assert dirtied == [True]
    assert seen == [0]  # the kernel ran and found no flag: no rerun with NumPy
