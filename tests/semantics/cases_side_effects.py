"""Group 3: side effects exactly once, in order, on the caller's objects.

Mutations of argument lists and dicts (also across a graph break), returning an argument
(``f(lst) is lst``), outside state read at run time (``stack.pop()``, ``lst.extend(lst)``,
``Counter.n += 1``), effects before a run-time error, and code that runs as often as in plain
Python (property getters, ``allow_in_graph`` and ``nonstrict_trace`` functions).
"""

from __future__ import annotations

import collections
import sys
import types

import numpy as np

import astcompiler as ac

from .harness import CaseRegistry, Program, call, step
from .values import mat, vec

CASES = CaseRegistry("side_effects")

LOG: list = []
COUNT = 0
STACK: list = []
REGISTRY: dict = {}
CALLS: list = []
sem_state = types.ModuleType("sem_state")


def _reset(**values):
    globals().update(values)


def _log():
    return LOG


# ----- argument mutations across graph breaks -----------------------------------------------------
def history_after_print(x, history):
    history.append(1)
    print("step", len(history))
    history.append(float(x.sum()))  # issue example: after the print it worked on a copy
    return x * 2


CASES.add("history_append_after_print", lambda: Program(
    history_after_print, [(vec(2), []), (vec(3), []), (vec(4), [0])]))


@CASES.case("history_shared_across_calls")
def _history_shared():
    history = []
    return Program(history_after_print, [(vec(2), history), (vec(3), history), (vec(4), history)])


def history_after_break(x, history):
    history.append("before")
    ac.graph_break()
    history.append("after")
    return x + len(history)


@CASES.case("list_append_across_graph_break")
def _list_break():
    h = []
    return Program(history_after_break, [(vec(2), h), (vec(3), h), (vec(4), [])])


def dict_across_break(x, d):
    d["a"] = float(x.sum())
    ac.graph_break()
    d["b"] = d.get("b", 0) + 1
    return x * d["b"]


@CASES.case("dict_setitem_across_graph_break")
def _dict_break():
    d = {}
    return Program(dict_across_break, [(vec(2), d), (vec(3), d), (vec(4), {"b": 10})])


def dict_across_print(x, d):
    d["n"] = x.shape[0]
    print("mid")
    d.setdefault("calls", 0)
    d["calls"] += 1
    return d


@CASES.case("dict_returned_after_print")
def _dict_print():
    d = {}
    return Program(dict_across_print, [(vec(2), d), (vec(3), d), (vec(4), {})])


def return_list_arg(x, lst):
    lst.append(x.shape[0])
    return lst


CASES.add("return_list_arg_identity", lambda: Program(
    return_list_arg, [(vec(2), []), (vec(3), [1]), (vec(4), [])]))


def return_list_arg_after_break(x, lst):
    lst.append(1)
    ac.graph_break()
    lst.append(2)
    return lst


CASES.add("return_list_arg_after_break", lambda: Program(
    return_list_arg_after_break, [(vec(2), []), (vec(3), [0]), (vec(4), [])]))


def return_dict_arg(x, d):
    d["sum"] = x.sum()
    return d


CASES.add("return_dict_arg_identity", lambda: Program(
    return_dict_arg, [(vec(2), {}), (vec(3), {"a": 1}), (vec(4), {})]))


def return_nested(x, lst, d):
    lst.append(0)
    return (lst, [d, x * 2], {"list": lst})


CASES.add("return_nested_identity", lambda: Program(
    return_nested, [(vec(2), [], {}), (vec(3), [1], {"k": 1}), (vec(4), [], {})]))


def return_same_twice(x):
    out = [x.sum()]
    return out, out


