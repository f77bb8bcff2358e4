"""The CUDA target's guards against numba-cuda habits seen on a GPU machine (compat.py):
NumPy names numba-cuda needs at its first compile, its low-occupancy warnings, and the hint
for its ufunc table under a NumPy it does not support."""

from __future__ import annotations

import numpy as np
import pytest
from numba.core import config as numba_config

from astcompiler.lower.numba.gpu import compat


def test_a_removed_numpy_name_is_lent_around_a_launch_only(monkeypatch):
    monkeypatch.setattr(compat, "REMOVED_NUMPY_NAMES", ("stack_of_rows_removed",))
    assert not hasattr(np, "stack_of_rows_removed")
    with compat.numpy_names_for_numba_cuda():
        stand_in = np.stack_of_rows_removed
        with pytest.raises(AttributeError, match="stack_of_rows_removed"):
            stand_in([1], [2])
    assert not hasattr(np, "stack_of_rows_removed")


def test_nothing_is_lent_when_numpy_has_the_names_or_the_typing_has_loaded(monkeypatch):
    monkeypatch.setattr(compat, "REMOVED_NUMPY_NAMES", ("vstack",))
    with compat.numpy_names_for_numba_cuda():
        assert getattr(np.vstack, "__name__", "") == "vstack"  # NumPy's own, not a stand-in
    monkeypatch.setattr(compat, "REMOVED_NUMPY_NAMES", ("stack_of_rows_removed",))
    monkeypatch.setattr(compat, "_typing_loaded", lambda: True)
    with compat.numpy_names_for_numba_cuda():
        assert not hasattr(np, "stack_of_rows_removed")


def test_a_lent_name_is_taken_back_when_the_launch_raises(monkeypatch):
    monkeypatch.setattr(compat, "REMOVED_NUMPY_NAMES", ("stack_of_rows_removed",))
    with pytest.raises(RuntimeError):
        with compat.numpy_names_for_numba_cuda():
            raise RuntimeError("a failed compile")
    assert not hasattr(np, "stack_of_rows_removed")


@pytest.mark.parametrize("before", [1, 0])
def test_low_occupancy_warnings_are_off_inside_and_restored_after(monkeypatch, before):
    monkeypatch.setattr(numba_config, "CUDA_LOW_OCCUPANCY_WARNINGS", before)
    with compat.quiet_launches():
        assert numba_config.CUDA_LOW_OCCUPANCY_WARNINGS == 0
    assert numba_config.CUDA_LOW_OCCUPANCY_WARNINGS == before
    with pytest.raises(ValueError):
        with compat.quiet_launches():
            raise ValueError("a failed launch")
    assert numba_config.CUDA_LOW_OCCUPANCY_WARNINGS == before


def test_a_missing_ufunc_in_numba_cudas_table_says_what_to_do():
    text = compat.failure_text(KeyError(np.multiply), "<ufunc 'multiply'>")
    assert text.startswith("KeyError: <ufunc 'multiply'>; numba-cuda's ufunc table lacks it")
    assert "numpy<2.5" in text
    assert compat.failure_text(KeyError("x"), "'x'") == "KeyError: 'x'"
    assert compat.failure_text(TypeError("bad"), "bad") == "TypeError: bad"
