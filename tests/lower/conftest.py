"""Fixtures shared by the lowering tests."""

from __future__ import annotations

import pytest

from astcompiler.lower.numba import numpy_twins


@pytest.fixture
def numpy_kernel_calls(monkeypatch):
    """The kernels whose nodes a wrapper ran with NumPy (``KernelTwins.numpy_kernel``), by name."""
    calls = []
    original = numpy_twins.KernelTwins.numpy_kernel

    def counted(self, name):
        calls.append(name)
        return original(self, name)
    monkeypatch.setattr(numpy_twins.KernelTwins, "numpy_kernel", counted)
    return calls