CASES.pure("return_same_new_object_twice", return_same_twice, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def return_untouched_arg(x, lst):
    return lst if x.sum() > 3 else []


CASES.add("return_list_arg_data_dependent", lambda: Program(
    return_untouched_arg, [(vec(2), [1]), (vec(3), [2]), (vec(1), [3]), (vec(4), [4])]))


def return_arg_array(x, y):
    y[0] = x[0]
    return y


CASES.add("return_array_arg_identity", lambda: Program(
    return_arg_array, [(vec(2), vec(2, start=5)), (vec(3), vec(3, start=5)), (vec(4), vec(4, start=5))]))


def list_methods(x, lst):
    lst.insert(0, 9)
    lst.sort()
    lst.reverse()
    if len(lst) > 3:
        lst.remove(lst[-1])
    lst.extend([x.shape[0]] * 2)
    return len(lst)


CASES.add("list_methods_mutation", lambda: Program(
    list_methods, [(vec(2), [3, 1]), (vec(3), [5, 4, 2]), (vec(4), [])]))


def list_clear_and_pop(x, lst):
    first = lst.pop(0)
    lst.clear()
    lst.append(first)
    return x * first


CASES.add("list_clear_pop", lambda: Program(
    list_clear_and_pop, [(vec(2), [2, 3]), (vec(3), [4]), (vec(4), [])]))


def dict_methods(x, d):
    d.update({"n": x.shape[0]})
    old = d.pop("old", None)
    d.setdefault("seen", []).append(x.shape[0])
    del d["n"]
    return old


@CASES.case("dict_methods_mutation")
def _dict_methods():
    d = {"old": 1}
    return Program(dict_methods, [(vec(2), d), (vec(3), d), (vec(4), {"old": 5})])


def nested_list_mutation(x, lst):
    lst[0].append(x.shape[0])
    lst[1]["k"] = lst[1].get("k", 0) + 1
    return lst[0]


@CASES.case("nested_container_mutation")
def _nested_mutation():
    state = [[], {}]
    return Program(nested_list_mutation, [(vec(2), state), (vec(3), state), (vec(4), [[1], {"k": 5}])])


def aliased_list_args(a, b):
    a.append(1)
    return len(b), a is b


@CASES.case("aliased_list_arguments")
def _aliased_lists():
    l1, l2 = [], []
    return Program(aliased_list_args, [(l1, l2), (l1, l1), (l2, l1), (l2, l2)])


def array_inplace(x):
    x[0] = 5
    x += 1
    np.multiply(x, 2, out=x)
    return x.sum()


CASES.add("array_arg_inplace", lambda: Program(
    array_inplace, [(vec(2),), (vec(3),), (vec(4, np.int64),)]))


def array_fill_sort(x):
    x[::-1].sort()
    y = x.copy()
    x.fill(0)
    return y


CASES.add("array_arg_sort_fill", lambda: Program(
    array_fill_sort, [(vec(2),), (vec(3),), (vec(4, np.int32),)]))


def array_inplace_after_break(x):
    x += 1
    ac.graph_break()
    x *= 2
    return x


CASES.add("array_inplace_across_break", lambda: Program(
    array_inplace_after_break, [(vec(2),), (vec(3),), (vec(4),)]))


def array_masked_assign(x):
    x[x > 2] = 0
    return x


CASES.add("array_masked_assign_return", lambda: Program(
    array_masked_assign, [(vec(2),), (vec(3),), (vec(4),)]))


def tolist_into(x, out):
    out.extend(x.tolist())
    out.append(x.sum())
    return len(out)


CASES.add("tolist_extend_types", lambda: Program(
    tolist_into, [(vec(2), []), (vec(3), []), (vec(4, np.int64), [])]))


# ----- outside state read at run time -------------------------------------------------------------
def pop_stack(x, stack):
    return x * stack.pop()


@CASES.case("stack_pop_repeated")
def _stack_pop():
    stack = [1, 2, 3, 4]
    return Program(pop_stack, [(vec(2), stack), (vec(2), stack), (vec(3), stack), (vec(3), stack),
                               (vec(3), stack)])


def pop_global_stack(x):
    return x * STACK.pop()


@CASES.case("global_stack_pop_repeated")
def _global_stack():
    _reset(STACK=[1, 2, 3])  # issue example: [3, 2, 1], not [3, 3, 3]
    return Program(pop_global_stack, [(vec(2),), (vec(2),), (vec(2),), (vec(2),)],
                   observe=lambda: STACK)


def extend_self(x, lst):
    lst.extend(lst)
    return x * len(lst)


@CASES.case("list_extend_self")
def _extend_self():
    lst = [1]
    return Program(extend_self, [(vec(2), lst), (vec(2), lst), (vec(3), lst), (vec(3), lst)])


@CASES.case("counter_class_attr_increment")
def _counter():
    class Counter:
        n = 0

    def f(x):
        Counter.n += 1  # issue example: replayed a constant
        return x * Counter.n
    return Program(f, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)], observe=lambda: Counter.n)


