"""Red team, round s9 (a differential search, plain call against compiled call): hashing of
traced values, the class of lifted containers, contents of container subclasses read through
C methods, objects that read their container later (iterators, views, partials, bound methods)
kept across a graph break or passed in, and split functions whose defaults name module globals.
Each case compares values, types and the caller's objects over several calls."""

from __future__ import annotations

import collections
import copy
import functools

import numpy as np
import pytest

import astcompiler as ac


def both(fn, *args):
    """(plain result, compiled result, plain args after, compiled args after) on copies."""
    plain_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
    return fn(*plain_args), ac.compile(fn)(*compiled_args), plain_args, compiled_args


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


# ----- hashing a traced value: a graph break, never an identity hash -----------------------------
def allowed(x):
    return int(x[0]) in {1, 2}, x[0] in {1: 0}, [int(v) in {1, 3} for v in x]


def table(x, names):
    return names.get(int(x.argmax()), "?"), {0: "a", 1: "b"}.get(int(x[0]))


def count(x):
    seen = {}
    for v in x:
        seen[v] = seen.get(v, 0) + 1
    return seen


@pytest.mark.parametrize("fn, args", [
    (allowed, (np.array([1, 5, 3]),)),
    (table, (np.array([1, 5, 3]), {1: "max"})),
    (count, (np.array([1.0, 1.0, 2.0]),)),
])
def test_values_from_arrays_hash_by_value(fn, args):
    plain, compiled, _, _ = both(fn, *args)
    assert plain == compiled
    assert [type(k) for k in plain] == [type(k) for k in compiled] if isinstance(plain, dict) \
        else True


def keyed_by_array(x):
    return {x: 1}


def test_an_array_is_unhashable_as_in_numpy():
    x = np.ones(3)
    with pytest.raises(TypeError, match="unhashable type: 'numpy.ndarray'"):
        keyed_by_array(x)
    with pytest.raises(TypeError, match="unhashable type: 'numpy.ndarray'"):
        ac.compile(keyed_by_array)(x)


# ----- type() of lifted containers ---------------------------------------------------------------
def by_type(x, items, options):
    scale = len(items) if type(items) is list else 1
    name = type(options).__name__
    return x * scale, name, items.__class__ is list, type(options["p"]).__name__


def test_type_of_a_list_or_dict_argument_is_the_users_class():
    args = (np.ones(2), [1, 2, 3], collections.OrderedDict(p=[1]))
    plain, compiled, _, _ = both(by_type, *args)
    assert np.array_equal(plain[0], compiled[0]) and plain[1:] == compiled[1:]
    assert compiled[1:] == ("OrderedDict", True, "list")


# ----- contents of container subclasses (C methods): guarded, mutations recorded -----------------
class Registry(dict):
    pass


class Stack(list):
    pass


def append_to_item(box, x):
    box[1 if isinstance(box, dict) else 0].append(x)
    return box


def read_contents(box):
    return len(box), box[1] * 2, 1 in box


@pytest.mark.parametrize("make", [lambda: Registry({1: []}), lambda: Stack([[], 5]),
                                  lambda: collections.deque([[], 5]),
                                  lambda: collections.defaultdict(list)])
def test_mutations_through_items_of_container_subclasses_happen_every_call(make):
    plain, compiled = make(), make()
    fn = ac.compile(append_to_item)
    for value in (7, 7, 8):
        append_to_item(plain, value)
        fn(compiled, value)
    assert plain == compiled


@pytest.mark.parametrize("make", [lambda: Registry({1: 5}), lambda: Stack([0, 5]),
                                  lambda: collections.deque([0, 5])])
def test_contents_read_through_c_methods_are_guarded(make):
    plain, compiled = make(), make()
    fn = ac.compile(read_contents)
    assert read_contents(plain) == fn(compiled)
    for box in (plain, compiled):
        box[1] = 6
        if isinstance(box, dict):
            box[2] = 0
        else:
            box.append(1)
    assert read_contents(plain) == fn(compiled)


def fill_default(x):
    d = collections.defaultdict(list)
    d[1].append(x)
    v = d[5]
    print("a graph break")
    return dict(d), v is d[5]


def test_a_defaultdict_made_before_a_break(capsys):
    plain, compiled, _, _ = both(fill_default, 5)
    assert plain == compiled == ({1: [5], 5: []}, True)


