"""numba backend: mutation ordering, overlap, fused stores, aliasing and output identity."""

from __future__ import annotations

import numpy as np
import pytest

from astcompiler.lower.eager import interpret
from astcompiler.lower.numba import numba_backend

from numba_helpers import GraphBuilder, check, copies


def test_reads_before_a_write_see_old_data_and_reads_after_see_new():
    x = np.arange(12.0).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    before = b("multiply", X, 2.0)
    column = b("getitem", X, (slice(None), 1))  # a view, read after the write
    b("setitem", X, (0, slice(None)), 100.0)
    after = b("add", X, 1.0)
    graph = b.output(before, after, b("multiply", column, 3.0), X)
    compiled = numba_backend(graph, [x])
    got = check(compiled, graph, (x,))
    assert got[0][0, 0] == 0.0 and got[1][0, 0] == 101.0 and got[2][0] == 300.0


def test_overlapping_assignment_falls_back_to_a_temporary():
    a = np.arange(10.0)
    b = GraphBuilder(a)
    (A,) = b.inputs
    shifted = b("multiply", b("getitem", A, slice(None, -1)), 2.0)
    b("setitem", A, slice(1, None), shifted)  # a[1:] = a[:-1] * 2
    graph = b.output(A)
    compiled = numba_backend(graph, [a])
    assert "may_share_memory" in compiled.output_code
    got = check(compiled, graph, (a,))
    assert got[0] is not None


def test_out_assignment_writes_straight_into_the_destination():
    x, y = np.arange(6.0), np.ones(6)
    out = np.zeros(8)
    b = GraphBuilder(x, y, out, names="x y out")
    X, Y, O = b.inputs
    b("setitem", O, slice(2, None), b("add", b("multiply", X, Y), 1.0))
    graph = b.output(O)
    compiled = numba_backend(graph, [x, y, out])
    assert "view_add" in compiled.output_code
    inputs = (x, y, out)
    check(compiled, graph, inputs)
    mine = copies(inputs)
    assert compiled(*mine)[0] is mine[2]  # the input itself, mutated in place
    # x is a view of out: the kernel must not write while it reads, the result is NumPy's
    shared, expected = np.arange(8.0), np.arange(8.0)
    compiled(shared[:6], np.ones(6), shared)
    interpret(graph, (expected[:6], np.ones(6), expected))
    assert np.array_equal(shared, expected)


def test_in_place_update_is_fused():
    x, y = np.arange(5.0), np.full(5, 2.0)
    b = GraphBuilder(x, y)
    X, Y = b.inputs
    b("copy_", X, b("multiply", X, Y))  # x *= y
    graph = b.output(X)
    compiled = numba_backend(graph, [x, y])
    inputs = copies((x, y))
    assert compiled(*inputs)[0] is inputs[0]
    check(compiled, graph, (x, y))


def test_mutation_of_a_computed_array():
    x = np.arange(6.0)
    b = GraphBuilder(x)
    (X,) = b.inputs
    a = b("add", X, 1.0)
    b("setitem", a, 0, -1.0)
    graph = b.output(a, b("multiply", a, 2.0))
    got = check(numba_backend(graph, [x]), graph, (x,))
    assert got[1][0] == -2.0


def test_copy_casting_and_read_only_errors_match_numpy():
    ints = np.arange(4)
    b = GraphBuilder(ints)
    (I,) = b.inputs
    b("copy_", I, b("add", I, 0.5))
    graph = b.output(I)
    compiled = numba_backend(graph, [ints])
    with pytest.raises(TypeError):
        compiled(ints.copy())
    x = np.arange(4.0)
    b = GraphBuilder(x)
    (X,) = b.inputs
    b("copy_", X, b("add", X, 0.5))
    graph = b.output(X)
    compiled = numba_backend(graph, [x])
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        compiled(frozen)


def test_output_identity_views_and_scalars():
    x = np.arange(12.0).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    view = b("transpose", X, (1, 0))
    row = b("getitem", X, 1)
    total = b("sum", X)
    y = b("exp", row)
    graph = b.output(X, view, y, y, total, 3, "label")
    compiled = numba_backend(graph, [x])
    got = compiled(x)
    assert got[0] is x
    assert got[1].base is x or np.shares_memory(got[1], x)
    assert got[2] is got[3] and not np.shares_memory(got[2], x)
    assert isinstance(got[4], np.float64) and got[5] == 3 and got[6] == "label"
    check(compiled, graph, (x,))


def test_reshape_of_a_mutated_computed_array_runs_with_numpy():
    x = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    b = GraphBuilder(x)
    (X,) = b.inputs
    a = b("add", X, 1.0)  # NumPy gives a Fortran-ordered result here
    flat = b("reshape", a, -1)  # so this reshape copies
    b("setitem", flat, 0, -5.0)
    graph = b.output(a, flat)
    compiled = numba_backend(graph, [x])
    assert not compiled.kernels
    check(compiled, graph, (x,))


def test_extern_and_view_ops_run_with_numpy_around_kernels():
    rng = np.random.default_rng(0)
    x, w, bias = rng.standard_normal((4, 6)), rng.standard_normal((6, 3)), rng.standard_normal(3)
    b = GraphBuilder(x, w, bias)
    X, W, B = b.inputs
    h = b("maximum", b("add", b("matmul", X, W), B), 0.0)
    swapped = b("swapaxes", h, 0, 1)
    graph = b.output(b("sum", b("multiply", swapped, 2.0), axis=1), h)
    compiled = numba_backend(graph, [x, w, bias])
    assert "op_matmul(" in compiled.output_code and "op_swapaxes(" in compiled.output_code
    check(compiled, graph, (x, w, bias))


def test_row_kernel_result_stored_into_a_view():
    x = np.random.default_rng(1).standard_normal((4, 6))
    out = np.zeros((6, 4))
    b = GraphBuilder(x, out, names="x out")
    X, O = b.inputs
    m = b("max", X, axis=1, keepdims=True)
    e = b("exp", b("subtract", X, m))
    soft = b("divide", e, b("sum", e, axis=1, keepdims=True))
    b("copy_", b("transpose", O, (1, 0)), soft)  # out.T[...] = softmax(x)
    total = b("sum", O)  # reads the written data: after the barrier
    graph = b.output(O, total)
    compiled = numba_backend(graph, [x, out])
    assert "view_divide" in compiled.output_code
    got = check(compiled, graph, (x, out))
    np.testing.assert_allclose(got[1], 4.0)


def test_scalar_and_broadcast_assignments():
    x = np.arange(12.0).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    s = b("sum", X)
    b("setitem", X, (slice(None), 0), s)  # a NumPy scalar broadcast into a column
    row = b("multiply", b("getitem", X, 1), 0.5)
    b("setitem", X, 2, row)  # a kernel result into another row (reads row 1 first)
    graph = b.output(X, b("mean", X, axis=0))
    check(numba_backend(graph, [x]), graph, (x,))
