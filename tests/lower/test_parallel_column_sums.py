"""Column sums (``x.sum(axis=0)`` of a C array) in parallel, with NumPy's bits (issues 11/13).

NumPy reduces axis 0 of a C-ordered array row by row (``out[j] += a[i, j]``, i in order). The
prange twin of a columns kernel reducing its first axis splits the *columns* into blocks
(``cpu.COLUMN_BLOCK``), each block adding its rows in that order: the bits of the serial kernel
and of NumPy. The tests lower ``cpu.COLUMN_PARALLEL_MIN`` and ``config.parallel_threshold`` so the
twin runs at cheap sizes, and compile once per dtype (``dynamic=True``).
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.config import config
from astcompiler.lower.numba import cpu

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# (rows, columns): several blocks with a ragged last one, exactly one block, one column, no rows
SHAPES = [(300, 600), (40, 2 * cpu.COLUMN_BLOCK), (9, cpu.COLUMN_BLOCK + 1), (50, 1), (0, 300)]


def column_sums(a, b):
    prod = a * b
    return a.sum(axis=0), prod.sum(axis=0), prod - a


def _data(rng, shape, dtype):
    """Values over 40 binades: float32/float64 sums whose order shows in the last bits."""
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return (rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)).astype(dtype)


def _same_bits(got, want):
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_numpy_adds_the_rows_of_a_c_array_in_order():
    """The claim the twin relies on: NumPy's axis-0 float32 sum is the sequential one."""
    a = _data(np.random.default_rng(1), (257, 70), np.float32)
    acc = np.zeros(a.shape[1], np.float32)
    for row in a:
        acc = acc + row  # float32 + float32, one row at a time
    _same_bits(a.sum(axis=0), acc)


@pytest.fixture
def parallel_at_any_size(monkeypatch):
    monkeypatch.setattr(cpu, "COLUMN_PARALLEL_MIN", 0)
    with config.patch(parallel_threshold=1):
        yield


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow),
                                   pytest.param(np.int32, marks=pytest.mark.slow)])
def test_parallel_column_sums_give_numpys_bits(parallel_at_any_size, dtype):
    rng = np.random.default_rng(0)
    compiled = ac.compile(column_sums, backend="numba", dynamic=True)
    for shape in SHAPES:
        a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
        for got, want in zip(compiled(a, b), column_sums(a, b)):
            _same_bits(got, want)
    a, b = _data(rng, (64, 300), dtype), _data(rng, (64, 300), dtype)
    for got, want in zip(compiled(np.asfortranarray(a), b), column_sums(np.asfortranarray(a), b)):
        _same_bits(got, want)  # F-ordered: NumPy's own path, whichever it is
    code = "\n".join(entry.output_code for entry in compiled.entries)
    assert "_parallel(" in code and "numba.prange(column_blocks)" in code
    assert f"column_block * {cpu.COLUMN_BLOCK}" in code  # the blocks of columns, rows in order
    assert f"n0 * n1 < {cpu.COLUMN_PARALLEL_MIN}:" in code  # small: the serial block function
    assert len(compiled.entries) <= 3  # one dynamic entry, and the size-0 and size-1 ones
