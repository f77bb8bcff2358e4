"""The per-op knowledge of ``OpDef`` fields agrees with NumPy, and region nodes carry a typed
``RegionInfo`` that printed graphs show."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.graph import Graph, NonstrictCallInfo, RegionInfo, TensorMeta
from astcompiler.lower import lookup_backend
from astcompiler.ops import REGISTRY
from astcompiler.ops.python_scalars import PYTHON_OPS
from astcompiler.ops.registry import NUMPY_ONLY_ALL
from astcompiler.testing import CompileCounter

OPS = [REGISTRY[name] for name in REGISTRY.names()]
INT64 = np.dtype(np.int64)
MIN, MAX = int(np.iinfo(INT64).min), int(np.iinfo(INT64).max)
SAMPLES = (MIN, MIN + 1, -64, -3, -1, 0, 1, 2, 3, 63, 64, MAX - 1, MAX)


def _ufunc_ops(nin: int | None = None) -> list:
    return [op for op in OPS if op.ufunc is not None and (nin is None or op.ufunc.nin == nin)]


def test_ufunc_ops_are_pointwise_numpy_ufuncs():
    assert len(_ufunc_ops()) > 60
    for op in _ufunc_ops():
        assert op.kind == "pointwise", op.name
        assert isinstance(op.ufunc, np.ufunc) and op.ufunc.__name__ == op.name
        assert op.impl is op.ufunc and op.ufunc in op.aliases


# -- layout_free -----------------------------------------------------------------------------

LAYOUT_FREE_CALLS = {
    "getitem": lambda a: ((a, (slice(None, None, 2), 1)), {}),
    "transpose": lambda a: ((a,), {}),
    "swapaxes": lambda a: ((a, 0, 2), {}),
    "moveaxis": lambda a: ((a, 0, -1), {}),
    "expand_dims": lambda a: ((a, 1), {}),
    "squeeze": lambda a: ((a[:, :1],), {}),
    "broadcast_to": lambda a: ((a, (2, 4, 3, 5)), {}),
    "atleast_1d": lambda a: ((a,), {}),
    "atleast_2d": lambda a: ((a,), {}),
    "atleast_3d": lambda a: ((a,), {}),
    "diagonal": lambda a: ((a,), {}),
    "flip": lambda a: ((a,), {}),
    "fliplr": lambda a: ((a,), {}),
    "flipud": lambda a: ((a,), {}),
    "rot90": lambda a: ((a,), {}),
    "real": lambda a: ((a.astype(np.complex128),), {}),
    "imag": lambda a: ((a.astype(np.complex128),), {}),
}


def test_every_layout_free_op_is_a_view_op_with_a_check_here():
    layout_free = {op.name for op in OPS if op.layout_free}
    assert layout_free == set(LAYOUT_FREE_CALLS)
    assert all(REGISTRY[name].kind == "view" for name in layout_free)


@pytest.mark.parametrize("name", sorted(LAYOUT_FREE_CALLS))
def test_layout_free_views_view_c_and_fortran_inputs_alike(name):
    op = REGISTRY[name]
    for order in "CF":
        base = np.asarray(np.arange(60.0).reshape(4, 3, 5), order=order)
        args, kwargs = LAYOUT_FREE_CALLS[name](base)
        source = args[0]
        args, kwargs = op.canonical(args, kwargs)
        assert np.shares_memory(op.impl(*args, **kwargs), source), (name, order)


def test_reshape_is_a_view_op_whose_view_depends_on_the_layout():
    op = REGISTRY["reshape"]
    assert op.kind == "view" and not op.layout_free
    views = []
    for order in "CF":
        base = np.asarray(np.arange(12.0).reshape(3, 4), order=order)
        args, kwargs = op.canonical((base, (12,)), {})
        views.append(np.shares_memory(op.impl(*args, **kwargs), base))
    assert views == [True, False]


# -- no_identity ---------------------------------------------------------------------------------


def test_no_identity_ops_are_reductions_raising_numpys_message_on_empty_input():
    found = [op for op in OPS if op.no_identity is not None]
    assert found
    for op in found:
        assert op.kind == "reduction" and op.reduction is not None, op.name
        args, kwargs = op.canonical((np.zeros(0),), {})
        with pytest.raises(ValueError) as info:
            op.impl(*args, **kwargs)
        assert str(info.value) == op.no_identity


def test_reductions_with_an_identity_accept_empty_input():
    for op in OPS:
        if op.kind != "reduction" or op.no_identity is not None:
            continue
        args, kwargs = op.canonical((np.zeros(0),), {})
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            op.impl(*args, **kwargs)  # mean/var/std: NaN with a warning, never an error


# -- comparison ------------------------------------------------------------------------------


def test_comparisons_are_the_ufuncs_of_pythons_comparison_operators():
    python_comparisons = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                          operator.ne)
    comparisons = {op.name for op in OPS if op.comparison}
    assert comparisons == {name for name, fn in PYTHON_OPS.items() if fn in python_comparisons}
    for name in comparisons:
        loop = REGISTRY[name].ufunc.resolve_dtypes((INT64, np.dtype(np.float32), None))
        assert loop[-1] == np.dtype(bool)


def test_comparisons_accept_python_ints_outside_the_dtype_and_arithmetic_does_not():
    small = np.array([1, -2], np.int8)
    for op in _ufunc_ops(2):
        if op.comparison:
            assert op.impl(small, 1000).dtype == np.bool_
        elif op.python_int is not None and op.name in PYTHON_OPS:  # int8 arithmetic
            with pytest.raises(OverflowError):
                op.impl(small, 1000)


# -- python_int ------------------------------------------------------------------------------


def _python(op, *args):
    if op.name in PYTHON_OPS:
        return PYTHON_OPS[op.name](*args)
    return op.impl(*args).item()  # logical_*: NumPy on Python ints, a bool


def _int64(op, *args):
    with np.errstate(all="ignore"):
        return op.ufunc(*(np.int64(a) for a in args)).item()


def _agrees(op, args) -> bool:
    try:
        expected = _python(op, *args)
    except (ArithmeticError, ValueError):
        return False  # Python raises where 64-bit arithmetic computes something
    return type(expected) in (int, bool) and expected == _int64(op, *args)


def _operands(op) -> list[tuple]:
    if op.ufunc.nin == 1:
        return [(a,) for a in SAMPLES]
    def fits(b: int) -> bool:  # keep Python's powers and shifts small
        if op.name not in ("power", "left_shift"):
            return True
        return b <= 64 and (b >= 0 or op.name != "power")
    return [(a, b) for a in SAMPLES for b in SAMPLES if fits(b)]


@pytest.mark.parametrize("op", [op for op in OPS if op.python_int is not None],
                         ids=lambda op: op.name)
def test_python_int_policy_matches_python_on_int64_operands(op):
    assert op.ufunc is not None and op.kind == "pointwise"  # a scalar rule for kernels
    assert op.name in PYTHON_OPS or op.name.startswith("logical_")
    agree = [_agrees(op, args) for args in _operands(op)]
    if op.python_int == "exact":
        assert all(agree)
    else:  # "checked": some in-range operands need the check
        assert op.python_int == "checked" and not all(agree) and any(agree)


def test_python_int_policy_covers_every_int_operator_of_python():
    unlisted = [name for name in PYTHON_OPS if name in REGISTRY and REGISTRY[name].ufunc is not None
                and REGISTRY[name].python_int is None]
    assert unlisted == ["divide"]  # int / int is a float


# -- cheap, numpy_only, data_dependent_shape -------------------------------------------------


def test_cheap_ops_are_pointwise_with_a_scalar_template():
    cheap = [op for op in OPS if op.cheap]
    assert len(cheap) > 20
    for op in cheap:
        assert op.kind == "pointwise" and (op.scalar is not None or op.ufunc is not None), op.name
    transcendental = [op for op in _ufunc_ops(1) if op.name in ("exp", "log", "sin", "tanh")]
    assert transcendental and not any(op.cheap for op in transcendental)


def test_numpy_only_names_dtype_kinds_of_ufunc_ops():
    for op in OPS:
        if op.numpy_only:
            assert op.ufunc is not None and set(op.numpy_only) <= set(NUMPY_ONLY_ALL), op.name


def test_data_dependent_shape_is_decided_by_the_index_dtype():
    graph = Graph()
    x = graph.placeholder("L['x']", TensorMeta((5,), np.dtype(np.float64)), "x")
    mask = graph.placeholder("L['m']", TensorMeta((5,), np.dtype(bool)), "m")
    ints = graph.placeholder("L['i']", TensorMeta((2,), np.dtype(np.int64)), "i")
    rule = REGISTRY["getitem"].data_dependent_shape
    assert rule((x, mask), {}) and rule((x, (mask,)), {})
    assert not rule((x, ints), {}) and not rule((x, slice(1, None)), {})
    assert {op.name for op in OPS if op.data_dependent_shape is not None} == \
        {"getitem", "repeat", "bincount"}


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_mask_read_keeps_one_graph_for_every_count(backend):
    def fn(x):
        return x[x > 0] * 2.0

    counter = CompileCounter()

    def counting_backend(graph, inputs):
        counter(graph, inputs)
        return lookup_backend(backend)(graph, inputs)

    compiled = ac.compile(fn, backend=counting_backend)
    for x in (np.array([1.0, -1.0, 2.0, 3.0]), np.array([-1.0, -1.0, 5.0, -3.0])):
        np.testing.assert_array_equal(compiled(x), fn(x))
    assert counter.frame_count == 1


# -- RegionInfo ------------------------------------------------------------------------------


def _loops(x, n):
    total = 0.0
    k = 0
    for i in range(n):
        if x[i] > 0:
            total = total + x[i]
        k = k + 1
    while total > 1.0:
        total = total / 2.0
    return total, k


def _regions(graph: Graph) -> list:
    found = []
    for node in graph.nodes:
        if node.op == "region":
            found.append(node)
            for sub in node.info.subgraphs.values():
                found += _regions(sub)
    return found


def _graph_of(fn, *args):
    compiled = ac.compile(fn, backend="eager", dynamic=True)
    result = compiled(*args)
    assert result == fn(*args)
    entry = compiled.entries[0]
    return entry.graph, entry.graph_code


def test_region_nodes_carry_a_typed_info_matching_their_subgraphs():
    graph, _ = _graph_of(_loops, np.array([3.0, -1.0, 2.0, 5.0]), 4)
    regions = _regions(graph)
    assert {r.target for r in regions} == {"for_range", "cond", "while_loop"}
    leading = {"for_range": {"body": 1}, "while_loop": {"cond": 0, "body": 0},
               "cond": {"true": 0, "false": 0}}
    for region in regions:
        info = region.info
        assert type(info) is RegionInfo and len(info.names) == info.n_carried
        controls, carried, captured = info.split(region.args)
        assert (len(controls), len(carried), len(captured)) == \
            (info.n_controls, info.n_carried, info.n_captured)
        assert set(info.subgraphs) == set(leading[region.target])
        for label, sub in info.subgraphs.items():
            expected = leading[region.target][label] + info.n_carried + info.n_captured
            assert len(sub.placeholders) == expected, (region.target, label)
    for node in graph.nodes:
        assert (node.info is not None) == (node.op == "region")


def test_printed_graphs_show_each_regions_info():
    graph, code = _graph_of(_loops, np.array([3.0, -1.0, 2.0, 5.0]), 4)
    lines = code.splitlines()
    for region in _regions(graph):
        at = next(i for i, line in enumerate(lines)
                  if line.strip().startswith(f"{region.name} = region.{region.target}("))
        info = region.info
        assert lines[at + 1].strip() == f"# args: controls={info.n_controls}, " \
            f"carried={info.n_carried}, captured={info.n_captured}"
        assert lines[at + 2].strip() == f"# carries: {', '.join(info.names)}"
        for label in info.subgraphs:
            assert any(line.strip().startswith(f"def {label}(self") for line in lines[at:])


@ac.nonstrict_trace
def _scaled(w, x):
    return w * x + 1.0


def test_nonstrict_calls_carry_their_call_info():
    def fn(w, x):
        return _scaled(w, x) * 2.0

    w, x = np.arange(3.0), np.ones(3)
    compiled = ac.compile(fn, backend="eager")
    np.testing.assert_array_equal(compiled(w, x), fn(w, x))
    [region] = _regions(compiled.entries[0].graph)
    info = region.info
    assert isinstance(info, NonstrictCallInfo) and region.target == "nonstrict_call"
    assert info.names == (_scaled.__qualname__,) and info.n_inputs == 2
    assert info.array_positions == [0, 1] and info.array_out == [0]
    assert f"nonstrict_trace.{_scaled.__qualname__}(w, x)" in compiled.entries[0].graph_code


# -- store, returns_input ------------------------------------------------------------------------

STORE_CALLS = {
    "setitem": lambda dst, value: (dst, (slice(1, 3),), value[:2]),
    "copy_": lambda dst, value: (dst, value),
}


@pytest.mark.parametrize("name", sorted(STORE_CALLS))
def test_store_rules_say_what_a_mutation_writes(name):
    op = REGISTRY[name]
    assert op.kind == "mutation" and op.side_effects
    dst, value = np.zeros(4), np.arange(1.0, 5.0)
    args = STORE_CALLS[name](dst, value)
    store = op.store(args, {})
    assert store.dst is dst and args[store.value_arg] is store.value
    expected = dst.copy()
    expected[store.index] = store.value
    op.impl(*args)
    np.testing.assert_array_equal(dst, expected)
    assert op.store(args, {"extra": 1}) is None  # not the plain form: no single store


def test_only_stores_have_store_rules():
    assert {op.name for op in OPS if op.store is not None} == set(STORE_CALLS)


def test_returns_input_marks_casts_that_may_return_their_argument():
    op = REGISTRY["astype"]
    x = np.arange(3.0)
    for copy in (True, False):
        args, kwargs = op.canonical((x, np.float64), {"copy": copy})
        assert (op.impl(*args, **kwargs) is x) == op.returns_input(args, kwargs) == (not copy)
    power = REGISTRY["linalg_matrix_power"]  # NumPy returns ``a`` itself for n == 1
    a = np.eye(2) * 3.0
    for n in (1, 2):
        args, kwargs = power.canonical((a, n), {})
        assert (power.impl(*args, **kwargs) is a) == power.returns_input(args, kwargs) == (n == 1)
    assert {op.name for op in OPS if op.returns_input is not None} == {"astype",
                                                                       "linalg_matrix_power"}


# -- the numba target's spelling table -----------------------------------------------------------


def test_numba_python_spellings_agree_with_python_operators():
    """The op table's infix spellings on Python numbers compute Python's operator, and its
    int-vs-float comparison outcomes say when Python's comparison holds."""
    from astcompiler.lower.numba import optable

    infix = 0
    for name, rule in optable.TABLE.items():
        spelling = rule.python
        if spelling is None:
            continue
        assert name in REGISTRY
        if rule.checked_int:
            assert REGISTRY[name].python_int == "checked", name
        template = spelling.int
        if isinstance(template, str) and "_ac_" not in template and name in PYTHON_OPS \
                and "{1}" in template:
            infix += 1
            for a, b in [(7, 3), (-5, 2), (0, -1)]:
                assert eval(template.format("a", "b")) == PYTHON_OPS[name](a, b), name
        if spelling.int_float is not None:
            assert REGISTRY[name].comparison
            for a, b in [(3, 2.5), (3, 3.0), (3, 3.5), (2 ** 60 + 1, float(2 ** 60)),
                         (1, float("nan"))]:
                outcome = 2 if b != b else (-1 if a < b else (1 if a > b else 0))
                assert (outcome in spelling.int_float) == PYTHON_OPS[name](a, b), name
                assert (outcome in spelling.float_int) == PYTHON_OPS[name](b, a), name
    assert infix >= 10
    assert {n for n, r in optable.TABLE.items() if r.python is not None
            and r.python.int_float is not None} == {op.name for op in OPS if op.comparison}
    assert all(REGISTRY[n].ufunc is not None for n, r in optable.TABLE.items()
               if r.ufunc is not None)  # rules where numba's scalar ufunc is not NumPy's


