"""numba backend: the MLP (BLAS) and Jacobi-stencil lowerings of issue 11.

* MLP: each layer is one NumPy matmul (NumPy's own BLAS call, so its bits) and one fused pass of
  bias and activation written into the matmul's result.
* Jacobi ``out = u.copy(); out[1:-1, 1:-1] = ...``: the copy kernel is not run; the wrapper copies
  only the border the store leaves (``border_copy.py``) and the store kernel writes the interior
  in one pass, its inner loop under a unit-stride test LLVM vectorizes (``unit_strides.py``).

Every case compares the compiled call with the plain call bit for bit (values, dtype, shape,
memory layout), over several shapes, dtypes, layouts and store indices, and checks the
structure of ``output_code``. Sizes stay small (serial kernels): the speed itself is measured
by ``benchmarks/run.py --only mlp,jacobi``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import astcompiler as ac


def _exact(got, want):
    """Same Python type, dtype, shape, memory layout and bits."""
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
        (want.flags.c_contiguous, want.flags.f_contiguous)
    assert np.array_equal(got, want, equal_nan=True)


def _body(compiled) -> str:
    """The generated forward function of the latest entry (without its imports)."""
    code = compiled.entries[-1].output_code
    return code[code.index("def make_forward"):].split("\n# ---- ")[0]


def _kernels(compiled) -> str:
    code = compiled.entries[-1].output_code
    return code[code.index("\n# ---- "):] if "\n# ---- " in code else ""


# -- MLP ---------------------------------------------------------------------------------------


def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2


def _mlp_inputs(rng, batch, dtype, inner=24, hidden=16, out=5):
    return (rng.standard_normal((batch, inner)).astype(dtype),
            rng.standard_normal((inner, hidden)).astype(dtype),
            rng.standard_normal(hidden).astype(dtype),
            rng.standard_normal((hidden, out)).astype(dtype),
            rng.standard_normal(out).astype(dtype))


@pytest.fixture(scope="module")
def compiled_mlp():
    return ac.compile(mlp, backend="numba")


def test_mlp_one_matmul_and_one_fused_epilogue_per_layer(compiled_mlp):
    args = _mlp_inputs(np.random.default_rng(0), 8, np.float32)
    _exact(compiled_mlp(*args), mlp(*args))
    body = _body(compiled_mlp)
    assert len(re.findall(r"= (?:___at_\d+\()?op_matmul[(,]", body)) == 2  # NumPy's BLAS call per layer
    calls = re.findall(r"^\s+(kernel_\d+_\w+)\(", body, re.M)
    serial = [c for c in calls if not c.endswith("_parallel")]
    assert len(serial) == 2  # one pass per layer: bias + relu, then bias
    assert "add_maximum" in serial[0] and serial[1].endswith("_add")
    # the epilogue writes into the matmul's own result: no second output buffer per layer
    assert body.count("in place: a BLAS result read only here") == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [1, 7, 33])
def test_mlp_equals_plain_call(compiled_mlp, dtype, batch):
    args = _mlp_inputs(np.random.default_rng(batch), batch, dtype)
    _exact(compiled_mlp(*args), mlp(*args))


@pytest.mark.parametrize("layout", ["transposed_weight", "strided_input", "fortran_input"])
def test_mlp_transposed_and_noncontiguous_operands(compiled_mlp, layout):
    x, w1, b1, w2, b2 = _mlp_inputs(np.random.default_rng(3), 6, np.float32)
    if layout == "transposed_weight":
        w1 = np.ascontiguousarray(w1.T).T  # F-ordered: BLAS gets a transposed operand
    elif layout == "strided_input":
        x = np.repeat(x, 2, axis=1)[:, ::2]  # the same values, every other column
    else:
        x = np.asfortranarray(x)
    _exact(compiled_mlp(x, w1, b1, w2, b2), mlp(x, w1, b1, w2, b2))


# -- Jacobi and other copy-then-store steps ----------------------------------------------------


def jacobi(u):
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


@pytest.fixture(scope="module")
def compiled_jacobi():
    return ac.compile(jacobi, backend="numba")


def test_jacobi_copies_only_the_border():
    compiled = ac.compile(jacobi, backend="numba")
    u = np.random.default_rng(0).standard_normal((12, 10))
    _exact(compiled(u), jacobi(u))
    body, kernels = _body(compiled), _kernels(compiled)
    copy_kernel = re.search(r"import (kernel_\d+_copy)\b", compiled.entries[-1].output_code)
    assert copy_kernel and f"{copy_kernel.group(1)}(" not in body  # the copy kernel never runs
    borders = re.findall(r"^\s+copy\[([^\]]+)\] = u\[\1\]", body, re.M)
    assert borders == [":1", "-1:", "1:-1, :1", "1:-1, -1:"]
    # the interior is one kernel whose inner loop runs twice over: under the unit-stride test
    assert "strides[-1] == 8" in kernels and "# unit strides (unit_strides.py)" in kernels


@pytest.mark.parametrize("shape,dtype", [((12, 10), np.float64), ((3, 3), np.float32),
                                         ((2, 5), np.float64), ((1, 4), np.float64),
                                         ((9, 2), np.int64)])
def test_jacobi_equals_plain_call(shape, dtype):
    """A static entry per shape (the border copy; (2, 5) and (1, 4) have an empty interior).
    int64: the float interior is cast on its store, which is not fused: the whole copy runs."""
    compiled = ac.compile(jacobi, backend="numba")
    u = (np.random.default_rng(1).standard_normal(shape) * 10).astype(dtype)
    _exact(compiled(u), jacobi(u))
    assert ("only the rest is copied" in _body(compiled)) == (u.dtype.kind == "f")


def test_jacobi_over_changing_sizes(compiled_jacobi):
    for shape in [(12, 10), (3, 3), (2, 5), (7, 9)]:
        u = np.random.default_rng(4).standard_normal(shape)
        _exact(compiled_jacobi(u), jacobi(u))


def jacobi_keep_order(u):
    out = np.copy(u)  # order="K": a Fortran-ordered input gives a Fortran-ordered result
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


@pytest.mark.parametrize("layout", ["fortran", "strided", "transposed"])
def test_jacobi_on_views_and_other_layouts(layout):
    base = np.random.default_rng(2).standard_normal((14, 16))
    u = {"fortran": np.asfortranarray(base), "strided": base[::2, 1::2],
         "transposed": base.T}[layout]
    compiled = ac.compile(jacobi_keep_order, backend="numba")
    _exact(compiled(u), jacobi_keep_order(u))
    if layout != "strided":  # the interior view of a Fortran-ordered result: the other loop
        assert "only the rest is copied" in _body(compiled)


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_method_copy_of_a_fortran_array_is_c_ordered(backend):
    """``a.copy()`` copies in C order (``np.copy(a)`` keeps the layout): OpDef.method_kwargs."""
    u = np.asfortranarray(np.random.default_rng(2).standard_normal((6, 5)))
    compiled = ac.compile(jacobi, backend=backend)
    _exact(compiled(u), jacobi(u))
    if backend == "numba":
        assert "only the rest is copied" in _body(compiled)


def rows_then_row(u):
    out = u.copy()
    out[2:] = u[:-2] * 2.0
    out[0] = -1.0 * u[1]
    return out


def last_columns(u):
    out = u.copy()
    out[1:4, -3:] = u[:3, :3] + 1.0
    return out


def middle(u, n):
    out = u.copy()
    out[1:n - 1] = u[2:n] - u[: n - 2]
    return out


def late_bound(u):
    out = u.copy()
    m = u.shape[0] - 1  # a run-time bound (a dynamic size) computed after the copy
    out[1:m] = u[2:m + 1] * 2.0
    return out


def test_border_copy_with_a_run_time_bound():
    compiled = ac.compile(late_bound, backend="numba")
    for n in (12, 7, 2):
        u = np.linspace(0.0, 1.0, n)
        ac.mark_dynamic(u, 0)
        _exact(compiled(u), late_bound(u))
    assert len(compiled.entries) == 1  # one entry for every size


def vector_tail(u):
    out = np.copy(u)
    out[-5:] = u[:5] * u[:5]
    return out


@pytest.mark.parametrize("fn,args", [
    (rows_then_row, (np.arange(30.0).reshape(6, 5),)),
    (last_columns, (np.arange(35.0).reshape(5, 7),)),
    (middle, (np.linspace(0.0, 1.0, 11), 11)),
    (vector_tail, (np.linspace(-1.0, 1.0, 9),)),
])
def test_border_copy_index_forms(fn, args):
    compiled = ac.compile(fn, backend="numba")
    _exact(compiled(*args), fn(*args))
    assert "is overwritten before it is read: only the rest is copied" in _body(compiled)


def reads_itself(u):
    out = u.copy()
    out[1:] = out[:-1] + u[1:]  # reads the copy: the copy must be complete first
    return out


def reads_before_store(u):
    out = u.copy()
    s = out.sum()
    out[1:-1] = u[2:] * 2.0
    return out, s


def other_dtype(u):
    out = u.astype(np.float32)
    out[1:-1] = u[2:] * 2.0
    return out


def log_then_store(u):
    out = np.log(u)  # computes (and may warn on) every element: not a copy
    out[1:-1] = u[2:]
    return out


@pytest.mark.parametrize("fn", [reads_itself, reads_before_store, other_dtype, log_then_store])
def test_border_copy_not_taken_where_it_would_change_the_result(fn):
    u = np.linspace(0.5, 3.0, 10)
    compiled = ac.compile(fn, backend="numba")
    got, want = compiled(u), fn(u)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        if isinstance(w, np.ndarray):
            _exact(g, w)
        else:
            assert type(g) is type(w) and g == w
    assert "only the rest is copied" not in _body(compiled)
