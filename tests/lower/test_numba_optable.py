"""The numba target's op table (``lower/numba/optable.py``): one entry per lowerable op, the
generic emitters name no op, and the rules write what they wrote before they moved there."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.graph import TensorMeta
from astcompiler.lower.numba import optable
from astcompiler.lower.numba.oprules_python import PythonRule
from astcompiler.lower.numba.structured import expression_source
from astcompiler.ops import REGISTRY

from numba_helpers import GraphBuilder

NUMBA = pathlib.Path(optable.__file__).parent
# modules that write code for any op: they ask the table (or ``OpDef`` fields), never a name
GENERIC = ("plan.py", "cpu.py", "wrapper.py", "host.py", "structured.py", "__init__.py",
           "loop_kernels.py", "masked.py", "files.py", "numpy_twins.py", "runtime.py",
           "rebuild.py")
OP_NAMES = frozenset(REGISTRY.ops)


def _op_literals(node: ast.AST) -> list[str]:
    """Op names among string constants of ``node`` (a constant, or a tuple/list/set of them)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in OP_NAMES]


def op_name_uses(source: str) -> list[tuple[int, str]]:
    """Where ``source`` decides by an op's name: a comparison or membership test against an op
    name, a table keyed by op names (two or more), a subscript or ``.get`` by an op name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                found += [(node.lineno, name) for name in _op_literals(side)]
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None for k in _op_literals(k)]
            if len(keys) >= 2:
                found += [(node.lineno, name) for name in keys]
        elif isinstance(node, ast.Subscript):
            found += [(node.lineno, name) for name in _op_literals(node.slice)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args:
            found += [(node.lineno, name) for name in _op_literals(node.args[0])]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):  # a name set: all op names
            names = _op_literals(node)
            if len(names) >= 2 and len(names) == len(node.elts):
                found += [(node.lineno, name) for name in names]
    return sorted(set(found))


# the table's own files: the only place outside ``ops/`` that names ops
TABLE_FILES = frozenset({"optable.py", *(p.name for p in NUMBA.glob("oprules_*.py"))})
# modules that still decide by op names, each a strict xfail until its knowledge moves into
# ``OpDef`` fields or ``NumbaRule`` entries (owner in brackets; see docs/architecture.md)
# (tests/lower/test_op_table_complete.py scans every op-name literal, with its exceptions' reasons)
LEFT_OUTSIDE = {
    "gpu/devices.py": "'array' as a device-array guard-fact kind (not an op) [C]",
    "gpu/runtime.py": "'log' as an np.errstate mode (not an op) [C]",
}


def _all_modules() -> list:
    modules = sorted(str(p.relative_to(NUMBA)) for p in NUMBA.rglob("*.py")
                     if p.name not in TABLE_FILES)
    return [pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=LEFT_OUTSIDE[m]))
            if m in LEFT_OUTSIDE else m for m in modules]


def test_the_scan_finds_op_names_in_decisions():
    source = ('if node.target == "clip": pass\nx = t in ("getitem", "setitem")\n'
              'T = {"where": 1, "copy": 2}\nself.ops["copy_"]\nd.get("sum")\n'
              'fields = {"acc": 1, "mean": 2}\ncall(node, "mean")\n')
    assert op_name_uses(source) == [(1, "clip"), (2, "getitem"), (2, "setitem"), (3, "copy"),
                                    (3, "where"), (4, "copy_"), (5, "sum")]


def test_the_scan_finds_name_sets():
    source = ('MODULAR = frozenset({"add", "subtract"})\nNAMES = ("exp", "log")\n'
              'keys = ("top", "inner", "stack")\n')
    assert op_name_uses(source) == [(1, "add"), (1, "subtract"), (2, "exp"), (2, "log")]


@pytest.mark.parametrize("module", _all_modules())
def test_no_module_outside_the_table_names_an_op(module):
    """Every module of the numba target but the table's files: no decision by an op's name."""
    assert op_name_uses((NUMBA / module).read_text()) == []


@pytest.mark.parametrize("module", GENERIC)
def test_generic_emitters_name_no_op(module):
    path = NUMBA / module
    assert op_name_uses(path.read_text()) == []


def test_every_lowerable_op_has_an_entry():
    """Pointwise ops and reductions (what a kernel can hold) and the ops on Python numbers have
    an entry; every entry is a registered op, of the kind its rules are for."""
    lowerable = {name for name, op in REGISTRY.ops.items()
                 if op.kind in ("pointwise", "reduction") or op.python is not None}
    assert lowerable <= set(optable.TABLE)
    assert set(optable.TABLE) <= OP_NAMES
    for name, rule in optable.TABLE.items():
        assert isinstance(rule, optable.NumbaRule)
        if rule.element is not None:
            assert REGISTRY[name].kind == "pointwise", name
        if rule.checked_int:
            assert REGISTRY[name].python_int == "checked", name
            assert isinstance(rule.python, PythonRule) and isinstance(rule.python.int, str)
        if REGISTRY[name].kind == "reduction":
            assert rule.loop is not None, name  # whole-array calls and axis helpers
    assert optable.numba_rule("no such op") == optable.NumbaRule()


# -- what the rules write (pinned: the same source as before the table) ----------------------------


def _graph():
    b = GraphBuilder(np.zeros(4), np.zeros(4, bool), np.zeros((3, 3)),
                     np.zeros((3, 3), np.int32), names="x c A B")
    i = b.graph.placeholder("L['i']", TensorMeta((), np.dtype(np.int64), False, int), "i")
    b.env[i] = 3
    return b, i


def _source(graph, node):
    text, lines, helpers = expression_source(graph, node)
    return text, sorted(h.split("def ")[1].split("(")[0] for h in helpers)


def test_clip_and_where_in_loop_code():
    b, _ = _graph()
    x, c = b.inputs[:2]
    clip, where = b("clip", x, 0.0, 1.0), b("where", c, x, 2.5)
    graph = b.output(clip, where)
    assert _source(graph, clip) == ("np.minimum(np.maximum(x, np.float64(0.0)), np.float64(1.0))",
                                    [])
    assert _source(graph, where) == ("np.where(c, x, np.float64(2.5))", [])


def test_clip_and_where_in_fused_kernels():
    b, _ = _graph()
    x, c = b.inputs[:2]
    clip, where = b("clip", x, 0.0, 1.0), b("where", c, x, 2.5)
    b.output(clip, where)
    rule = optable.element_rule(clip, {})
    nan_max = "({0} if ({0} > {1} or {0} != {0}) else {1})"
    assert rule.template == f"({nan_max} if ({nan_max} < {{2}} or {nan_max} != {nan_max}) " \
                            "else {2})"
    assert rule.operands == (0, 1, 2) and rule.result_dtype == np.float64
    rule = optable.element_rule(where, {})
    assert rule.template == "({1} if {0} else {2})"
    assert rule.operand_dtypes == (np.dtype(bool), np.dtype(np.float64), np.dtype(np.float64))


def test_matmul_in_loop_code(monkeypatch):
    from astcompiler.lower.numba import region_ops
    b, _ = _graph()
    A, B = b.inputs[2:4]
    floats, ints = b("matmul", A, A), b("matmul", B, B)
    graph = b.output(floats, ints)
    monkeypatch.setattr(region_ops, "_SCIPY", True)
    text, helpers = _source(graph, floats)  # numba's BLAS call on C operands, else NumPy's
    step = f"_ac_numpy_{floats.name}_0"
    assert text == ("(np.dot(np.ascontiguousarray(A), np.ascontiguousarray(A)) if "
                    f"A.flags.c_contiguous and A.flags.c_contiguous else {step}(A))")  # A once
    assert f"{step}_numpy" in helpers  # (the first def of its source: the NumPy call)
    assert _source(graph, ints) == (
        "_ac_matmul(B, B, np.zeros((B.shape[0], B.shape[1]), np.int32))", ["_ac_dot"])
    monkeypatch.setattr(region_ops, "_SCIPY", False)  # small static float matrices: our loops
    assert _source(graph, floats) == (
        "_ac_matmul(A, A, np.zeros((A.shape[0], A.shape[1]), np.float64))", ["_ac_dot"])


def test_python_int_add_in_loop_code():
    b, i = _graph()
    x = b.inputs[0]
    python = b.graph.call("add", (i, 1), {}, TensorMeta((), np.dtype(np.int64), False, int))
    numpy = b.graph.call("add", (i, x), {}, TensorMeta((4,), np.dtype(np.float64), False))
    shift = b.graph.call("left_shift", (i, 3), {},
                         TensorMeta((), np.dtype(np.int64), False, int))
    graph = b.output(python, numpy, shift)
    text, helpers = _source(graph, python)
    assert text == "_ac_add_int(int(i), int(1))"
    assert {"_ac_add_int", "_ac_py_compare_int_float"} <= set(helpers)
    assert _source(graph, numpy) == ("np.add(i, x)", [])
    assert _source(graph, shift)[0] == "_ac_py_left_shift_int(int(i), int(3))"


# -- the same rules end to end ---------------------------------------------------------------------


def clip_where_loop(x, lo, n):
    total = 0.0
    for k in range(n):
        y = np.clip(x * k, lo, 1.0)
        x = np.where(y > 0.5, y, x + 0.1)
        total += float(x[k % 4])
    return x, total


def matmul_loop(A, v, n):
    for _ in range(n):
        v = A @ v
        v = v / np.abs(v).max()
    return v


def python_int_adds(n, start):
    h = start
    for k in range(n):
        h = h * 31 + k
    return h


@pytest.mark.parametrize("fn, calls", [
    (clip_where_loop, [(np.linspace(-1.0, 2.0, 4), 0.25, 6)]),
    (matmul_loop, [(np.arange(9.0).reshape(3, 3) + np.eye(3), np.ones(3), 5),
                   (np.arange(9).reshape(3, 3), np.ones(3, np.int64), 4)]),
    (python_int_adds, [(5, 7), (40, 7), (3, -2 ** 62)]),  # past 64 bits: exact Python ints
])
def test_compiled_loops_match_plain(fn, calls):
    compiled = ac.compile(fn, backend="numba")
    for args in calls:
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        got = compiled(*args)
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert type(g) is type(w)
        elif isinstance(want, np.ndarray):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
        else:
            assert got == want and type(got) is type(want)
