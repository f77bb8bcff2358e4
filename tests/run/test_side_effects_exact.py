"""Side effects exactly once, in order, on the caller's objects (issue 9, group 3).

Every case runs the plain function and the compiled one on their own copies of the same state,
several calls in a row, and compares the return values, the caller's objects after each call,
the identity of returned containers and the exception raised.
"""

from __future__ import annotations

import collections
import copy
import functools

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter

BACKENDS = ["eager", "aot_eager", "numba"]


def _outcome(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as error:  # noqa: BLE001 - compared with the plain call's
        return ("raised", f"{type(error).__name__}: {error}")


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and np.allclose(a, b)
    if isinstance(a, (list, tuple)) and type(a) is type(b):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and type(a) is type(b):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (float, np.floating)) and type(a) is type(b):
        return bool(np.isclose(a, b))
    if type(a) is type(b) and type(a).__module__ == __name__:  # the test's own classes
        return _same(vars(a), vars(b))
    return type(a) is type(b) and a == b


def compare(fn, make_args, backend, calls=3, **options):
    """Plain and compiled, ``calls`` times on their own argument objects; returns the compiled
    function and the last (plain, compiled) argument tuples."""
    compiled = ac.compile(fn, backend=backend, **options)
    plain_args, compiled_args = make_args(), make_args()
    for call in range(calls):
        expected, got = _outcome(fn, plain_args), _outcome(compiled, compiled_args)
        assert expected[0] == got[0] and _same(expected[1], got[1]), (call, expected, got)
        assert _same(list(plain_args), list(compiled_args)), (call, plain_args, compiled_args)
    return compiled, plain_args, compiled_args


# ----- 1. mutations reach the caller's objects, also after a graph break -----------------------

def appends_after_print(x, history, table):
    y = np.sin(x)
    print("step")
    history.append(float(y.sum()))
    table["last"] = y.max()
    return y * 2


def appends_after_explicit_break(x, history):
    y = np.cos(x)
    ac.graph_break()
    history.append(y.sum())
    history.extend([1, 2])
    z = y + 1
    ac.graph_break()
    history.insert(0, z.max())
    return z


@pytest.mark.parametrize("backend", BACKENDS)
def test_mutations_after_a_graph_break_reach_the_callers_objects(backend, capsys):
    compare(appends_after_print, lambda: (np.arange(3.0), [], {}), backend)
    _, plain, compiled = compare(appends_after_explicit_break, lambda: (np.arange(4.0), []),
                                 backend)
    assert len(compiled[1]) == 3 * 4


def returns_its_arguments(x, lst, d):
    y = x + 1
    return lst, (d, [lst]), y


def returns_after_break(x, lst, d):
    y = x * 3
    print("break")
    lst.append(1)
    return lst, {"d": d}, y


GLOBAL_LIST: list = []
GLOBAL_DICT: dict = {}


def returns_globals(x):
    GLOBAL_LIST.append(1)
    GLOBAL_DICT["n"] = len(GLOBAL_DICT)
    return GLOBAL_LIST, GLOBAL_DICT, x * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [returns_its_arguments, returns_after_break])
def test_returned_argument_containers_are_the_callers_objects(fn, backend, capsys):
    compiled = ac.compile(fn, backend=backend)
    lst, d = [], {}
    for _ in range(3):
        out = compiled(np.ones(2), lst, d)
        assert out[0] is lst
        inner = out[1]
        assert (inner[0] if isinstance(inner, tuple) else inner["d"]) is d
        if isinstance(inner, tuple):
            assert inner[1][0] is lst
    assert lst == ([] if fn is returns_its_arguments else [1, 1, 1])


def test_returned_globals_are_the_global_objects():
    GLOBAL_LIST.clear()
    GLOBAL_DICT.clear()
    compiled = ac.compile(returns_globals, backend="eager")
    for _ in range(3):
        out = compiled(np.ones(2))
        assert out[0] is GLOBAL_LIST and out[1] is GLOBAL_DICT
    assert GLOBAL_LIST == [1, 1, 1]


