"""The IR: building, printing, dead-code elimination and CSE."""

from __future__ import annotations

import numpy as np

from astcompiler.capture.capture import has_side_effects, is_pure
from astcompiler.graph import (Graph, TensorMeta, eliminate_common_subexpressions,
                               eliminate_dead_code)

F64 = TensorMeta((3,), np.dtype(np.float64))


def small_graph():
    g = Graph()
    x = g.placeholder("L['x']", F64, "x")
    a = g.call("sin", (x,), {}, F64, "m.py:2")
    b = g.call("sin", (x,), {}, F64, "m.py:3")
    unused = g.call("cos", (x,), {}, F64, "m.py:4")
    c = g.call("add", (a, b), {}, F64, "m.py:5")
    g.output((c,))
    return g, x, a, b, unused, c


def test_users_are_tracked():
    g, x, a, b, unused, c = small_graph()
    assert set(x.users) == {a, b, unused}
    assert c.all_input_nodes() == [a, b]


def test_cse_merges_identical_pure_calls_and_dce_removes_dead_ones():
    g, x, a, b, unused, c = small_graph()
    assert eliminate_common_subexpressions(g, has_side_effects, is_pure) == 1
    assert c.args == (a, a)
    assert eliminate_dead_code(g, has_side_effects) == 1
    assert [n.target for n in g.call_nodes()] == ["sin", "add"]


def test_cse_does_not_merge_reads_across_a_mutation():
    g = Graph()
    x = g.placeholder("L['x']", F64, "x")
    a = g.call("getitem", (x, 0), {}, TensorMeta((), np.dtype(np.float64), True))
    g.call("setitem", (x, 0, 5.0), {}, None)
    b = g.call("getitem", (x, 0), {}, TensorMeta((), np.dtype(np.float64), True))
    g.output((a, b))
    assert eliminate_common_subexpressions(g, has_side_effects, is_pure) == 0
    assert eliminate_dead_code(g, has_side_effects) == 0  # setitem has an effect


def test_print_readable_is_python_with_origins():
    g, *_ = small_graph()
    text = g.print_readable(print_output=False)
    assert text.splitlines()[0] == 'def forward(self, x: "f64[3]"):'
    assert '    sin: "f64[3]" = np.sin(x)  # m.py:2' in text
    assert "    return (add,)" in text
    compile(text, "<graph>", "exec")  # it parses