def test_numba_helper_stems_name_the_functions_helpers_define():
    from astcompiler.lower.numba.scalar import HELPER_STEMS, helper_call, helper_source

    for key, stem in HELPER_STEMS.items():
        dtype = "float64" if key.endswith("_float") else "uint8" if "uint" in key else "int16"
        name = helper_call(f"{key}:{dtype}")
        assert name == f"{stem}_{dtype}"
        assert f"def {name}(" in helper_source(f"{key}:{dtype}")


def _csr_matvec(indptr, indices, data, x):
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    return np.bincount(rows, weights=data * x[indices], minlength=indptr.shape[0] - 1)


def _csr(counts: list[int]) -> tuple:
    rng = np.random.default_rng(len(counts) + sum(counts))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, len(counts), int(indptr[-1]))
    return indptr, indices, rng.standard_normal(int(indptr[-1])), rng.standard_normal(len(counts))


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_repeat_by_computed_counts_and_bincount_have_data_dependent_lengths(backend):
    assert REGISTRY["repeat"].data_dependent_shape((None, np.arange(3)), {}) is False
    compiled = ac.compile(_csr_matvec, backend=backend, fullgraph=True)
    for counts in ([2, 0, 3, 1], [0, 0, 5, 1], [1, 1, 1, 1], [0, 0, 0, 0]):
        args = _csr(counts)
        np.testing.assert_array_equal(compiled(*args), _csr_matvec(*args))
    code = compiled.entries[0].graph_code
    assert "np.repeat(" in code and "np.bincount(" in code
    assert "[u0]" in code  # an unbacked length, not the example's
    with pytest.raises(ValueError, match="negative"):
        compiled(np.array([0, 2, 1, 3]), np.zeros(3, np.int64), np.ones(3), np.ones(3))