def global_count(x):
    global COUNT
    COUNT += 1
    return x + COUNT


@CASES.case("global_counter_increment")
def _global_counter():
    _reset(COUNT=0)
    return Program(global_count, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)],
                   observe=lambda: COUNT)


def global_count_break(x):
    global COUNT
    COUNT += 1
    ac.graph_break()
    COUNT += 10
    return x * COUNT


@CASES.case("global_counter_across_break")
def _global_counter_break():
    _reset(COUNT=0)
    return Program(global_count_break, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)],
                   observe=lambda: COUNT)


def global_rebind_from_size(x):
    global COUNT
    COUNT = x.shape[0]
    return x


@CASES.case("global_rebound_to_size")
def _global_rebind():
    _reset(COUNT=0)
    return Program(global_rebind_from_size, [(vec(2),), (vec(3),), (vec(4),)],
                   observe=lambda: (COUNT, type(COUNT)))


@CASES.case("closure_counter_nonlocal")
def _closure_counter():
    n = 0

    def f(x):
        nonlocal n
        n += 1
        return x * n
    return Program(f, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)], observe=lambda: f.__closure__[0].cell_contents)


@CASES.case("closure_list_append")
def _closure_list():
    seen = []

    def f(x):
        seen.append(x.shape[0])
        return x + len(seen)
    return Program(f, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)], observe=lambda: seen)


@CASES.case("module_attr_increment")
def _module_counter():
    module = types.ModuleType("sem_state")
    module.calls = 0
    sys.modules["sem_state"] = module
    _reset(sem_state=module)

    def f(x):
        sem_state.calls += 1
        return x * sem_state.calls
    return Program(f, [(vec(2),), (vec(2),), (vec(3),)], observe=lambda: module.calls)


@CASES.case("class_list_registry")
def _class_registry():
    class Registry:
        items = []

    def f(x):
        Registry.items.append(x.shape[0])
        return len(Registry.items)
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: Registry.items)


@CASES.case("object_attr_increment")
def _obj_counter():
    class State:
        def __init__(self):
            self.count = 0
            self.last = None
    s = State()

    def f(x, st):
        st.count += 1
        st.last = x.sum()
        return x * st.count
    return Program(f, [(vec(2), s), (vec(2), s), (vec(3), s), (vec(4), State())])


@CASES.case("method_increment")
def _method_counter():
    class Counter:
        def __init__(self):
            self.n = 0

        def inc(self):
            self.n += 1
            return self.n
    c = Counter()

    def f(x, counter):
        return x * counter.inc() + counter.inc()
    return Program(f, [(vec(2), c), (vec(2), c), (vec(3), c)])


@CASES.case("rng_state_consumed")
def _rng():
    rng = np.random.default_rng(0)

    def f(x, r):
        return x + r.random(), r.integers(0, 10)
    return Program(f, [(vec(2), rng), (vec(2), rng), (vec(3), rng), (vec(3), rng)])


@CASES.case("iterator_argument_consumed")
def _iterator():
    it = iter([1, 2, 3, 4, 5])

    def f(x, source):
        return x * next(source)
    return Program(f, [(vec(2), it), (vec(2), it), (vec(3), it), (vec(3), it)])


@CASES.case("mutable_default_accumulates")
def _mutable_default():
    def f(x, acc=[]):  # noqa: B006 - the shared default is the point
        acc.append(x.shape[0])
        return x * len(acc)
    return Program(f, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)], observe=lambda: f.__defaults__)


