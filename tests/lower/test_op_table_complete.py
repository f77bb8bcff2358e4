"""No op name outside the numba target's op table: an AST scan of every module of
``lower/numba/`` (``cuda/`` and ``vecmath/`` included) for string literals that are op names,
outside the table's own files (``optable.py``, ``oprules_*.py``) and docstrings. What must stay
is listed below, literal by literal, with its reason; a listed literal that is gone fails too,
so the list never outgrows the code. And each per-op fact that moved into the table is asked
of the table: the rules still write what they wrote before."""

from __future__ import annotations

import ast
import pathlib
from collections import Counter

import numpy as np
import pytest

from astcompiler.graph import TensorMeta
from astcompiler.lower.numba import optable, scans
from astcompiler.lower.numba.bounds import ValueRanges
from astcompiler.lower.numba.gpu.matmul import gpu_matmul, operand_shapes
from astcompiler.ops import REGISTRY

from numba_helpers import GraphBuilder

NUMBA = pathlib.Path(optable.__file__).parent
TABLE_FILES = frozenset({"optable.py", *(p.name for p in NUMBA.glob("oprules_*.py"))})
OP_NAMES = frozenset(REGISTRY.ops)

# (module, literal) -> (how many times, why it stays): none of these decides by an op's name
EXCEPTIONS: dict[tuple[str, str], tuple[int, str]] = {
    ("cpu.py", "mean"): (4, "an accumulator's name suffix (acc_name(node, 'mean'))"),
    ("cpu.py", "stack"): (2, "a pairwise-sum traversal variable's name"),
    ("cpu.py", "zeros"): (2, "np.zeros or np.empty for a kernel's scratch buffer"),
    ("cpu.py", "empty"): (2, "np.zeros or np.empty for a kernel's scratch buffer"),
    ("gpu/kernels.py", "mean"): (1, "an accumulator's name suffix"),
    ("region_ops.py", "mean"): (5, "the {mean} field of ReductionDef templates"),
    ("host.py", "getitem"): (1, "builds a getitem node (graph.call), decides nothing"),
    ("runtime.py", "divide"): (3, "NumPy's FP-error category 'divide' (np.errstate)"),
    ("runtime.py", "empty"): (1, "the runtime module's own function empty (__all__)"),
    ("gpu/runtime.py", "divide"): (1, "NumPy's FP-error category 'divide'"),
    ("gpu/runtime.py", "log"): (1, "the np.errstate mode 'log'"),
    ("runtime.py", "add"): (1, "llvmlite's atomicrmw operation 'add' (runtime.zero_watch)"),
    ("gpu/devices.py", "array"): (2, "a guard fact's kind 'array' (device arrays)"),
    ("scalar.py", "remainder"): (3, "HELPER_STEMS: names of generated helper functions"),
    ("scalar.py", "fmod"): (2, "HELPER_STEMS: names of generated helper functions"),
    ("scalar.py", "power"): (1, "HELPER_STEMS: names of generated helper functions"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and ast.get_docstring(node) is not None}


def op_literals(source: str) -> Counter:
    """Op names among the string constants of ``source`` (docstrings left out)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return Counter(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                   and isinstance(node.value, str) and node.value in OP_NAMES
                   and id(node) not in docs)


def _found() -> dict[tuple[str, str], int]:
    found = {}
    for path in sorted(NUMBA.rglob("*.py")):
        if path.name in TABLE_FILES:
            continue
        module = str(path.relative_to(NUMBA))
        for name, count in op_literals(path.read_text()).items():
            found[(module, name)] = count
    return found


def test_the_scan_sees_literals_but_not_docstrings():
    source = '"""np.sin of x."""\ndef f(node):\n    """add"""\n    return node.target == "sin"\n' \
             'T = {"exp": 1}\nU = ("log", "not an op")\n'
    assert op_literals(source) == Counter({"sin": 1, "exp": 1, "log": 1})


def test_no_op_name_outside_the_table():
    found = _found()
    unlisted = {key: count for key, count in found.items()
                if key not in EXCEPTIONS or EXCEPTIONS[key][0] != count}
    assert unlisted == {}, "op names outside optable/oprules_*: move the fact into the table"


def test_every_exception_is_still_there():
    found = _found()
    stale = {key: why for key, (count, why) in EXCEPTIONS.items() if found.get(key) != count}
    assert stale == {}


# -- the facts that moved into the table -----------------------------------------------------------


def _kernel_rule(target, *arrays, **kwargs):
    b = GraphBuilder(*arrays)
    node = b(target, *b.inputs, **kwargs) if not kwargs.get("const") else None
    b.output(node)
    return optable.element_rule(node, {})


@pytest.mark.parametrize("target, dtype, template, helpers", [
    ("add", np.int8, "np.int8(np.add({0}, {1}))", ()),  # computed in uint8: wraps like NumPy
    ("add", np.float64, "np.add({0}, {1})", ()),
    ("floor_divide", np.int32, "floordiv_int32({0}, {1})", ("floordiv_int:int32",)),
    ("floor_divide", np.uint16, "floordiv_uint16({0}, {1})", ("floordiv_uint:uint16",)),
    ("floor_divide", np.float64, "floordiv_float64({0}, {1})", ("floordiv_float:float64",)),
    ("remainder", np.float32, "remainder_float32({0}, {1})", ("remainder_float:float32",)),
    ("fmod", np.int64, "fmod_int64({0}, {1})", ("fmod_int:int64",)),
    ("fmod", np.float64, "np.fmod({0}, {1})", ()),
    ("right_shift", np.int16, "rshift_int16({0}, {1})", ("rshift_int:int16",)),
    ("right_shift", np.uint8, "rshift_uint8({0}, {1})", ("rshift_uint:uint8",)),
    ("left_shift", np.int64, "lshift_int64({0}, {1})", ("lshift:int64",)),
    ("maximum", np.float64, "({0} if ({0} > {1} or {0} != {0}) else {1})", ()),
    ("minimum", np.int32, "np.minimum({0}, {1})", ()),
])
def test_binary_ufunc_rules(target, dtype, template, helpers):
    a = np.ones(4, dtype)
    rule = _kernel_rule(target, a, a)
    assert rule.template == template and rule.helpers == helpers


@pytest.mark.parametrize("target, dtype, expected", [
    ("fmax", np.float64, None), ("fmin", np.float32, None),  # NumPy's SIMD loop decides -0.0
    ("sign", np.uint8, "np.uint8({0} != 0)"),
    ("sign", np.float64, "(np.float64(1.0) if {0} > 0 else (np.float64(-1.0) if {0} < 0 else "
                         "(np.float64(0.0) if {0} == 0 else {0})))"),
    ("absolute", np.int8, "(np.int8(np.negative(np.uint8({0}))) if {0} < 0 else {0})"),
    ("negative", np.int16, "np.int16(np.negative({0}))"),
])
def test_unary_and_numpy_only_rules(target, dtype, expected):
    a = np.ones(4, dtype)
    args = (a, a) if REGISTRY[target].ufunc.nin == 2 else (a,)
    rule = _kernel_rule(target, *args)
    assert (rule.template if rule is not None else None) == expected


def test_integer_power_and_libm_for_integer_exponents(monkeypatch):
    from astcompiler.config import config
    monkeypatch.setattr(config, "vector_math", True)
    monkeypatch.setattr(config, "vector_math_min_elements", 1)
    b = GraphBuilder(np.ones(4, np.int32), np.ones(4), np.ones(4))
    i, x, y = b.inputs
    cube, real, pow_array = b("power", i, 3), b("power", x, 3.0), b("power", x, y)
    negative = b.graph.call("power", (i, -1), {}, cube.meta)  # NumPy raises: not built by it
    b.output(cube, negative, real, pow_array)
    assert optable.element_rule(cube, {}).helpers == ("power_int:int32",)
    assert optable.element_rule(negative, {}) is None  # NumPy raises on negative int powers
    assert optable.element_rule(real, {}).template == "np.power({0}, {1})"  # libm's pow
    assert optable.element_rule(pow_array, {}).helpers == ("vecmath:power:float64",)


def test_value_ranges_come_from_the_table():
    b = GraphBuilder(np.zeros((5, 3)), names="x")
    (x,) = b.inputs
    meta = TensorMeta((), np.dtype(np.int64), False, int)
    n = b.graph.call("dim_size", (x, 0), {}, meta)
    k = b.graph.placeholder("L['k']", meta, "k")
    two = b.graph.call("scalar", (2,), {}, meta)
    last = b.graph.call("subtract", (n, 1), {}, meta)
    offset = b.graph.call("add", (k, two), {}, meta)
    scaled = b.graph.call("multiply", (k, 3), {}, meta)
    ranges = ValueRanges(rule=optable.value_range)
    ranges.loops[k] = (0, 3)
    assert ranges.of(n) == (5, 5) and ranges.of(two) == (2, 2) and ranges.of(last) == (4, 4)
    assert ranges.of(offset) == (2, 5) and ranges.of(scaled) == (0, 9)
    assert ValueRanges().of(offset) is None  # without the table's rules: nothing is known


def test_scans_and_products_come_from_the_table():
    assert {name: optable.numba_rule(name).scan for name in scans.SCANS} == {"cumsum": "+",
                                                                            "cumprod": "*"}
    v = np.arange(6.0)
    np.testing.assert_array_equal(scans.SCANS["cumprod"](v + 1), np.cumprod(v + 1))
    b = GraphBuilder(np.ones((2, 3, 4)), np.ones((2, 4, 5)), names="A B")
    A, B = b.inputs
    batched, dotted = b("matmul", A, B), b("dot", A, B)
    b.output(batched)
    assert gpu_matmul(batched) and not gpu_matmul(dotted)  # dot of 3-D operands: the host's
    assert operand_shapes("dot", (2, 3, 4), (2, 4, 5)) is None
    assert operand_shapes("matmul", (2, 3, 4), (2, 4, 5))[3] == (2, 3, 5)
