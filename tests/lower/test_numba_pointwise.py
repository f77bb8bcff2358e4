"""numba backend: pointwise kernels against the eager interpreter (values, dtypes, types)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from astcompiler.lower.numba import numba_backend
from astcompiler.ops import REGISTRY

from numba_helpers import GraphBuilder, check

# NaN and empty inputs are on purpose: NumPy (the reference) warns about them
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32, np.float64]


def _edge_values(dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([True, False, True, False, False, True], dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        values = [0, 1, 2, 3, 7, -1, -2, -7, 64, 100, info.max, info.min, 63, 31, 8]
        return np.array([v for v in values if info.min <= v <= info.max], dt)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.7, 1e30, -1e30, np.inf, -np.inf,
                     np.nan, 1e-40, 100.0], dt)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_ufunc_on_edge_values(dtype):
    """All registered ufuncs on every pair of edge values, one graph (one kernel) per dtype."""
    values = _edge_values(dtype)
    a, b = np.repeat(values, len(values)), np.tile(values, len(values))
    builder = GraphBuilder(a, b)
    x, y = builder.inputs
    outputs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            for name, op in sorted(REGISTRY.ops.items()):
                if op.kind != "pointwise" or op.ufunc is None:
                    continue
                try:
                    outputs.append(builder(name, *((x,) if op.ufunc.nin == 1 else (x, y))))
                except Exception:
                    continue  # NumPy rejects these dtypes
            graph = builder.output(*outputs)
            compiled = numba_backend(graph, [a, b])
            assert len(compiled.kernels) == 1
            check(compiled, graph, (a, b), rtol=2e-6)


def test_chain_fuses_into_one_kernel_with_typed_constants():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b = GraphBuilder(x)
    (X,) = b.inputs
    y = b("add", b("multiply", X, 0.1), b("sin", X))
    graph = b.output(b("divide", y, 3))
    compiled = numba_backend(graph, [x])
    (source,) = compiled.kernels.values()
    assert "np.float32(0.1)" in source and "for i0 in range(n0)" in source
    assert "numba.prange(n0)" in source  # the parallel twin
    assert "fastmath" not in source and 'error_model="numpy"' in source
    check(compiled, graph, (x,))


def test_integer_results_wrap_like_numpy():
    x = np.array([2**31 - 1, -2**31, 7, -7], np.int32)
    b = GraphBuilder(x, x[::-1].copy())
    X, Y = b.inputs
    with np.errstate(all="ignore"):
        graph = b.output(b("add", X, Y), b("multiply", X, 3), b("negative", X), b("power", X, 3),
                         b("floor_divide", X, -1), b("remainder", X, 0), b("left_shift", X, 40))
        check(numba_backend(graph, [x, x]), graph, (x, x[::-1].copy()))


def test_mixed_dtypes_and_weak_scalars():
    i32 = np.arange(-3, 3, dtype=np.int32)
    f32 = np.linspace(-1, 1, 6, dtype=np.float32)
    u64 = np.arange(6, dtype=np.uint64)
    b = GraphBuilder(i32, f32, u64, np.float32(0.1), 0.1, 3, names="i f u s w k")
    i, f, u, s, w, k = b.inputs
    graph = b.output(
        b("add", i, f),            # float64 (int32 + float32)
        b("multiply", f, w),       # float32: a Python float is weak
        b("multiply", f, s),       # float32
        b("add", i, k),            # int32: a Python int is weak
        b("add", u, i),            # float64 (uint64 + int64-ish)
        b("less", f, 0.1),         # compared in float32
        b("true_divide" if "true_divide" in REGISTRY else "divide", i, k),
        b("multiply", i, 2.5),     # float64
    )
    inputs = (i32, f32, u64, np.float32(0.1), 0.1, 3)
    check(numba_backend(graph, list(inputs)), graph, inputs)


def test_broadcasting_patterns():
    a = np.arange(6.0).reshape(2, 3, 1)
    row = np.arange(4.0)
    col = np.arange(3.0).reshape(3, 1)
    b = GraphBuilder(a, row, col, np.array(2.0), names="a row col z")
    A, R, C, Z = b.inputs
    out = b("add", b("multiply", A, R), b("subtract", C, Z))  # (2, 3, 4)
    graph = b.output(out, b("add", R, Z))
    compiled = numba_backend(graph, [a, row, col, np.array(2.0)])
    got = check(compiled, graph, (a, row, col, np.array(2.0)))
    assert got[0].shape == (2, 3, 4)


def test_layouts_non_contiguous_fortran_negative_strides():
    base = np.arange(72.0).reshape(6, 12)
    inputs = (base[::2, 1::3], np.asfortranarray(base[:3, :4]), base[::-2, ::-3])
    b = GraphBuilder(*inputs)
    x, y, z = b.inputs
    graph = b.output(b("add", b("multiply", x, y), z), b("sqrt", z))
    compiled = numba_backend(graph, list(inputs))
    check(compiled, graph, inputs)
    # the same compiled graph serves other layouts of the same shapes and dtypes
    other = (np.ones((3, 4)), np.ones((3, 4)), np.ascontiguousarray(inputs[2]))
    check(compiled, graph, other)


def test_zero_dim_and_scalar_inputs_give_numpy_types():
    x = np.arange(4.0)
    b = GraphBuilder(x, np.array(3.0), np.float64(2.0), names="x z s")
    X, Z, S = b.inputs
    graph = b.output(b("multiply", X, Z), b("add", Z, S), b("exp", S), b("copy", Z))
    got = check(numba_backend(graph, [x, np.array(3.0), np.float64(2.0)]), graph,
                (x, np.array(3.0), np.float64(2.0)))
    assert isinstance(got[1], np.float64) and isinstance(got[2], np.float64)
    assert isinstance(got[3], np.ndarray) and got[3].shape == ()


def test_empty_arrays():
    x = np.zeros((0, 3), np.float32)
    y = np.ones(3, np.float32)
    b = GraphBuilder(x, y)
    X, Y = b.inputs
    graph = b.output(b("add", X, Y), b("exp", X))
    got = check(numba_backend(graph, [x, y]), graph, (x, y))
    assert got[0].shape == (0, 3)


def test_where_clip_round_astype_copy():
    x = np.array([[-2.5, -0.5, 0.5], [1.5, 2.675, np.nan]], np.float32)
    b = GraphBuilder(x)
    (X,) = b.inputs
    cond = b("greater", X, 0.0)
    graph = b.output(
        b("where", cond, X, -1),
        b("clip", X, -1.0, 1.0),
        b("clip", X, None, 0.0),
        b("round", X),
        b("round", X, decimals=2),
        b("round", X, decimals=-1),
        b("astype", X, np.int16),
        b("astype", X, np.bool_),
        b("copy", X),
    )
    with np.errstate(invalid="ignore"):
        compiled = numba_backend(graph, [x])
        got = check(compiled, graph, (x,))
    assert not np.shares_memory(got[-1], x)


def test_unsupported_dtypes_fall_back_to_numpy():
    """float16 and complex transcendental functions stay NumPy steps (complex arithmetic is
    fused: tests/lower/test_complex_and_masked_kernels.py)."""
    c = np.array([1 + 2j, 3 - 1j])
    h = np.array([1.0, 2.0], np.float16)
    b = GraphBuilder(c, h)
    C, H = b.inputs
    graph = b.output(b("multiply", C, 2.0), b("add", H, H), b("exp", b("negative", C)))
    compiled = numba_backend(graph, [c, h])
    assert all("add" not in name and "exp" not in name for name in compiled.kernels)
    check(compiled, graph, (c, h))


def test_integer_power_with_array_exponent_raises_like_numpy():
    x = np.array([2, 3], np.int64)
    e = np.array([2, -1], np.int64)
    b = GraphBuilder(x, np.array([2, 1], np.int64))
    X, E = b.inputs
    graph = b.output(b("power", X, E))
    compiled = numba_backend(graph, [x, e])
    with pytest.raises(ValueError, match="negative integer powers"):
        compiled(x, e)


def test_parallel_twin_runs_above_threshold():
    from astcompiler.config import config

    x = np.random.default_rng(0).standard_normal((64, 33))
    b = GraphBuilder(x)
    (X,) = b.inputs
    graph = b.output(b("tanh", b("multiply", X, 3.0)))
    with config.patch(parallel_threshold=16):
        compiled = numba_backend(graph, [x])
    assert ">= 16:" in compiled.output_code
    check(compiled, graph, (x,))
    check(compiled, graph, (x[:2, :3].copy(),))  # sizes are read at run time: the serial kernel


@pytest.fixture
def temporary_ops():
    """Register ops the way another op family would (kind + impl + template), then remove them."""
    from astcompiler.ops import register

    names = []

    def add(name, impl, **fields):
        register(name, impl, **fields)
        names.append(name)

    yield add
    for name in names:
        REGISTRY.ops.pop(name, None)


def test_ops_declared_elsewhere_are_lowered_generically(temporary_ops):
    temporary_ops("test_twice_plus_one", lambda a: a * 2 + 1, kind="pointwise",
                  scalar="{0} * 2 + 1")
    temporary_ops("test_broken_template", lambda a: a - 1, kind="pointwise",
                  scalar="np.no_such_function({0})")
    temporary_ops("test_reverse", lambda a: a[::-1], kind="view")
    temporary_ops("test_cumulative", lambda a: np.cumsum(a), kind="extern")
    temporary_ops("test_range", lambda n: np.arange(n, dtype=np.float64), kind="creation")
    x = np.arange(6.0)
    b = GraphBuilder(x)
    (X,) = b.inputs
    y = b("test_twice_plus_one", b("sin", X))
    z = b("test_broken_template", y)
    graph = b.output(b("add", b("test_reverse", z), b("test_cumulative", X)),
                     b("multiply", b("test_range", 6), y))
    compiled = numba_backend(graph, [x])
    code = compiled.output_code
    assert "op_test_broken_template(" in code and "op_test_reverse(" in code
    assert "op_test_twice_plus_one(" not in code  # fused into a kernel
    check(compiled, graph, (x,))