LOG: list = []


def stores_a_local_list(x):
    out = []
    LOG.append(out)
    out.append(float(x.sum()))
    out.append(2)
    return out


def test_a_local_list_stored_outside_and_returned_is_one_object():
    LOG.clear()
    compiled = ac.compile(stores_a_local_list, backend="eager")
    for _ in range(2):
        result = compiled(np.ones(3))
        assert result is LOG[-1] and result == [3.0, 2]
    assert len(LOG) == 2 and LOG[0] is not LOG[1]


def replaces_then_mutates_the_old_item(x, nested):
    first = nested[0]
    nested[0] = []
    first.append(x.sum())
    return x


def test_mutations_target_the_objects_the_call_started_with():
    compare(replaces_then_mutates_the_old_item, lambda: (np.ones(2), [[1], [2]]), "eager")
    compiled = ac.compile(replaces_then_mutates_the_old_item, backend="eager")
    nested = [[1], [2]]
    old = nested[0]
    compiled(np.ones(2), nested)
    assert nested[0] == [] and old == [1, 2.0]


def mutates_in_a_helper(x, history):
    record(history, x.sum())
    return x + 1


def record(history, value):
    history.append(value)
    history.append(len(history))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_mutations_in_inlined_helpers(backend):
    compare(mutates_in_a_helper, lambda: (np.ones(2), []), backend)


def copies_and_keywords(x, lst, d):
    items = [1, 2]
    lst.extend(items)
    items.append(3)  # after the extend: the caller's list must not see it
    lst.extend(v for v in (7, 8))
    lst.sort(reverse=True)
    d.update(a=1, b=2)
    d |= {"c": x.shape[0]}
    lst += [0]
    return x


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_copying_methods_and_keyword_arguments(backend):
    compare(copies_and_keywords, lambda: (np.ones(2), [5], {}), backend)


# ----- 2. outside state read at run time ---------------------------------------------------------

STACK: list = []


def pops(x):
    return x * STACK.pop()


@pytest.mark.parametrize("backend", BACKENDS)
def test_pop_reads_the_stack_at_run_time(backend):
    STACK[:] = [1, 2, 3]
    compiled = ac.compile(pops, backend=backend)
    results = [float(compiled(np.ones(1))[0]) for _ in range(3)]
    assert results == [3.0, 2.0, 1.0] and STACK == []


def extends_with_itself(x, lst):
    lst.extend(lst)
    return x * len(lst)


def pops_from_a_dict(x, d):
    value = d.pop("k", 0)
    d["k"] = value + 1
    return x + value


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_reads_of_state_that_the_function_changes(backend):
    compare(extends_with_itself, lambda: (np.ones(1), [1, 2]), backend)
    compare(pops_from_a_dict, lambda: (np.ones(1), {}), backend, calls=4)


class Counter:
    n = 0


def counts(x):
    Counter.n += 1
    return x * Counter.n


@pytest.mark.parametrize("backend", BACKENDS)
def test_class_attribute_counter(backend):
    Counter.n = 0
    compiled = ac.compile(counts, backend=backend)
    results = [float(compiled(np.ones(1))[0]) for _ in range(3)]
    assert results == [1.0, 2.0, 3.0] and Counter.n == 3


def setitem_out_of_range(x, lst, i):
    lst[i] = x.sum()
    return x


def test_item_assignment_guards_the_length_not_the_values():
    compiled = ac.compile(setitem_out_of_range, backend="eager")
    lst = [0.0]
    for value in (1.0, 2.0, 3.0):
        compiled(np.full(2, value), lst, 0)
    assert lst == [6.0] and len(compiled.entries) == 1
    with pytest.raises(IndexError, match="list assignment index out of range"):
        compiled(np.ones(2), [], 0)


# ----- 3. effects before a run-time error happen; order ------------------------------------------