# ----- objects that read their container later ---------------------------------------------------
def live_iterator(items):
    it = iter(items)
    print("a graph break")
    items.append(4)
    return list(it)


def live_view(d):
    keys = d.keys()
    print("a graph break")
    d["b"] = 2
    return list(keys), len(keys)


def live_partial(items):
    size = functools.partial(len, items)
    print("a graph break")
    items.append(3)
    return size()


def live_flat(x):
    flat = x.flat
    x[0] = 9.0
    return list(flat)


def deep(items):
    return copy.deepcopy(items), copy.copy(items)


@pytest.mark.parametrize("fn, args", [
    (live_iterator, ([1, 2],)), (live_view, ({"a": 1},)), (live_partial, ([1, 2],)),
    (live_flat, (np.arange(3.0),)), (deep, ([[1], [2, 3]],)), (deep, ({"a": [1]},)),
])
def test_lazy_readers_see_the_containers_as_python_does(fn, args, capsys):
    plain, compiled, plain_args, compiled_args = both(fn, *args)
    assert len(plain) == len(compiled) and all(_same(a, b) for a, b in zip(plain, compiled)) \
        if isinstance(plain, tuple) else _same(plain, compiled) or plain == compiled
    for a, b in zip(plain_args, compiled_args):
        assert _same(a, b) or a == b


def scaled(x, fn):
    return fn(x) * 2


def test_a_partial_of_constants_still_compiles():
    compiled = ac.compile(scaled)
    x = np.ones(3)
    add_one = functools.partial(np.add, 1.0)
    assert np.array_equal(compiled(x, add_one), scaled(x, add_one))
    assert not compiled.entries[0].is_eager


# ----- identity of np.asarray, Python ints in kernels --------------------------------------------
def same_array(x):
    y = np.asarray(x)
    return np.asarray(x) is x, np.asanyarray(x) is x, "same" if y is x else "different", \
        np.asarray(x, dtype=np.float32) is x


def test_asarray_of_an_input_array_is_the_array_itself():
    plain, compiled, _, _ = both(same_array, np.arange(3.0))
    assert plain == compiled == (True, True, "same", False)


def power_sum(n):
    return np.zeros(2).sum() + n ** 5


def test_python_int_arithmetic_beside_a_kernel_keeps_pythons_precision():
    compiled = ac.compile(power_sum)
    for n in (2, 3, 40000, 10 ** 6):  # the third call is dynamic: n ** 5 outgrows int64
        want, got = power_sum(n), compiled(n)
        assert type(got) is type(want) and got == want


# ----- warnings before NumPy's error are not repeated --------------------------------------------
def ratio(a, b):
    return a / b + 1.0


def ratio_loop(a, b, n):
    for _ in range(n):
        a = a / b + 1.0
    return a


@pytest.mark.parametrize("fn, extra", [(ratio, ()), (ratio_loop, (70,)), (ratio_loop, (3,))])
def test_a_warning_before_an_errstate_error_comes_once(fn, extra):
    """``0/0`` and ``1/0`` in one divide: NumPy warns "divide by zero", then raises "invalid";
    the compiled call reran the graph with NumPy and then the original (two warnings)."""
    import warnings
    compiled = ac.compile(fn)
    compiled(np.ones(2), np.ones(2), *extra)
    seen = []
    for f in (fn, compiled):
        with warnings.catch_warnings(record=True) as caught, np.errstate(invalid="raise"):
            warnings.simplefilter("always")
            with pytest.raises(FloatingPointError, match="invalid value encountered in divide"):
                f(np.array([0.0, 1.0]), np.zeros(2), *extra)
        seen.append([(w.category, str(w.message), w.lineno) for w in caught])
    assert seen[0] == seen[1] and len(seen[0]) == 1


# ----- Python's TypeError for a bad call of a compiled function --------------------------------------
def keyword_only(x, *, k, m=2):
    return x * k + m


@pytest.mark.parametrize("args, kwargs", [((np.ones(2), 3), {}), ((np.ones(2),), {}),
                                          ((np.ones(2),), {"k": 1, "z": 2}),
                                          ((np.ones(2), 3), {"k": 1})])
def test_bad_calls_raise_pythons_type_error(args, kwargs):
    compiled = ac.compile(keyword_only)
    compiled(np.ones(2), k=1)  # an entry (and its dispatch) exists
    messages = []
    for fn in (keyword_only, compiled):
        with pytest.raises(TypeError) as caught:
            fn(*args, **kwargs)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
