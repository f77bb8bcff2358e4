"""numba backend: reductions (every axis form, keepdims, dtypes, empty inputs) and their fusion."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from astcompiler.config import config
from astcompiler.graph import Graph, TensorMeta
from astcompiler.lower.numba import numba_backend
from astcompiler.lower.numba.cpu import PAIRWISE_CHUNK, VECTOR_LANES

from numba_helpers import GraphBuilder, check

# NaN and empty inputs are on purpose: NumPy (the reference) warns about them
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REDUCTIONS = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all", "var", "std"]
AXES = [None, 1, -1, (0, 2), (1, 2)]  # whole array, columns, rows, columns, rows


def _graph_of_reductions(x: np.ndarray, axes: list, names: list[str] = REDUCTIONS):
    b = GraphBuilder(x)
    (X,) = b.inputs
    outputs = []
    for i, axis in enumerate(axes):
        for name in names:
            if name.startswith("arg") and isinstance(axis, tuple):
                continue
            kwargs = {"axis": axis, "keepdims": bool(i % 2)}
            if name in ("var", "std"):
                kwargs["ddof"] = i % 2
            outputs.append(b(name, X, **kwargs))
    return b.output(*outputs)


def _example(dtype) -> np.ndarray:
    x = (np.random.default_rng(1).standard_normal((3, 4, 5)) * 4).astype(dtype)
    if x.dtype.kind == "f":
        x[1, 2, 3] = np.nan
        x[2, 0, 0] = -np.inf
    return x


def test_every_reduction_every_axis_form():
    x = _example(np.float64)
    graph = _graph_of_reductions(x, AXES)
    compiled = numba_backend(graph, [x])
    assert len(compiled.kernels) == len(AXES)  # one kernel per axis set, every op inside
    got = check(compiled, graph, (x,))
    assert isinstance(got[0], np.generic)  # full reductions give NumPy scalars


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_reductions_per_dtype(dtype):
    x = _example(dtype)
    graph = _graph_of_reductions(x, [None, (0, 2)])
    check(numba_backend(graph, [x]), graph, (x,))


def test_reductions_of_non_contiguous_inputs():
    x = _example(np.float64)
    graph = _graph_of_reductions(x, [2, 0], ["sum", "max", "argmin", "std"])
    compiled = numba_backend(graph, [x])
    check(compiled, graph, (np.asfortranarray(x),))
    check(compiled, graph, (x[::-1, :, ::-1],))


def test_accumulator_and_result_dtypes():
    i32 = np.arange(-50, 50, dtype=np.int32).reshape(10, 10) * 40_000_000
    flags = i32 > 0
    f32 = np.linspace(0, 1, 100, dtype=np.float32).reshape(10, 10)
    b = GraphBuilder(i32, flags, f32)
    I, B, F = b.inputs
    graph = b.output(b("sum", I), b("sum", I, axis=1), b("mean", I, axis=0), b("sum", B),
                     b("sum", F, dtype=np.float64), b("prod", I, axis=1, dtype=np.int32),
                     b("std", I, axis=1), b("var", F, axis=None))
    got = check(numba_backend(graph, [i32, flags, f32]), graph, (i32, flags, f32))
    assert got[0].dtype == np.int64 and got[3].dtype == np.int64


def test_float32_sums_are_accurate():
    x = np.random.default_rng(2).uniform(0, 1, (4, 100_000)).astype(np.float32)
    b = GraphBuilder(x)
    (X,) = b.inputs
    graph = b.output(b("sum", X, axis=1), b("sum", X), b("mean", X, axis=1))
    check(numba_backend(graph, [x]), graph, (x,), rtol=1e-5)


def test_empty_reductions_match_numpy():
    empty = np.zeros((0, 3))
    b = GraphBuilder(empty)
    (E,) = b.inputs
    graph = b.output(b("sum", E), b("prod", E, axis=0), b("any", E), b("all", E, axis=0),
                     b("max", E, axis=1), b("sum", E, axis=1, keepdims=True))
    check(numba_backend(graph, [empty]), graph, (empty,))
    for name in ("max", "argmin"):
        graph = Graph()  # NumPy raises on these, so the node's meta is written by hand
        E = graph.placeholder("L['e']", TensorMeta((0, 3), np.dtype(np.float64)), "e")
        axis = 0 if name.startswith("arg") else (0,)
        result = np.dtype(np.int64) if name.startswith("arg") else np.dtype(np.float64)
        graph.output((graph.call(name, (E,), {"axis": axis, "keepdims": False},
                                 TensorMeta((3,), result)),))
        compiled = numba_backend(graph, [empty])
        with pytest.raises(ValueError, match="empty sequence|no identity"):
            compiled(empty)
    b = GraphBuilder(empty)
    graph = b.output(b("mean", b.inputs[0], axis=0), b("var", b.inputs[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(numba_backend(graph, [empty]), graph, (empty,))


def _exp_calls(source: str, dtype: str) -> int:
    """Calls of exp in a rows kernel's row function (``def ..._row_long(``): NumPy's, or the
    vectorizable one (``vecmath``). The serial entry holds a copy of the same row lines (it is
    not compiled separately: ``cpu.row_body``), so the file as a whole has each call twice."""
    start = source.index("_row_long(")
    start = source.rindex("\ndef ", 0, start)
    end = source.find("\n@numba", start + 1)
    row = source[start:end if end != -1 else len(source)]
    return row.count("np.exp(") + row.count(f"vm_exp_{dtype}(")


def test_row_softmax_is_one_kernel_with_one_parallel_loop():
    x = np.random.default_rng(3).uniform(-4, 4, (8, 256)).astype(np.float32)  # long rows
    b = GraphBuilder(x)
    (X,) = b.inputs
    m = b("max", X, axis=1, keepdims=True)
    e = b("exp", b("subtract", X, m))
    graph = b.output(b("divide", e, b("sum", e, axis=1, keepdims=True)))
    with config.patch(parallel_threshold=64, vector_math_min_elements=0):  # vecmath's exp
        compiled = numba_backend(graph, [x])
    (source,) = compiled.kernels.values()
    # rows of a static length of 128 or more: only the vector-lane row function, one prange
    assert source.count("numba.prange") == 1 and "_row_long(" in source
    # exp is computed in one sweep (one loop, which fills the buffer of NumPy's pairwise sum),
    # and read back from the output buffer in the last sweep
    assert _exp_calls(source, "float32") == 1 and "= out_divide[i0, i1]" in source
    assert "NumPy's pairwise tree of 256" in source
    assert "acc_max_v[u]" in source  # the max sweep accumulates in vector lanes
    scratch = source.replace(f"np.empty({VECTOR_LANES}, ", "").replace(
        f"np.empty({PAIRWISE_CHUNK}, ", "")
    assert "np.empty" not in scratch  # lane arrays and the sum's buffer only, once per slice
    check(compiled, graph, (x,))
    x[2, 5] = np.nan
    check(compiled, graph, (x,))


def test_layernorm_is_one_kernel():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 32)).astype(np.float32)
    w, bias = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    b = GraphBuilder(x, w, bias)
    X, W, B = b.inputs
    mu = b("mean", X, axis=1, keepdims=True)
    centered = b("subtract", X, mu)
    var = b("mean", b("multiply", centered, centered), axis=1, keepdims=True)
    out = b("add", b("multiply", b("divide", centered, b("sqrt", b("add", var, 1e-5))), W), B)
    # the same through np.var, plus the per-row statistics as outputs
    var2 = b("var", X, axis=-1, keepdims=True)
    out2 = b("divide", b("subtract", X, mu), b("sqrt", b("add", var2, 1e-5)))
    graph = b.output(out, out2, mu, b("sum", X, axis=1))
    compiled = numba_backend(graph, [x, w, bias])
    assert len(compiled.kernels) == 1
    check(compiled, graph, (x, w, bias))


def test_expensive_intermediate_kept_in_a_row_temporary():
    x = np.random.default_rng(5).standard_normal((5, 300))  # long rows: vector lanes
    b = GraphBuilder(x)
    (X,) = b.inputs
    t = b("exp", X)
    s = b("sum", t, axis=1, keepdims=True)
    graph = b.output(b("greater", t, b("multiply", s, 0.2)), b("argmax", t, axis=1))
    with config.patch(vector_math_min_elements=0):  # vecmath's exp
        compiled = numba_backend(graph, [x])
    (source,) = compiled.kernels.values()
    assert _exp_calls(source, "float64") == 2  # one sweep: its lane blocks and its tail
    assert "tmp_exp = np.empty(" in source
    check(compiled, graph, (x,))


def test_column_reductions_fuse_producers():
    x = np.random.default_rng(6).standard_normal((9, 4, 3))
    b = GraphBuilder(x)
    (X,) = b.inputs
    y = b("exp", b("multiply", X, 0.5))
    graph = b.output(b("sum", y, axis=0), b("argmax", y, axis=1), y,
                     b("std", y, axis=(0, 2), keepdims=True))
    compiled = numba_backend(graph, [x])
    check(compiled, graph, (x,))
    with config.patch(parallel_threshold=8):
        check(numba_backend(graph, [x]), graph, (x,))


def test_reduction_consumers_of_other_shapes_get_their_own_kernels():
    x = np.random.default_rng(7).standard_normal((6, 5))
    b = GraphBuilder(x)
    (X,) = b.inputs
    col = b("mean", X, axis=0)  # (5,): a column reduction
    centered = b("subtract", X, col)  # consumes it: another kernel
    rows = b("sum", centered, axis=1)  # (6,) compact row result
    graph = b.output(b("multiply", rows, 2.0), b("max", centered), centered)
    check(numba_backend(graph, [x]), graph, (x,))


def test_whole_array_reductions_run_in_parallel_slices():
    x = np.random.default_rng(8).standard_normal((300, 7))
    b = GraphBuilder(x)
    (X,) = b.inputs
    e = b("exp", X)
    graph = b.output(b("sum", X), b("max", X), b("var", X, ddof=1), b("any", b("greater", X, 3.0)),
                     b("divide", e, b("sum", e)), b("mean", X, keepdims=True))
    with config.patch(parallel_threshold=8):
        compiled = numba_backend(graph, [x])
    sources = "\n".join(compiled.kernels.values())
    assert "for c in numba.prange(chunks):" in sources
    check(compiled, graph, (x,))
    x[100, 3] = np.nan
    check(compiled, graph, (x,))


def test_concurrent_calls_from_threads():
    from concurrent.futures import ThreadPoolExecutor

    x = np.random.default_rng(9).standard_normal((64, 40))
    b = GraphBuilder(x)
    (X,) = b.inputs
    graph = b.output(b("sum", b("multiply", X, X), axis=1))
    with config.patch(parallel_threshold=256):
        compiled = numba_backend(graph, [x])
    inputs = [x * k for k in range(8)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda a: compiled(a)[0], inputs))
    for a, r in zip(inputs, results):
        np.testing.assert_allclose(r, (a * a).sum(axis=1), rtol=1e-12)