def appends_then_indexes(x, log, idx):
    log.append(1)
    y = x[idx]
    log.append(2)
    return y * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_effects_before_a_run_time_error_happen(backend):
    compiled = ac.compile(appends_then_indexes, backend=backend)
    plain_log, compiled_log = [], []
    for idx in ([0, 1], [2, 0], [7, 0], [-1, 0], [1, -9]):
        index = np.array(idx)
        expected = _outcome(appends_then_indexes, (np.arange(3.0), plain_log, index))
        got = _outcome(compiled, (np.arange(3.0), compiled_log, index))
        assert expected[0] == got[0] and _same(expected[1], got[1]), (idx, expected, got)
        assert plain_log == compiled_log
    assert len(compiled.entries) == 1


def interleaves(x, log):
    log.append("start")
    y = np.exp(x)
    log.append(y.sum())
    log.append(("mid", x.shape[0]))
    z = y * 2
    log.append(z.max())
    return z, len(log)


@pytest.mark.parametrize("backend", BACKENDS)
def test_effects_keep_program_order(backend):
    compare(interleaves, lambda: (np.arange(3.0), []), backend)


# ----- 4. code the capture or the guards evaluate runs as often as in plain Python ---------------

class WithProperty:
    def __init__(self):
        self.reads = 0
        self.scale = 2.0

    @property
    def factor(self):
        self.reads += 1
        return self.scale * 3


class WithGetattr:
    def __init__(self):
        self.misses = []

    def __getattr__(self, name):
        self.misses.append(name)
        return 1.5


def reads_property(x, obj):
    return x * obj.factor


def reads_missing(x, obj):
    return x + obj.anything


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_property_getters_run_once_per_call(backend):
    _, plain, compiled = compare(reads_property, lambda: (np.ones(2), WithProperty()), backend,
                                 calls=4)
    assert plain[1].reads == compiled[1].reads == 4
    _, plain, compiled = compare(reads_missing, lambda: (np.ones(2), WithGetattr()), backend,
                                 calls=3)
    assert plain[1].misses == compiled[1].misses == ["anything"] * 3


def reads_stateless_property(x, obj):
    return x * obj.doubled


class Stateless:
    def __init__(self, value):
        self.value = value

    @property
    def doubled(self):
        return self.value * 2


def test_a_pure_property_is_inlined_and_guarded_on_what_it_reads():
    compiled = ac.compile(reads_stateless_property, backend="eager")
    obj = Stateless(1.0)
    for value in (1.0, 1.0, 3.0):
        obj.value = value
        np.testing.assert_allclose(compiled(np.ones(2), obj), np.full(2, value * 2))
    assert len(compiled.entries) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_allow_in_graph_runs_once_per_call(backend):
    runs = []

    @ac.allow_in_graph
    def scaled(x):
        runs.append(1)
        return x * 2

    def fn(x):
        return scaled(x) + 1

    compiled = ac.compile(fn, backend=backend)
    for size in (3, 3, 4, 4, 3, 4):
        np.testing.assert_allclose(compiled(np.ones(size)), np.full(size, 3.0))
    assert len(runs) == 6


def test_allow_in_graph_result_unused_or_repeated_still_runs_each_time():
    runs = []

    @ac.allow_in_graph
    def noted(x):
        runs.append(1)
        return x + 1

    def fn(x):
        noted(x)
        return noted(x) + noted(x)

    compiled = ac.compile(fn, backend="eager")
    for _ in range(3):
        np.testing.assert_allclose(compiled(np.ones(2)), np.full(2, 4.0))
    assert len(runs) == 9


def test_nonstrict_trace_runs_once_per_call_on_eager():
    runs = []

    @ac.nonstrict_trace
    def traced(x):
        runs.append(1)
        return x * 2

    def fn(x):
        return traced(x) - 1

    compiled = ac.compile(fn, backend="eager")
    for size in (3, 3, 4, 4, 3, 4):
        np.testing.assert_allclose(compiled(np.ones(size)), np.ones(size))
    assert len(runs) == 6


