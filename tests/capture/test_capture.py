"""Capture: graphs recorded for small functions (ops, metadata, unrolling, constants)."""

from __future__ import annotations

import numpy as np
import sympy

from astcompiler.capture.capture import capture_function


def capture(fn, *args, tmp_path, **kwargs):
    return capture_function(fn, args, kwargs, cache_dir=str(tmp_path))


def ops(cap):
    return [n.target for n in cap.graph.call_nodes()]


def test_pointwise_chain_and_metadata(tmp_path):
    def fn(x, y):
        return 2.0 * x + 3.0 * y - 0.5 * x * y

    cap = capture(fn, np.ones(4, np.float32), np.ones(4, np.float32), tmp_path=tmp_path)
    assert ops(cap) == ["multiply", "multiply", "add", "multiply", "multiply", "subtract"]
    assert all(n.meta.dtype == np.float32 for n in cap.graph.call_nodes())  # NEP 50
    assert cap.output_spec == ("out", 0)


def test_static_loops_are_unrolled_and_shapes_are_constants(tmp_path):
    def fn(x):
        acc = x[0]
        for i in range(1, x.shape[0]):
            acc = acc + x[i]
        return acc, x.shape

    cap = capture(fn, np.ones((3, 2)), tmp_path=tmp_path)
    assert ops(cap) == ["getitem", "getitem", "add", "getitem", "add"]
    assert cap.output_spec == ("tuple", [("out", 0), ("tuple", [("const", 3), ("const", 2)])])


def test_reduction_returns_numpy_scalar_meta(tmp_path):
    cap = capture(lambda x: x.sum(), np.ones((2, 3)), tmp_path=tmp_path)
    node = next(cap.graph.call_nodes())
    assert node.target == "sum" and node.meta.scalar and node.meta.shape == ()
    assert node.kwargs == {"axis": None, "keepdims": False, "dtype": None}


def test_method_and_function_forms_normalize_to_the_same_node(tmp_path):
    def fn(x):
        return np.sum(x, 1) + x.sum(axis=-1)

    # integer sums cannot warn (two float sums stay two: each may warn "overflow")
    cap = capture(fn, np.ones((2, 3), dtype=np.int64), tmp_path=tmp_path)
    assert ops(cap) == ["sum", "add"]  # CSE merged the two spellings


def test_constants_fold_and_creation_ops_stay_in_the_graph(tmp_path):
    import math

    def fn(x):
        k = math.sqrt(4.0) + np.sqrt(9.0)
        return x * k + np.zeros(3)

    cap = capture(fn, np.ones(3), tmp_path=tmp_path)
    assert ops(cap) == ["multiply", "zeros", "add"]
    assert cap.graph.nodes[1].args[1] == 5.0


def test_boolean_mask_sizes_are_unbacked_symbols(tmp_path):
    cap = capture(lambda x: x[x > 0] + 1, np.arange(-2.0, 3.0), tmp_path=tmp_path)
    getitem = [n for n in cap.graph.call_nodes() if n.target == "getitem"][0]
    (size,) = getitem.meta.shape
    assert isinstance(size, sympy.Symbol) and size.name == "u0"
    add = [n for n in cap.graph.call_nodes() if n.target == "add"][0]
    assert add.meta.shape == (size,)


def test_unused_inputs_are_guarded_but_not_graph_inputs(tmp_path):
    cap = capture(lambda x, y: x + 1, np.ones(2), np.ones(3), tmp_path=tmp_path)
    assert [n.target for n in cap.graph.placeholders] == ["L['x']"]
    assert {f.source.name for f in cap.guards if f.kind == "array"} == {"L['x']", "L['y']"}
