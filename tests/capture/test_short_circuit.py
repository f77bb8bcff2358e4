"""``and``/``or``/``not``/``a if c else b``: Python's result (the deciding operand itself, its
type), Python's laziness (the right operand runs only when needed, side effects included), on
Python values and on array data; the same type rules after loops that may run zero times; NumPy's
own errors for read-only and mismatched outputs (issue 9)."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import BACKENDS
from tests.semantics.harness import Case, Program, entry_kinds, run_case


def check(fn, calls, backend, observe=None):
    """Plain and compiled agree on every call (value, type, identity, effects); returns the
    kinds of the compiled function's entries ("graph", "split", "eager"). ``calls`` is a list,
    or a factory of a ``Program`` (fresh outside state for each run)."""
    stats: dict = {}
    factory = calls if callable(calls) else lambda: Program(fn, list(calls), observe)
    case = Case("short_circuit/test", "short_circuit", factory)
    difference = run_case(case, backend, stats)
    assert difference is None, difference.message()
    return stats["entries"]


def vec(*values, dtype=np.float64):
    return np.array(values, dtype=dtype)


# ----- Python values decide at capture ---------------------------------------------------------
def python_operands(x, a, b):
    return (a and b), (a or b), (not a), (b if a else x.sum()), x * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a, b", [(0, 5), (3, 5), (0.0, 2.5), (1.5, 0.0), (None, 1), (1, None),
                                  ([], [1]), ([2], []), ("", "s"), (True, 0)])
def test_python_operands_return_the_operand(backend, a, b):
    kinds = check(python_operands, [(vec(1.0, 2.0), a, b), (vec(1.0, 2.0, 3.0), a, b)], backend)
    assert "eager" not in kinds


def right_side_effect(x, flag, log):
    return flag or log.append(x.shape[0]), flag and log.append(-1), x + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_right_operand_runs_only_when_needed(backend):
    def program():
        log: list = []
        return Program(right_side_effect, [(vec(1.0, 2.0), True, log), (vec(1.0), False, log),
                                           (vec(1.0, 2.0, 3.0), 0, log)])
    check(right_side_effect, program, backend)


# ----- array data decides at run time ----------------------------------------------------------
def scalar_select(x):
    a = x[0] > 1
    b = x[-1] > 1
    return (a and b), (a or b), (x[0] and x[-1]), (x[0] or x.sum()), (not x[0]), \
        (x[0] if x[1] > 0 else x[-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_scalars_are_chosen_in_a_region(backend):
    values = [vec(2.0, 3.0), vec(0.0, 3.0), vec(2.0, 0.0, -1.0), vec(0.0, -1.0, 0.0),
              vec(np.nan, 1.0), vec(2, 0, dtype=np.float32)]
    kinds = check(scalar_select, [(v,) for v in values], backend)
    assert set(kinds) == {"graph"}  # no graph break: each choice is a branch region


def test_array_choice_is_one_cond_region_and_the_right_side_is_lazy():
    def f(x):
        return x[0] > 0 and x[-1] > 0

    compiled = ac.compile(f, backend="eager")
    assert compiled(vec(1.0, 2.0)) is np.True_
    assert compiled(vec(-1.0, 2.0)) is np.False_
    assert compiled(vec(1.0, 2.0, -3.0)) is np.False_
    code = compiled.entries[-1].graph_code
    assert "region.cond" in code and "where" not in code


def index_guarded(x, i):
    return (i < x.shape[0] and x[i] > 0), (i >= x.shape[0] or x[i] > 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_right_operand_that_would_raise_is_not_evaluated(backend):
    check(index_guarded, [(vec(1.0, 2.0), 1), (vec(1.0, 2.0), 5), (vec(-1.0, 2.0, 3.0), 0)],
          backend)


def mixed_types(x):
    return (x[0] > 1 and 5), (x[0] or 2.5), (x.sum() > 0 or None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sides_of_different_types_keep_their_types(backend):
    check(mixed_types, [(vec(2.0, 3.0),), (vec(0.0, 3.0),), (vec(0.0, -3.0),)], backend)


def array_operands(x, y):
    z = x[:1] or y  # an array of size 1 decides by its element; `or` returns it itself
    return z, z is x, (y[:1] and x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_size_one_arrays_are_returned_as_themselves(backend):
    check(array_operands, [(vec(1.0, 2.0), vec(3.0, 4.0)), (vec(0.0, 2.0), vec(0.0, 4.0))], backend)


def side_effect_on_data(x):
    calls = []

    def probe(v):
        calls.append(v)
        return v > 1

    ok = probe(x[0]) and probe(x[-1]) or probe(x.sum())
    return ok, len(calls)


@pytest.mark.parametrize("backend", BACKENDS)
def test_side_effects_in_right_operand_on_data_happen_as_in_python(backend):
    values = [vec(2.0, 3.0), vec(0.5, 3.0), vec(2.0, 0.0, -5.0), vec(0.5, 0.5)]
    check(side_effect_on_data, [(v,) for v in values], backend)


def outside_log(x, log):
    return x[0] > 0 and log.append(1), x[0] > 0 or log.append(2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_outside_effects_in_right_operand_on_data(backend):
    def program():
        log: list = []
        return Program(outside_log, [(vec(1.0), log), (vec(-1.0), log), (vec(1.0, 2.0), log)])
    check(outside_log, program, backend)


# ----- tests: only the truth is used -----------------------------------------------------------
def while_with_and(x):
    i = 0
    total = 0.0
    while i < x.shape[0] and x[i] > 0:
        total = total + x[i]
        i += 1
    return i, total


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_test_with_and_on_data_stays_lazy(backend):
    values = [vec(1.0, 2.0, -1.0, 4.0), vec(1.0, 2.0), vec(-1.0, 2.0, 3.0), vec(3.0, 2.0, 1.0)]
    check(while_with_and, [(v,) for v in values], backend)


def if_with_mixed_operands(x, n):
    if n > 1 and x[0] > 0 or not (x[-1] < 0 or n == 0):
        return x * 2
    return x - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_if_test_mixing_python_and_data(backend):
    calls = [(vec(1.0, 2.0), 2), (vec(-1.0, 2.0), 2), (vec(-1.0, -2.0), 0), (vec(1.0, -2.0), 1)]
    check(if_with_mixed_operands, calls, backend)


def not_of_data(x):
    return not x[0], not (x[0] > 0), type(not x[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_not_of_array_data_is_a_python_bool(backend):
    kinds = check(not_of_data, [(vec(0.0, 1.0),), (vec(2.0, 0.0),), (vec(0.0, 0.0, 1.0),)], backend)
    assert set(kinds) == {"graph"}


# ----- the same rules after loops on array data (a loop that may run zero times) ----------------
def accumulate_while(x, limit):
    out = np.zeros(1)
    s = 0.0  # Python float; np.float64 once the body ran
    i = 0
    while i < x.shape[0] and s < limit[0]:
        s = s + x[i]
        i += 1
    out[0] = s
    return out, i


def accumulate_returned(x, limit):
    s = 0.0
    i = 0
    while i < x.shape[0] and s < limit[0]:
        s = s + x[i]
        i += 1
    return s


def test_accumulator_stored_into_an_array_compiles_in_one_graph():
    calls = [(vec(1.0, 2.0, 3.0), vec(2.0)), (vec(1.0, 2.0, 3.0), vec(-1.0)),
             (vec(1.0, 2.0), vec(9.0))]
    kinds = check(accumulate_while, calls, "eager")
    assert set(kinds) == {"graph"}  # no split, no eager run


@pytest.mark.parametrize("backend", BACKENDS)
def test_accumulator_returned_keeps_python_float_when_the_loop_is_skipped(backend):
    calls = [(vec(1.0, 2.0, 3.0), vec(2.0)), (vec(1.0, 2.0, 3.0), vec(-1.0)),
             (vec(1.0, 2.0), vec(-5.0)), (vec(1.0, 2.0), vec(9.0))]
    check(accumulate_returned, calls, backend)
    compiled = ac.compile(accumulate_returned, backend=backend)
    assert type(compiled(vec(1.0, 2.0), vec(-1.0))) is float
    assert type(compiled(vec(1.0, 2.0), vec(2.0))) is np.float64


def escape_time(cs, maxiter):
    out = np.zeros(cs.shape[0], np.int64)
    for k in range(cs.shape[0]):
        z = 0j
        n = 0
        while n < maxiter and abs(z) <= 2.0:
            z = z * z + cs[k]
            n += 1
        out[k] = n
    return out


def test_a_dead_accumulator_keeps_the_escape_time_loop_compiled():
    rng = np.random.default_rng(3)
    cs = rng.standard_normal(40) + 1j * rng.standard_normal(40)
    compiled = ac.compile(escape_time, backend="eager", fullgraph=True)
    np.testing.assert_array_equal(compiled(cs, 30), escape_time(cs, 30))
    assert "dead=('z'" in compiled.entries[0].rewritten_code


# ----- NumPy's own errors for read-only and mismatched outputs ----------------------------------
def scale_in_place(x):
    x *= 2
    return x


def test_a_read_only_input_raises_numpys_error_and_is_guarded():
    compiled = ac.compile(scale_in_place, backend="eager")
    compiled(vec(1.0, 2.0))
    assert ".flags.writeable" in compiled.entries[0].guards
    frozen = vec(1.0, 2.0)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="^output array is read-only$"):
        compiled(frozen)
    np.testing.assert_array_equal(frozen, vec(1.0, 2.0))
    np.testing.assert_array_equal(compiled(vec(1.0, 2.0)), vec(2.0, 4.0))


def multiply_into(x, out):
    np.multiply(x, 2, out=out)
    return out


def test_out_of_another_size_raises_numpys_broadcast_error():
    compiled = ac.compile(multiply_into, backend="eager")
    compiled(vec(1.0, 2.0), np.zeros(2))
    compiled(vec(1.0, 2.0, 3.0), np.zeros(3))  # a dynamic entry
    with pytest.raises(ValueError) as plain:
        multiply_into(vec(1.0, 2.0, 3.0, 4.0), np.zeros(3))
    with pytest.raises(ValueError) as got:
        compiled(vec(1.0, 2.0, 3.0, 4.0), np.zeros(3))
    assert str(got.value) == str(plain.value)


def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0  # a Python float when row i is empty, an np.float64 otherwise: stored, exact
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_over_index_array_bounds_with_empty_rows_compiles(backend):
    indptr = np.array([0, 2, 2, 3, 3])  # rows 1 and 3 are empty (the last one at the end)
    indices = np.array([0, 2, 1])
    data = np.array([1.0, 2.0, 3.0])
    x = np.array([1.0, 10.0, 100.0])
    compiled = ac.compile(csr_matvec, backend=backend, fullgraph=True)
    np.testing.assert_array_equal(compiled(indptr, indices, data, x),
                                  csr_matvec(indptr, indices, data, x))
    assert len(compiled.entries) == 1 and compiled.entries[0].graph is not None


def test_liveness_finds_variables_nothing_reads_after_a_loop():
    import textwrap

    import libcst as cst

    from astcompiler.rewrite.liveness import Liveness
    source = textwrap.dedent("""\
        def f(xs, n):
            out = []
            for i in range(n):
                z = 0.0
                t = 1
                k = 0
                while k < 3 and z < 9:
                    z = z * 2 + xs[i]
                    t = t + k
                    k += 1
                out.append(t)
            g = lambda: k
            return out, g
        """)
    fn = cst.parse_module(source).body[0]
    liveness = Liveness(fn)
    outer, inner = liveness.parents.loops
    assert liveness.dead_after(inner, ["z", "t", "k"]) == ("z",)  # t read after, k by a lambda
    assert liveness.dead_after(outer, ["i", "z", "t", "k"]) == ("i", "z", "t")
    with_locals = cst.parse_module(source.replace("return out, g", "return locals()")).body[0]
    reads_all = Liveness(with_locals)
    assert reads_all.dead_after(reads_all.parents.loops[1], ["z"]) == ()
