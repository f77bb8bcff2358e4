"""Small deterministic inputs for the semantics cases (arrays of sizes 1..8)."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

SIZES = (2, 3, 4, 5)  # the second call changes the size: later calls hit the dynamic entry


def vec(n: int, dtype: Any = np.float64, start: int = 1) -> np.ndarray:
    """``[start, start+1, ...]`` of length ``n``."""
    return np.arange(start, start + n).astype(dtype)


def mat(rows: int, cols: int, dtype: Any = np.float64) -> np.ndarray:
    """A rows x cols array with distinct small values (some negative)."""
    return (np.arange(rows * cols).reshape(rows, cols) - rows).astype(dtype)


def each(make: Any, params: Iterable[Any]) -> list[tuple]:
    """One call per parameter: ``make(p)`` gives the call's argument tuple (or one argument)."""
    calls = []
    for p in params:
        made = make(p)
        calls.append(made if isinstance(made, tuple) else (made,))
    return calls


def sized(make: Any = vec, sizes: Iterable[int] = SIZES) -> list[tuple]:
    """One call per size with a single array argument."""
    return each(make, sizes)
