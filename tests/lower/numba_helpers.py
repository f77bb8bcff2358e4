"""Helpers for the numba backend tests: build graphs by hand and compare against ``interpret``."""

from __future__ import annotations

from typing import Any

import numpy as np

from astcompiler.graph import Graph, Node, TensorMeta, map_nodes
from astcompiler.lower.eager import interpret
from astcompiler.ops import REGISTRY


def meta_of(value: Any) -> TensorMeta | None:
    """The TensorMeta capture would record for a NumPy value."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return TensorMeta(tuple(value.shape), value.dtype, False)
    if isinstance(value, np.generic):
        return TensorMeta((), value.dtype, True)
    return TensorMeta((), np.asarray(value).dtype, True)


class GraphBuilder:
    """Records calls on example values: each call runs the op's NumPy impl to get the node's meta.

    Example values are copies, so building a graph never mutates the caller's arrays.
    """

    def __init__(self, *examples: Any, names: str | None = None):
        self.graph = Graph()
        self.env: dict[Node, Any] = {}
        labels = names.split() if names else [f"x{i}" for i in range(len(examples))]
        self.inputs: list[Node] = []
        for label, value in zip(labels, examples):
            node = self.graph.placeholder(f"L[{label!r}]", meta_of(value), label)
            self.env[node] = value.copy() if isinstance(value, np.ndarray) else value
            self.inputs.append(node)
        self.line = 1

    def __call__(self, target: str, *args: Any, **kwargs: Any) -> Node:
        op = REGISTRY[target]
        examples = map_nodes((args, kwargs), self.env.__getitem__)
        args, kwargs = op.canonical(args, kwargs) if op.normalize is None else \
            _canonical(op, args, kwargs, examples)
        values = map_nodes(args, self.env.__getitem__)
        kvalues = map_nodes(kwargs, self.env.__getitem__)
        try:
            result = op.impl(*values, **kvalues)
        except Exception:
            if op.kind != "mutation":
                raise
            result = None  # a graph may record a write NumPy rejects: tests check the error
        self.line += 1
        node = self.graph.call(target, args, kwargs, meta_of(result) if op.kind != "mutation"
                               else None, origin=f"model.py:{self.line}")
        self.env[node] = result
        return node

    def output(self, *values: Any) -> Graph:
        self.graph.output(tuple(values))
        return self.graph


def _canonical(op: Any, args: tuple, kwargs: dict, examples: tuple) -> tuple[tuple, dict]:
    """Normalize with example values standing in for nodes (normalizers read ``.ndim``)."""
    ex_args, ex_kwargs = examples
    swapped: dict[int, Node] = {}

    def keep(value: Any, example: Any) -> Any:
        if isinstance(value, Node):
            swapped[id(example)] = value
        return example

    probe_args = tuple(keep(a, e) for a, e in zip(args, ex_args))
    probe_kwargs = {k: keep(v, ex_kwargs[k]) for k, v in kwargs.items()}
    cargs, ckwargs = op.normalize(*probe_args, **probe_kwargs)

    def back(value: Any) -> Any:
        if id(value) in swapped:
            return swapped[id(value)]
        if isinstance(value, tuple):
            return tuple(back(v) for v in value)
        return value

    return tuple(back(a) for a in cargs), {k: back(v) for k, v in ckwargs.items()}


def copies(values: tuple) -> tuple:
    """Fresh copies of array inputs, keeping each one's memory layout (strides, offsets)."""
    return tuple(same_layout_copy(v) for v in values)


def same_layout_copy(value: Any) -> Any:
    if not isinstance(value, np.ndarray):
        return value
    if value.size == 0:
        return value.copy()
    lo = sum(s * (n - 1) for s, n in zip(value.strides, value.shape) if s < 0)
    hi = sum(s * (n - 1) for s, n in zip(value.strides, value.shape) if s > 0) + value.itemsize
    buffer = np.empty(hi - lo, np.uint8)
    twin = np.ndarray(value.shape, value.dtype, buffer=buffer, offset=-lo, strides=value.strides)
    twin[...] = value
    return twin


def assert_same(result: Any, expected: Any, rtol: float | None = None) -> None:
    """Same type, dtype, shape and values (within float rounding)."""
    assert type(result) is type(expected), (type(result), type(expected))
    if isinstance(expected, (np.ndarray, np.generic)):
        assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
        assert np.shape(result) == np.shape(expected), (np.shape(result), np.shape(expected))
        if expected.dtype.kind in "fc":
            tol = rtol if rtol is not None else (2e-5 if expected.dtype.itemsize <= 4 else 1e-12)
            np.testing.assert_allclose(result, expected, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(result, expected)
    else:
        assert result == expected or (result != result and expected != expected)


def check(compiled: Any, graph: Graph, inputs: tuple, rtol: float | None = None) -> tuple:
    """Run compiled and eager on layout-preserving copies; compare outputs and input mutations."""
    mine, theirs = copies(inputs), copies(inputs)
    got = compiled(*mine)
    want = interpret(graph, theirs)
    assert len(got) == len(want)
    for result, expected in zip(got, want):
        assert_same(result, expected, rtol)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            assert_same(a, b, rtol)
    return got
