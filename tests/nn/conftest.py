"""Shared fixtures for the ac.nn tests."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

from astcompiler.nn.modules import module as module_impl


@pytest.fixture(autouse=True)
def no_leaked_global_hooks() -> Iterator[None]:
    """Every test must leave the global forward hooks as it found them."""
    before = (dict(module_impl._global_forward_pre_hooks), dict(module_impl._global_forward_hooks))
    yield
    after = (dict(module_impl._global_forward_pre_hooks), dict(module_impl._global_forward_hooks))
    assert after == before, "a test leaked a global forward hook"


@pytest.fixture
def x() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((5, 3))