@CASES.case("deque_rotate")
def _deque():
    dq = collections.deque([1, 2, 3])

    def f(x, d):
        d.rotate(1)
        return x * d[0]
    return Program(f, [(vec(2), dq), (vec(2), dq), (vec(3), dq), (vec(3), dq)])


@CASES.case("set_add_discard")
def _set_mut():
    s = {1}

    def f(x, seen):
        seen.add(x.shape[0])
        seen.discard(1)
        return len(seen)
    return Program(f, [(vec(2), s), (vec(3), s), (vec(3), s), (vec(4), set())])


# ----- effects before a run-time error ------------------------------------------------------------
def append_then_index(x, log, i):
    log.append("start")
    y = x[i]  # IndexError raised by the array code
    log.append("end")
    return y


@CASES.case("effects_before_index_error")
def _effects_index_error():
    log = []
    return Program(append_then_index, [(vec(3), log, 1), (vec(4), log, 2), (vec(4), log, 7),
                                       (vec(2), log, -3), (vec(5), log, 0)])


def append_then_reshape(x, log):
    log.append(x.shape[0])
    y = x.reshape(2, 2)
    log.append("reshaped")
    return y


@CASES.case("effects_before_reshape_error")
def _effects_reshape():
    log = []
    return Program(append_then_reshape, [(vec(4), log), (vec(4), log), (vec(3), log), (vec(4), log)])


def global_then_error(x):
    global COUNT
    COUNT += 1
    return x @ x[:, :1]


@CASES.case("global_effect_before_matmul_error")
def _global_error():
    _reset(COUNT=0)
    return Program(global_then_error, [(mat(2, 2),), (mat(3, 3),), (mat(2, 3),), (mat(1, 1),)],
                   observe=lambda: COUNT)


def dict_then_error(x, d):
    d["seen"] = x.shape[0]
    if x.shape[0] > 3:
        raise ValueError(f"too big: {x.shape[0]}")
    d["ok"] = True
    return x


@CASES.case("effects_before_raise")
def _effects_raise():
    d = {}
    return Program(dict_then_error, [(vec(2), d), (vec(3), d), (vec(4), d), (vec(2), {})])


def effects_caught(x, log):
    try:
        log.append(1)
        y = x[10]
        log.append(2)
    except IndexError as exc:
        log.append(str(exc))
        y = x[0]
    log.append(3)
    return y


@CASES.case("effects_with_caught_error")
def _effects_caught():
    log = []
    return Program(effects_caught, [(vec(2), log), (vec(3), log), (vec(11), log), (vec(4), log)])


def print_then_error(x):
    print("start", x.shape[0])
    y = x.astype(np.int64)[x.shape[0]]
    print("end")
    return y


