"""``@`` and ``np.dot`` inside structured loop code give NumPy's bits on every layout.

NumPy picks its BLAS routine by the operands' strides (a transposed call for an F-ordered
matrix, its own loop for strided ones), so the bits of a float contraction follow the layout.
Loop code calls numba's ``np.dot`` (the same BLAS) only where both operands are C-contiguous
and runs NumPy's call (an ``objmode`` step) otherwise; a kernel whose buffer feeds such a
call makes NumPy's temporary where its operands are not C-ordered (NumPy's layout, order K).
Compared bit for bit with the plain call; trip counts above ``unroll_limit`` keep the loop.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import assert_same_bits


def _matvec_of_input(a, w, n):
    out = np.zeros(a.shape[0])
    for i in range(n):
        out = out + a @ (w * i)
    return out


def _matvec_of_temporary(a, w, n):
    out = np.zeros(a.shape[0])
    for i in range(n):
        out = out + (a * i) @ w
    return out


def _layouts(a):
    return {"C": a, "F": np.asfortranarray(a), "strided": np.repeat(a, 2, axis=-1)[:, ::2]}


@pytest.mark.parametrize("fn", [_matvec_of_input, _matvec_of_temporary])
def test_a_matrix_vector_product_in_a_loop_is_numpys_on_every_layout(fn):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((200, 40)) * 2.0 ** rng.integers(-20, 20, (200, 40))
    w = rng.standard_normal(40)
    with ac.config.patch(unroll_limit=4):
        compiled = ac.compile(fn)
        for layout, x in _layouts(a).items():
            for n in (6, 7):
                assert_same_bits(compiled(x, w, n), fn(x, w, n)), layout
        code = compiled.entries[-1].output_code
    assert "one structured numba function" in code
    assert "flags.c_contiguous" in code and "as NumPy calls BLAS on these layouts" in code


def _power_iteration(a, x, n):
    for _ in range(n):
        x = a @ x
        x = x / np.sqrt(x @ x)  # the same operand twice: the NumPy step takes it once
    return x


def test_a_product_of_an_operand_with_itself_stays_one_structured_function():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 6))
    compiled = ac.compile(_power_iteration)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "could not compile the structured kernel" warning
        for layout, m in _layouts(a).items():
            assert_same_bits(compiled(m, np.ones(6), 70), _power_iteration(m, np.ones(6), 70))
    assert "one structured numba function" in compiled.entries[-1].output_code
