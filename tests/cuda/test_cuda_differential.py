"""The NumPy differential test (``tests/run/test_differential.py``: random programs of
pointwise chains with broadcasting, reductions with axis/keepdims, strided slices) on the CUDA
target at its small sizes, with host inputs and with device inputs: compiled == NumPy (type,
dtype, shape, values within ``tests.helpers.assert_same``'s float tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import assert_same
from tests.run.test_differential import load_program, programs

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import is_device_array

cuda = pytest.importorskip("numba.cuda")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=programs(), dtype=st.sampled_from([np.float64, np.float32]),
       on_device=st.booleans())
def test_random_programs_cuda(body, dtype, on_device, tmp_path):
    program = load_program(body, tmp_path)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(dtype)
    y = rng.standard_normal((1, 6)).astype(dtype)
    try:
        with np.errstate(all="ignore"):
            expected = program(x.copy(), y.copy())
    except (ValueError, IndexError):
        return  # shapes that NumPy itself rejects
    args = (cuda.to_device(x), cuda.to_device(y)) if on_device else (x.copy(), y.copy())
    with np.errstate(all="ignore"):
        actual = ac.compile(program, device="cuda")(*args)
    if is_device_array(actual):
        assert on_device and isinstance(expected, np.ndarray) and expected.ndim > 0
        actual = actual.copy_to_host()
    assert_same(actual, expected)