CASES.pure("print_before_error", print_then_error, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def effects_in_helper_before_error(x, log):
    def helper(v):
        log.append("helper")
        return v[5]
    log.append("caller")
    return helper(x) + 1


@CASES.case("helper_effects_before_error")
def _helper_error():
    log = []
    return Program(effects_in_helper_before_error, [(vec(6), log), (vec(7), log), (vec(3), log)])


# ----- code that runs as often as in plain Python -------------------------------------------------
@CASES.case("property_getter_counter")
def _property():
    class Box:
        def __init__(self):
            self.reads = 0
            self._v = 2.0

        @property
        def value(self):
            self.reads += 1
            return self._v
    box = Box()

    def f(x, b):
        return x * b.value + b.value
    return Program(f, [(vec(2), box), (vec(3), box), (vec(4), box), (vec(4), box)])


@CASES.case("property_getter_in_loop")
def _property_loop():
    class Box:
        reads = 0

        @property
        def scale(self):
            type(self).reads += 1
            return 3

    def f(x, b):
        for _ in range(2):
            x = x * b.scale
        return x
    return Program(f, [(vec(2), Box()), (vec(3), Box()), (vec(4), Box())], observe=lambda: Box.reads)


@CASES.case("getattr_dunder_counter")
def _getattr_counter():
    class Dyn:
        def __init__(self):
            self.__dict__["hits"] = 0

        def __getattr__(self, name):
            self.__dict__["hits"] += 1
            return len(name)
    obj = Dyn()

    def f(x, o):
        return x * o.abc + o.de
    return Program(f, [(vec(2), obj), (vec(3), obj), (vec(4), obj)])


@CASES.case("allow_in_graph_call_count")
def _allow_in_graph():
    calls = []

    @ac.allow_in_graph
    def scaled(v):
        calls.append(1)
        return v * 2

    def f(x):
        return scaled(x) + scaled(x + 1)
    return Program(f, [(vec(2),), (vec(3),), (vec(4),), (vec(4),), (vec(5),), (vec(2),)],
                   observe=lambda: len(calls))


NONSTRICT_CALLS = [(vec(2),), (vec(3),), (vec(4),), (vec(4),), (vec(5),), (vec(2),)]


@CASES.case("nonstrict_trace_call_count", backends=("eager",),
            note="the eager backend calls the original function at run time: once per call")
def _nonstrict():
    calls = []

    @ac.nonstrict_trace
    def traced(v):
        calls.append(1)
        return v + 1

    def f(x):
        return traced(x) * 2
    return Program(f, list(NONSTRICT_CALLS), observe=lambda: len(calls))


@CASES.case("nonstrict_trace_runs_at_capture", backends=("aot_eager", "numba"),
            note="torch semantics (docs/nonstrict_trace.md): aot_eager and numba run the traced "
                 "subgraph, so the body runs at capture, once per compile, never on a cached call")
def _nonstrict_traced():
    runs: list[bool] = []  # one item per run of the body: ac.is_compiling() at that time
    seen = {"observed": 0}

    @ac.nonstrict_trace
    def traced(v):
        runs.append(ac.is_compiling())
        return v + 1

    def f(x):
        return traced(x) * 2

    def observe() -> int:  # plain: one run per call
        return len(runs)

    def observe_compiled(compiled) -> object:
        seen["observed"] += 1  # observe runs once after each call
        at_capture, at_run = sum(runs), len(runs) - sum(runs)
        compiles = len(compiled.entries)
        if at_run == 0 and at_capture == compiles:  # the rule holds: what plain observes
            return seen["observed"]
        return f"{at_capture} runs at capture, {at_run} at run time, {compiles} compiles"
    return Program(f, list(NONSTRICT_CALLS), observe=observe, observe_compiled=observe_compiled)


@CASES.case("nonstrict_trace_prints")
def _nonstrict_print():
    @ac.nonstrict_trace
    def traced(v):
        print("traced", v.shape)
        return v * 3

    def f(x):
        return traced(x).sum()
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)])


@CASES.case("disabled_helper_call_count")
def _disabled():
    calls = []

    @ac.disable
    def side(v):
        calls.append(v.shape[0])
        return v - 1

    def f(x):
        return side(x) * 2
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: calls)


@CASES.case("helper_side_effect_count")
def _helper_count():
    calls = []

    def helper(v):
        calls.append(1)
        return v * 2

    def f(x):
        return helper(x) + helper(x)
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: len(calls))


@CASES.case("eq_dunder_call_count")
def _eq_count():
    class Token:
        compares = 0

        def __eq__(self, other):
            Token.compares += 1
            return isinstance(other, Token)

        __hash__ = object.__hash__

    def f(x, t):
        return x * 2 if t == Token() else x
    return Program(f, [(vec(2), Token()), (vec(3), Token()), (vec(4), 5)], observe=lambda: Token.compares)


@CASES.case("len_dunder_call_count")
def _len_count():
    class Bag:
        def __init__(self):
            self.calls = 0

        def __len__(self):
            self.calls += 1
            return 3
    bag = Bag()

    def f(x, b):
        return x * len(b)
    return Program(f, [(vec(2), bag), (vec(3), bag), (vec(4), bag)])


# ----- printing ---------------------------------------------------------------------------------
def print_order(x, lst):
    print("a")
    lst.append(1)
    print("b", lst)
    lst.append(x.shape[0])
    print("c", len(lst))
    return x