def test_counter_frames_of_a_split_with_side_effects(capsys):
    counter = CompileCounter()
    compiled = ac.compile(appends_after_print, backend=counter)
    history, table = [], {}
    plain_history, plain_table = [], {}
    for _ in range(3):
        compiled(np.arange(3.0), history, table)
        appends_after_print(np.arange(3.0), plain_history, plain_table)
    assert counter.frame_count == 2
    assert history == plain_history and copy.deepcopy(table).keys() == plain_table.keys()


class WithSetter:
    def __init__(self):
        self._c = 0.0
        self.sets = 0

    @property
    def c(self):
        return self._c * 10

    @c.setter
    def c(self, value):
        self.sets += 1
        self._c = value


def assigns_property(x, obj):
    obj.c = float(x.shape[0])
    return x * obj.c


def test_property_setters_run_once_per_call_and_reads_see_the_getter():
    _, plain, compiled = compare(assigns_property, lambda: (np.ones(2), WithSetter()), "eager")
    assert plain[1].sets == compiled[1].sets == 3


def mutates_outside_set(x, seen, out):
    seen.add(x.shape[0])
    seen.discard(-1)
    seen |= {7}
    local = {1, 2}
    out.append(local)
    return seen, local, x * len(seen)


def test_outside_sets_are_mutated_by_the_replay_and_returned_by_reference():
    compiled = ac.compile(mutates_outside_set, backend="eager")
    for _ in range(3):
        seen, out = {-1}, []
        result = compiled(np.ones(2), seen, out)
        assert result[0] is seen and seen == {2, 7} and result[1] is out[0]
        np.testing.assert_allclose(result[2], np.full(2, 2.0))
    assert len(compiled.entries) == 1
    compare(mutates_outside_set, lambda: (np.ones(2), {-1}, []), "eager")


class Cached:
    def __init__(self):
        self.computed = 0

    @functools.cached_property
    def total(self):
        self.computed += 1
        return 4.0


class Loud:
    def __init__(self):
        self.reads = 0
        self.value = 2.0

    def __getattribute__(self, name):
        if name == "value":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


class Bag:
    def __init__(self):
        self.items = [1.0]

    def __iter__(self):
        return iter(self.items)


def reads_cached(x, obj):
    return x * obj.total


def reads_loud(x, obj):
    return x * obj.value


def sums_bag(x, bag):
    for v in bag:
        x = x + v
    return x


def test_descriptors_and_getattribute_with_python_code_run_as_in_plain_python():
    _, plain, compiled = compare(reads_cached, lambda: (np.ones(2), Cached()), "eager")
    assert plain[1].computed == compiled[1].computed == 1
    _, plain, compiled = compare(reads_loud, lambda: (np.ones(2), Loud()), "eager")
    assert object.__getattribute__(compiled[1], "reads") == 3


def test_iterating_an_outside_object_reads_it_on_every_call():
    compiled = ac.compile(sums_bag, backend="eager")
    bag = Bag()
    for extra in (2.0, 3.0, None):
        np.testing.assert_allclose(compiled(np.zeros(1), bag), sums_bag(np.zeros(1), bag))
        if extra is not None:
            bag.items.append(extra)
    queue = collections.deque([1.0])
    compiled = ac.compile(sums_bag, backend="eager")
    for _ in range(3):
        np.testing.assert_allclose(compiled(np.zeros(1), queue), sums_bag(np.zeros(1), queue))
        queue.append(2.0)


def test_allow_in_graph_without_arrays_runs_on_every_call(capsys):
    runs = []

    @ac.allow_in_graph
    def tick(n):
        runs.append(n)
        return np.ones(1) * n

    def fn(x):
        return x + tick(2)

    compiled = ac.compile(fn, backend="eager")
    for _ in range(3):
        np.testing.assert_allclose(compiled(np.ones(2)), np.full(2, 3.0))
    assert runs == [2, 2, 2]
