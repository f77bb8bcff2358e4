"""nonstrict_trace, allow_in_graph and disable."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.eager import interpret
from astcompiler.lower.inline import inline_nonstrict_calls
from astcompiler.pytree import register_constant, register_dataclass
from astcompiler.testing import CompileCounter

W = np.eye(3) * 0.5
X = np.arange(6.0).reshape(2, 3)


@ac.nonstrict_trace
def traced_forward(w, x):
    ac.graph_break()  # fine inside a nonstrict_trace body
    return np.tanh(x @ w) + x


def forward(w, x):
    return traced_forward(w, x) * 2


def undecorated_forward(w, x):
    y = x @ w
    ac.graph_break()
    return np.tanh(y) + x


def calls_undecorated(w, x):
    return undecorated_forward(w, x) * 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_reference_example_is_one_graph(backend):
    counter = CompileCounter()

    def counting(graph, inputs):
        from astcompiler.lower import lookup_backend
        counter(graph, inputs)
        return lookup_backend(backend)(graph, inputs)

    compiled = ac.compile(forward, backend=counting, fullgraph=True)
    np.testing.assert_allclose(compiled(W, X), forward(W, X))
    assert counter.frame_count == 1
    code = compiled.entries[0].graph_code
    assert sum("nonstrict_trace.traced_forward(w, x)" in line for line in code.splitlines()) == 1


def test_without_nonstrict_trace_the_break_is_real():
    with pytest.raises(ac.exc.Unsupported, match="graph_break"):
        ac.compile(calls_undecorated, backend="eager", fullgraph=True)(W, X)
    out = ac.explain(calls_undecorated)(W, X)
    assert out.graph_count >= 1 and out.graph_break_count >= 1


def test_original_function_is_unchanged_and_non_callables_are_rejected():
    def plain(x):
        return x

    wrapped = ac.nonstrict_trace(traceable_fn=plain)
    assert wrapped is not plain and not hasattr(plain, "__ac_nonstrict__")
    with pytest.raises(AssertionError, match="nonstrict_trace expects a callable"):
        ac.nonstrict_trace(3)


def test_eager_calls_the_original_and_aot_eager_the_traced_graph():
    calls = []

    @ac.nonstrict_trace
    def counted(x):
        calls.append(1)
        return x + 1

    def fn(x):
        return counted(x)

    ac.compile(fn, backend="aot_eager")(X)
    traced_calls = len(calls)
    ac.compile(fn, backend="aot_eager")(X)
    assert len(calls) == traced_calls + 1  # capture only: the run used the traced subgraph
    before = len(calls)
    compiled = ac.compile(fn, backend="eager")
    compiled(X)
    compiled(X)
    assert len(calls) == before + 2  # once per call: the capture's run is the first call's


def test_output_structure_must_stay_the_same():
    state = {"tuple": False}

    @ac.nonstrict_trace
    def changes(x):
        return (x, x) if state["tuple"] else x

    def fn(x):
        return changes(x)

    compiled = ac.compile(fn, backend="eager")
    compiled(X)
    state["tuple"] = True
    with pytest.raises(AssertionError, match="same output"):
        compiled(X)


@register_dataclass
@dataclass
class Particles:
    pos: object
    vel: object


@dataclass(frozen=True)
class Integrator:
    name: str


register_constant(Integrator)


@ac.nonstrict_trace
def step(p, dt, how):
    scale = 2.0 if how.name == "double" else 1.0
    return Particles(p.pos + dt * p.vel * scale, p.vel)


DOUBLE = Integrator("double")


def test_dataclass_inputs_and_outputs_and_constants():
    def fn(pos, vel):
        out = step(Particles(pos, vel), 0.5, DOUBLE)
        return out.pos

    for backend in ("eager", "aot_eager"):
        compiled = ac.compile(fn, backend=backend, fullgraph=True)
        np.testing.assert_allclose(compiled(X, X), X + X)
    assert "== ___k" in compiled.entries[0].guards  # the constant is guarded by equality

    def builds_constant(pos, vel):
        return step(Particles(pos, vel), 0.5, Integrator("double")).pos

    with pytest.raises(ac.exc.Unsupported, match="register_constant"):
        ac.compile(builds_constant, backend="eager", fullgraph=True)(X, X)


def test_invalid_inputs_and_outputs_are_explained():
    @ac.nonstrict_trace
    def returns_object(x):
        return object()

    with pytest.raises(ac.exc.Unsupported, match="Invalid input type for nonstrict_trace-ed function"):
        ac.compile(lambda x: traced_forward(object(), x), backend="eager", fullgraph=True)(X)
    with pytest.raises(ac.exc.Unsupported, match="Unsupported output type for nonstrict_trace-ed function"):
        ac.compile(lambda x: returns_object(x), backend="eager", fullgraph=True)(X)


def test_defined_inside_the_compiled_region_is_an_error():
    def fn(x):
        inner = ac.nonstrict_trace(lambda v: v + 1)
        return inner(x)
    with pytest.raises(ac.exc.Unsupported, match="defined outside"):
        ac.compile(fn, backend="eager", fullgraph=True)(X)


def test_globals_read_inside_the_body_are_constants_of_the_subgraph():
    compiled = ac.compile(forward, backend="aot_eager")
    compiled(W, X)
    graph = compiled.entries[0].graph
    assert [n.target for n in graph.placeholders] == ["L['w']", "L['x']"]


def test_inlining_for_fusing_backends_gives_the_same_result():
    compiled = ac.compile(forward, backend="eager")
    compiled(W, X)
    graph = compiled.entries[0].graph
    inline_nonstrict_calls(graph)
    assert all(n.op != "region" for n in graph.nodes)
    np.testing.assert_allclose(interpret(graph, (W, X))[0], forward(W, X))


def test_allow_in_graph_is_one_node_called_as_is():
    calls = []

    @ac.allow_in_graph
    def opaque(x):
        calls.append(1)
        return np.cumsum(x) * 3

    def fn(x):
        return opaque(x) + 1

    compiled = ac.compile(fn, backend="eager", fullgraph=True)
    np.testing.assert_allclose(compiled(X), fn(X))
    assert [n.target for n in compiled.entries[0].graph.call_nodes()] == ["call_function", "add"]
    with pytest.raises(ac.exc.Unsupported, match="arrays and primitives"):
        ac.compile(lambda x: opaque([x]), backend="eager", fullgraph=True)(X)


def test_disable_runs_eagerly_with_a_break_around_it():
    @ac.disable
    def python_only(x):
        return x.tolist()

    def fn(x):
        y = x * 2
        z = python_only(y)
        return np.asarray(z) + 1

    compiled = ac.compile(fn, backend="eager")
    np.testing.assert_allclose(compiled(X), fn(X))
    assert "astcompiler.disable" in compiled.entries[0].break_reason.reason


@ac.nonstrict_trace
def scaled(inputs):
    return inputs["x"] * inputs["scale"]


def test_dict_inputs_mutated_before_the_call_are_respecialized():
    counter = CompileCounter()
    compiled = ac.compile(lambda d: scaled(d) + 1, backend=counter)
    data = {"x": X, "scale": 2.0}
    np.testing.assert_allclose(compiled(data), X * 2.0 + 1)
    data["scale"] = 3.0  # a primitive leaf: specialized, so a new value recompiles
    np.testing.assert_allclose(compiled(data), X * 3.0 + 1)
    data["x"] = X * 10  # an array leaf: an input, no recompile
    np.testing.assert_allclose(compiled(data), X * 30.0 + 1)
    assert counter.frame_count == 2


def test_register_constant_recompiles_on_a_new_value():
    counter = CompileCounter()

    def fn(pos, vel, how):
        return step(Particles(pos, vel), 0.5, how).pos

    compiled = ac.compile(fn, backend=counter)
    np.testing.assert_allclose(compiled(X, X, Integrator("double")), X + X)
    np.testing.assert_allclose(compiled(X, X, Integrator("double")), X + X)
    np.testing.assert_allclose(compiled(X, X, Integrator("single")), X + 0.5 * X)
    assert counter.frame_count == 2