CASES.add("print_order_with_mutation", lambda: Program(
    print_order, [(vec(2), []), (vec(3), [0]), (vec(4), [])]))


def print_arrays(x):
    print(x)
    print(x.sum(), x.dtype, x.shape)
    return x + 1


CASES.pure("print_arrays", print_arrays, lambda: [(vec(2),), (vec(3, np.float32),), (vec(4, np.int64),)])


def print_kwargs(x):
    print("a", "b", sep="-", end="!\n")
    print(x.shape[0], file=sys.stdout)
    sys.stdout.write("raw\n")
    return x


CASES.pure("print_sep_end_file", print_kwargs, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def print_in_loop(x):
    for i in range(x.shape[0]):
        print(i, x[i])
    return x.sum()


CASES.pure("print_in_loop", print_in_loop, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def print_between_array_ops(x):
    y = x * 2
    print("y", y)
    z = y + 1
    print("z", z.sum())
    return z


CASES.pure("print_between_array_ops", print_between_array_ops,
           lambda: [(vec(2),), (vec(3),), (vec(4),)])


def append_arrays_to_log(x):
    LOG.append(x * 2)
    LOG.append(x.sum())
    return len(LOG)


@CASES.case("global_log_of_arrays")
def _global_log():
    _reset(LOG=[])
    return Program(append_arrays_to_log, [(vec(2),), (vec(3),), (vec(4),)], observe=_log)


def global_dict_update(x, key):
    REGISTRY[key] = x.sum()
    REGISTRY.setdefault("keys", []).append(key)
    return len(REGISTRY)


@CASES.case("global_dict_update")
def _global_dict():
    _reset(REGISTRY={})
    return Program(global_dict_update, [(vec(2), "a"), (vec(3), "b"), (vec(4), "a")],
                   observe=lambda: REGISTRY)


def comprehension_effects(x, log):
    return [log.append(i) or i * 2 for i in range(x.shape[0])]


CASES.add("comprehension_side_effects", lambda: Program(
    comprehension_effects, [(vec(2), []), (vec(3), []), (vec(4), [])]))


def loop_appends_floats(x, out):
    for v in x:
        out.append(float(v) * 2)
    return out


CASES.add("loop_appends_to_arg", lambda: Program(
    loop_appends_floats, [(vec(2), []), (vec(3), []), (vec(4), [])]))


def mutate_then_return_alias(x, lst):
    res = lst
    lst.append(x.shape[0])
    lst = [0]
    return res, lst


CASES.add("rebinding_after_mutation", lambda: Program(
    mutate_then_return_alias, [(vec(2), []), (vec(3), [1]), (vec(4), [])]))


def two_breaks_mutations(x, log):
    log.append("a")
    print("one")
    log.append("b")
    ac.graph_break()
    log.append("c")
    return x * len(log)


@CASES.case("two_breaks_mutations")
def _two_breaks():
    log = []
    return Program(two_breaks_mutations, [(vec(2), log), (vec(3), log), (vec(4), log)])


def counter_after_break(x, counts):
    counts["before"] = counts.get("before", 0) + 1
    ac.graph_break()
    counts["after"] = counts.get("after", 0) + 1
    return x


@CASES.case("dict_counter_across_break")
def _dict_counter():
    counts = {}
    return Program(counter_after_break, [(vec(2), counts), (vec(3), counts), (vec(4), counts)])


@CASES.case("kwargs_list_mutated")
def _kwargs_list():
    def f(x, *, log):
        log.append(x.shape[0])
        print("logged")
        log.append(-1)
        return x
    log = []
    return Program(f, [call(vec(2), log=log), call(vec(3), log=log), call(vec(4), log=[])])


@CASES.case("observe_changed_outside_between_calls")
def _outside_change():
    log = []

    def f(x, lst):
        return x * len(lst)
    return Program(f, [(vec(2), log), step(lambda: log.append(1), vec(2), log),
                       step(lambda: log.extend([1, 2]), vec(3), log)])


# ----- in-place versus rebinding -----------------------------------------------------------------
def list_iadd(x, lst):
    lst += [x.shape[0]]  # mutates the caller's list
    return len(lst)


@CASES.case("list_augmented_add_mutates")
def _list_iadd():
    lst = []
    return Program(list_iadd, [(vec(2), lst), (vec(3), lst), (vec(4), [9])])


def list_rebind_add(x, lst):
    lst = lst + [x.shape[0]]  # rebinding: the caller's list is unchanged
    return lst


CASES.add("list_rebinding_add_no_mutation", lambda: Program(
    list_rebind_add, [(vec(2), []), (vec(3), [1]), (vec(4), [])]))


def array_iadd_vs_rebind(x, y):
    x += 1
    y = y + 1
    return x.sum() + y.sum()


CASES.add("array_inplace_vs_rebind", lambda: Program(
    array_iadd_vs_rebind, [(vec(2), vec(2)), (vec(3), vec(3)), (vec(4, np.int64), vec(4))]))


def dict_ior(x, d):
    d |= {"n": x.shape[0]}
    s = {1}
    s |= {x.shape[0]}
    return sorted(s), d


CASES.add("dict_set_inplace_or", lambda: Program(
    dict_ior, [(vec(2), {}), (vec(3), {"a": 1}), (vec(4), {"n": 0})]))


def tuple_iadd(x, t):
    t += (x.shape[0],)
    return t


CASES.add("tuple_augmented_add_rebinds", lambda: Program(
    tuple_iadd, [(vec(2), ()), (vec(3), (1,)), (vec(4), (1, 2))]))


def dict_changed_during_iteration(x, d):
    for k in d:
        if k == "a":
            d["new"] = x.shape[0]
    return d


CASES.add("dict_changed_size_during_iteration", lambda: Program(
    dict_changed_during_iteration, [(vec(2), {"b": 1}), (vec(3), {"c": 2}), (vec(3), {"a": 1}), (vec(4), {})]))


def sort_key_side_effects(x, lst):
    calls = []

    def key(v):
        calls.append(v)
        return -v
    lst.sort(key=key)
    return len(calls), x


CASES.add("sort_key_called_per_item", lambda: Program(
    sort_key_side_effects, [(vec(2), [3, 1, 2]), (vec(3), [5]), (vec(4), [])]))


def mutate_in_helper_after_break(x, log):
    def helper(v):
        log.append(("helper", v.shape[0]))
        return v * 2
    print("before")
    y = helper(x)
    log.append("after helper")
    return y


@CASES.case("helper_mutation_after_break")
def _helper_after_break():
    log = []
    return Program(mutate_in_helper_after_break, [(vec(2), log), (vec(3), log), (vec(4), log)])


def finally_effects_on_error(x, log):
    try:
        log.append("try")
        return x[x.shape[0] + 1]
    finally:
        log.append("finally")


@CASES.case("finally_effects_on_error")
def _finally_effects():
    log = []
    return Program(finally_effects_on_error, [(vec(2), log), (vec(3), log), (vec(4), log)])


def print_global_after_append(x):
    LOG.append(x.shape[0])
    print("log", LOG)
    LOG.append(-1)
    return len(LOG)


@CASES.case("print_global_list_between_appends")
def _print_global():
    _reset(LOG=[])
    return Program(print_global_after_append, [(vec(2),), (vec(3),), (vec(4),)], observe=_log)


def pop_from_dict_arg(x, d):
    v = d.pop("k", 0)
    return x + v


@CASES.case("dict_pop_repeated")
def _dict_pop():
    d = {"k": 5}
    return Program(pop_from_dict_arg, [(vec(2), d), (vec(2), d), (vec(3), d), step(lambda: d.update(k=7), vec(3), d)])


def append_returned_value(x, lst):
    y = x * 2
    lst.append(y.sum())
    lst.append(y.tolist())
    return y


CASES.add("append_values_from_graph", lambda: Program(
    append_returned_value, [(vec(2), []), (vec(3), []), (vec(4, np.float32), [])]))
