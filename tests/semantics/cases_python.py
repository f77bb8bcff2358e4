"""The usual Python surface: closures, globals, defaults, ``*args``/``**kwargs``, keyword-only
arguments, comprehensions, generators, containers, nested functions, classes, exceptions, ``with``,
loops, graph breaks, string operations and recursion."""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import operator

import numpy as np

import astcompiler as ac

from .harness import CaseRegistry, Program, call
from .values import mat, vec

CASES = CaseRegistry("python")

FACTOR = 3
OFFSET = np.array([1.0, -1.0])
NAMES = {"a": 1, "b": 2}
EVENTS: list = []


def three():
    return lambda: [(vec(2),), (vec(3),), (vec(4),)]


def four():
    return lambda: [(vec(2),), (vec(3),), (vec(4),), (vec(5),)]


# ----- closures ----------------------------------------------------------------------------------
def closure_counter_factory(x):
    def make():
        n = 0

        def inc():
            nonlocal n
            n += 1
            return n
        return inc
    inc = make()
    inc()
    return x * inc(), inc()


CASES.pure("closure_counter_factory", closure_counter_factory, three())


def closure_late_binding(x):
    fs = [lambda: i for i in range(3)]
    return [f() for f in fs], x


CASES.pure("closure_late_binding", closure_late_binding, three())


def closure_three_levels(x):
    a = 1

    def f1():
        b = 2

        def f2():
            return x * a + b
        return f2()
    return f1()


CASES.pure("closure_three_levels", closure_three_levels, three())


def closure_over_array(x):
    w = x * 2

    def apply(v):
        return v + w
    return apply(x), apply(1.0)


CASES.pure("closure_over_array", closure_over_array, three())


def closure_returned(x):
    k = x.shape[0]

    def scale(v):
        return v * k
    return scale(x), scale.__name__


CASES.pure("closure_called_and_named", closure_returned, three())


@CASES.case("closure_arg_captured")
def _closure_arg():
    k = 2.5

    def f(x):
        return x * k, (lambda v: v - k)(x)
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)])


def closure_sees_rebound_local(x, n):
    k = 1

    def inner(v):
        return v + k
    k = n  # the cell is read when inner runs: late binding
    return inner(x)


CASES.pure("closure_sees_rebound_local", closure_sees_rebound_local,
           lambda: [(vec(2), 5), (vec(3), 6), (vec(4), -2)])


def closure_rebound_in_loop(x, n):
    total = 0

    def add(v):
        return v + total
    out = []
    for i in range(n):
        total = total + i
        out.append(add(i))
    return out, x


CASES.pure("closure_rebound_in_loop", closure_rebound_in_loop,
           lambda: [(vec(2), 2), (vec(3), 3), (vec(4), 4)])


def closure_in_comprehension(x):
    k = 10
    return [v * k for v in range(x.shape[0])]


CASES.pure("closure_in_comprehension", closure_in_comprehension, three())


def closure_reduce(x):
    return functools.reduce(lambda a, b: a * 2 + b, x.tolist(), 0)


CASES.pure("functools_reduce_lambda", closure_reduce, three())


def closure_mutable_cell(x):
    acc = []

    def push(v):
        acc.append(v)
    for v in x:
        push(float(v))
    return acc


CASES.pure("closure_mutable_cell", closure_mutable_cell, three())


def closure_shadowing(x):
    y = 1

    def inner():
        y = 2
        return y
    return inner() + y, x


CASES.pure("closure_shadowing", closure_shadowing, three())


# ----- globals ----------------------------------------------------------------------------------
def global_constant(x):
    return x * FACTOR + OFFSET[: x.shape[0]].sum()


CASES.pure("global_constant_and_array", global_constant, three())


def global_dict_read(x, key):
    return x * NAMES[key], key in NAMES, len(NAMES)


CASES.pure("global_dict_read", global_dict_read, lambda: [(vec(2), "a"), (vec(3), "b"), (vec(3), "c")])


def global_in_nested(x):
    def inner(v):
        return v + FACTOR
    return inner(x)


CASES.pure("global_in_nested_function", global_in_nested, three())


def global_function_call(x):
    return closure_over_array(x)[0] + math.e


CASES.pure("global_function_call", global_function_call, three())


def global_events_append(x):
    EVENTS.append(("call", x.shape[0]))
    return len(EVENTS)


@CASES.case("global_events_append")
def _events():
    globals()["EVENTS"] = []
    return Program(global_events_append, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: EVENTS)


def global_declared_read(x):
    global FACTOR
    return x * FACTOR


CASES.pure("global_declared_only_read", global_declared_read, three())


def undefined_global(x):
    return x * NOT_DEFINED_ANYWHERE  # noqa: F821


CASES.pure("undefined_global_name_error", undefined_global, three())


# ----- defaults -----------------------------------------------------------------------------------
def default_positional(x, k=2, b=1.0):
    return x * k + b


CASES.add("default_positional", lambda: Program(
    default_positional, [(vec(2),), (vec(3), 3), call(vec(3), b=-1.0), call(vec(4), 2, b=0.5), (vec(4),)]))


def default_none(x, out=None):
    if out is None:
        out = np.empty_like(x)
    out[...] = x * 2
    return out


CASES.add("default_none_out", lambda: Program(
    default_none, [(vec(2),), (vec(3),), call(vec(3), out=np.zeros(3)), (vec(4),)]))


def default_array(x, w=np.ones(2)):  # noqa: B008 - a default array is the point
    return x[:2] * w


CASES.pure("default_array", default_array, three())


def default_tuple(x, axes=(0,)):
    return x.sum(axis=axes)


CASES.add("default_tuple", lambda: Program(
    default_tuple, [(mat(2, 3),), (mat(3, 3),), call(mat(3, 4), axes=(1,)), call(mat(2, 2), axes=(0, 1))]))


def default_with_star(x, *rest, k=2):
    return x * k + sum(rest)


CASES.add("default_kwonly_with_star", lambda: Program(
    default_with_star, [(vec(2),), (vec(3), 1), (vec(3), 1, 2), call(vec(4), k=5), call(vec(4), 1, k=0)]))


def missing_argument(x, y):
    return x + y


CASES.add("missing_argument_type_error", lambda: Program(
    missing_argument, [(vec(2), 1.0), (vec(3), 2.0), (vec(3),), call(vec(4), y=1, z=2)]))


# ----- *args / **kwargs / keyword-only / positional-only -----------------------------------------
def star_args(*args):
    return len(args), sum(a.sum() for a in args), type(args)


CASES.add("star_args", lambda: Program(
    star_args, [(vec(2),), (vec(2), vec(2)), (vec(3), vec(3), vec(3)), ()]))


def star_kwargs(x, **kwargs):
    return x * len(kwargs), kwargs, type(kwargs)


CASES.add("star_kwargs_returned", lambda: Program(
    star_kwargs, [call(vec(2), a=1), call(vec(3), a=1, b=2), call(vec(3)), call(vec(4), z=[1])]))


def forward_args(*args, **kwargs):
    def target(x, k=1, *, b=0):
        return x * k + b
    return target(*args, **kwargs)


CASES.add("forward_star_args", lambda: Program(
    forward_args, [(vec(2),), (vec(3), 2), call(vec(3), b=1), call(vec(4), 3, b=-1)]))


def keyword_only(x, *, scale, shift=0.0):
    return x * scale + shift


CASES.add("keyword_only", lambda: Program(
    keyword_only, [call(vec(2), scale=2), call(vec(3), scale=3, shift=1.0), call(vec(3), scale=1),
                   call(vec(4))]))


def positional_only(x, k, /, b=0):
    return x * k + b


CASES.add("positional_only", lambda: Program(
    positional_only, [(vec(2), 2), (vec(3), 3, 1), call(vec(3), 2, b=5), call(vec(4), k=2)]))


def star_unpack_call(x, ks):
    return np.add(*ks) * x, max(*ks, 0)


CASES.pure("star_unpack_call", star_unpack_call, lambda: [(vec(2), [1, 2]), (vec(3), (3, 4)), (vec(3), [5, -1])])


def dict_unpack_call(x, opts):
    def target(v, scale=1, shift=0):
        return v * scale + shift
    return target(x, **opts), {**opts, "extra": 1}


CASES.pure("dict_unpack_call", dict_unpack_call,
           lambda: [(vec(2), {"scale": 2}), (vec(3), {"shift": 1}), (vec(3), {}), (vec(4), {"bad": 1})])


def starred_assignment(x):
    first, *middle, last = x.tolist()
    return first, middle, last


CASES.pure("starred_assignment", starred_assignment, four())


def args_tuple_identity(*args):
    return args


CASES.add("args_tuple_returned", lambda: Program(args_tuple_identity, [(vec(2), [1]), (vec(3), [2]), ([],)]))


# ----- comprehensions ----------------------------------------------------------------------------
def list_comp(x):
    return [v * 2 for v in x if v > 1]


CASES.pure("list_comprehension_filter", list_comp, four())


def dict_comp(x):
    return {i: float(v) for i, v in enumerate(x)}


CASES.pure("dict_comprehension", dict_comp, four())


def set_comp(x):
    return {int(v) % 3 for v in x}


CASES.pure("set_comprehension", set_comp, four())


def nested_comp(x):
    return [[i * j for j in range(x.shape[0])] for i in range(2)]


CASES.pure("nested_comprehension", nested_comp, four())


def generator_sum(x):
    return sum(v * v for v in x), any(v > 3 for v in x), all(v > 0 for v in x)


CASES.pure("generator_expression_builtins", generator_sum, four())


def comp_over_rows(x):
    return [row.sum() for row in x]


CASES.pure("comprehension_over_rows", comp_over_rows,
           lambda: [(mat(2, 3),), (mat(3, 3),), (mat(4, 2),)])


def comp_zip_enumerate(x, y):
    return [(i, a + b) for i, (a, b) in enumerate(zip(x, y))]


CASES.pure("comprehension_zip_enumerate", comp_zip_enumerate,
           lambda: [(vec(2), vec(2)), (vec(3), vec(4)), (vec(4), vec(3))])


def comp_scope(x):
    v = "outer"
    squares = [v * v for v in x]
    return v, squares


CASES.pure("comprehension_scope", comp_scope, three())


def comp_of_arrays(x):
    return [x * k for k in range(3)]


CASES.pure("comprehension_of_arrays", comp_of_arrays, three())


def comp_matrix_transpose(x):
    rows = x.tolist()
    return [[rows[j][i] for j in range(len(rows))] for i in range(len(rows[0]))]


CASES.pure("comprehension_transpose", comp_matrix_transpose,
           lambda: [(mat(2, 3),), (mat(3, 3),), (mat(1, 2),)])


# ----- generators ----------------------------------------------------------------------------------
def gen_helper(n):
    for i in range(n):
        yield i * i


def use_generator(x):
    return list(gen_helper(x.shape[0])), x


CASES.pure("generator_function_consumed", use_generator, four())


def gen_yield_from(n):
    yield from range(n)
    yield -1


def use_yield_from(x):
    return list(gen_yield_from(x.shape[0])), sum(gen_yield_from(2))


CASES.pure("generator_yield_from", use_yield_from, four())


def next_with_default(x):
    it = (v for v in x if v > 3)
    return next(it, None), next(it, "done")


CASES.pure("next_with_default", next_with_default, four())


def itertools_use(x):
    vals = x.tolist()
    return (list(itertools.accumulate(vals)), list(itertools.islice(itertools.count(), 3)),
            list(itertools.chain(vals, [0])), list(itertools.pairwise(vals)))


CASES.pure("itertools_functions", itertools_use, four())


def generator_send_state(x):
    def running():
        total = 0
        while True:
            v = yield total
            total += v
    g = running()
    next(g)
    out = [g.send(float(v)) for v in x]
    return out


CASES.pure("generator_send", generator_send_state, three(), timeout_s=5.0)


def map_filter(x):
    return list(map(lambda v: v + 1, x.tolist())), list(filter(None, [0, 1, 2])), list(map(str, x.shape))


CASES.pure("map_filter", map_filter, three())


# ----- containers ----------------------------------------------------------------------------------
def list_slicing(x):
    lst = x.tolist()
    return lst[::2], lst[::-1], lst[1:-1], lst[-2:], lst[5:]


CASES.pure("list_slicing", list_slicing, four())


def list_ops(x):
    lst = [1, 2] + x.tolist()
    lst2 = lst * 2
    return lst2, lst.index(2), lst2.count(1), 3.0 in lst


CASES.pure("list_concat_index_count", list_ops, three())


def tuple_ops(x):
    t = (1, x.shape[0], "a")
    a, b, c = t
    return t + (b,), t[1:], len(t), t.count(1), (a, c)


CASES.pure("tuple_ops", tuple_ops, three())


def dict_iteration(x):
    d = {"b": x.sum(), "a": x.max()}
    d["c"] = 0
    return list(d), list(d.values()), [k + str(v) for k, v in d.items()], sorted(d)


CASES.pure("dict_iteration_order", dict_iteration, three())


def set_ops(x):
    a = set(x.astype(int).tolist())
    b = {2, 3, 10}
    return sorted(a | b), sorted(a & b), sorted(a - b), a <= b, frozenset(a) == frozenset(b)


CASES.pure("set_operations", set_ops, four())


def sorted_key(x):
    pairs = [(v, -i) for i, v in enumerate(x.tolist())]
    return sorted(pairs, key=lambda p: p[1]), min(pairs, key=operator.itemgetter(1)), max(x.tolist())


CASES.pure("sorted_min_max_key", sorted_key, four())


def dict_get_default(x, key):
    d = {"a": x.sum()}
    return d.get(key), d.get(key, -1), d.setdefault(key, 0), d


CASES.pure("dict_get_setdefault", dict_get_default, lambda: [(vec(2), "a"), (vec(3), "b"), (vec(3), "a")])


def dict_keyerror(x, key):
    d = {"a": 1}
    return x * d[key]


CASES.pure("dict_key_error", dict_keyerror, lambda: [(vec(2), "a"), (vec(3), "a"), (vec(3), "z")])


def list_of_arrays(x):
    return [x, x * 2, x[:1]]


CASES.pure("list_of_arrays_returned", list_of_arrays, three())


def dict_of_arrays(x):
    return {"x": x, "sq": x ** 2, "n": x.shape[0]}


CASES.pure("dict_of_arrays_returned", dict_of_arrays, three())


def zip_unzip(x):
    pairs = list(zip(range(x.shape[0]), x.tolist()))
    idx, vals = zip(*pairs)
    return idx, vals


CASES.pure("zip_unzip", zip_unzip, four())


def list_slice_assign(x):
    lst = list(range(5))
    lst[1:3] = x.tolist()
    lst[::2] = [0] * len(lst[::2])
    return lst


CASES.pure("list_slice_assignment", list_slice_assign, four())


def augmented_elements(x):
    lst = [1, 2, 3]
    d = {"a": 1}
    lst[0] += x.shape[0]
    d["a"] *= 3
    lst[-1] -= 1
    return lst, d


CASES.pure("augmented_assign_elements", augmented_elements, three())


def swap_and_multi_assign(x):
    a = b = x.shape[0]
    c, d = a, b * 2
    c, d = d, c
    return a, b, c, d


CASES.pure("swap_multi_assign", swap_and_multi_assign, three())


def nested_unpacking(x):
    (a, b), [c, *d] = (x.shape[0], 1), x.tolist()
    return a, b, c, d


CASES.pure("nested_unpacking", nested_unpacking, four())


def unpack_error(x):
    a, b = x.tolist()
    return a + b


CASES.pure("unpack_value_error", unpack_error, lambda: [(vec(2),), (vec(2, start=3),), (vec(3),)])


def list_index_error(x):
    return [1, 2][x.shape[0]]


CASES.pure("list_index_error", list_index_error, lambda: [(vec(1),), (vec(0),), (vec(2),)])


def bytes_ops(x):
    b = bytes([x.shape[0], 65])
    return b, b.hex(), bytearray(b) + b"z", len(b)


CASES.pure("bytes_ops", bytes_ops, three())


# ----- nested functions and recursion -------------------------------------------------------------
def inner_def(x):
    def double(v):
        return v * 2

    def apply(fn, v):
        return fn(v)
    return apply(double, x), apply(len, x)


CASES.pure("inner_functions", inner_def, three())


def inner_decorator(x):
    def twice(fn):
        @functools.wraps(fn)
        def wrapper(v):
            return fn(fn(v))
        return wrapper

    @twice
    def inc(v):
        return v + 1
    return inc(x), inc.__name__


CASES.pure("decorator_inside", inner_decorator, three())


def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


def use_factorial(x):
    return factorial(x.shape[0] + 2), x * factorial(3)


CASES.pure("recursion_factorial", use_factorial, four())


def fib(n, memo=None):
    memo = {} if memo is None else memo
    if n < 2:
        return n
    if n not in memo:
        memo[n] = fib(n - 1, memo) + fib(n - 2, memo)
    return memo[n]


def use_fib(x):
    return fib(x.shape[0] * 10), x


CASES.pure("recursion_fib_memo", use_fib, three())


def tree_sum(x):
    if x.shape[0] <= 1:
        return x.sum()
    half = x.shape[0] // 2
    return tree_sum(x[:half]) + tree_sum(x[half:])


CASES.pure("recursion_on_array_halves", tree_sum, four(), timeout_s=30.0)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def use_mutual(x):
    return is_even(x.shape[0]), x


CASES.pure("mutual_recursion", use_mutual, four())


def recursion_limit(x):
    def down(n):
        return down(n + 1)
    try:
        return down(0)
    except RecursionError:
        return x * 0


CASES.pure("recursion_error_caught", recursion_limit, lambda: [(vec(2),), (vec(3),)], timeout_s=30.0)


# ----- classes defined in the function --------------------------------------------------------------
def class_in_body(x):
    class Acc:
        def __init__(self):
            self.total = 0.0

        def add(self, v):
            self.total += v
            return self
    acc = Acc()
    for v in x:
        acc.add(float(v))
    return acc.total, type(acc).__name__


CASES.pure("class_defined_inside", class_in_body, three())


def class_counting_instances(x):
    class Thing:
        made = 0

        def __init__(self):
            Thing.made += 1
    things = [Thing() for _ in range(x.shape[0])]
    return Thing.made, len(things)


CASES.pure("class_counting_instances", class_counting_instances, three())


# ----- exceptions ----------------------------------------------------------------------------------
class AppError(Exception):
    pass


def raise_value_error(x):
    if x.shape[0] > 3:
        raise ValueError(f"too long: {x.shape[0]}")
    return x


CASES.pure("raise_value_error", raise_value_error, four())


def try_except_else_finally(x, log):
    try:
        v = x[3]
    except IndexError as exc:
        log.append("except " + str(exc))
        v = -1.0
    else:
        log.append("else")
    finally:
        log.append("finally")
    return v


@CASES.case("try_except_else_finally")
def _try_else():
    log = []
    return Program(try_except_else_finally, [(vec(2), log), (vec(3), log), (vec(4), log), (vec(5), log)])


def reraise(x):
    try:
        return x[10]
    except IndexError:
        raise


CASES.pure("reraise", reraise, three())


def raise_from(x):
    try:
        return {"a": 1}[str(x.shape[0])]
    except KeyError as exc:
        raise AppError("missing size") from exc


CASES.pure("raise_custom_from", raise_from, three())


def exception_in_helper(x):
    def helper(v):
        if v.sum() > 5:
            raise AppError(v.sum())
        return v
    try:
        return helper(x)
    except AppError as e:
        return ("caught", e.args[0])


CASES.pure("exception_in_helper_caught", exception_in_helper, four())


def zero_div_caught(x, d):
    try:
        return x.sum() / d, 1 / d
    except ZeroDivisionError as e:
        return str(e)


CASES.pure("zero_division_caught", zero_div_caught, lambda: [(vec(2), 1), (vec(3), 2), (vec(3), 0)])


def finally_overrides(x):
    try:
        return x * 2
    finally:
        x[0] = -1.0


CASES.add("finally_mutates_after_return", lambda: Program(finally_overrides, [(vec(2),), (vec(3),), (vec(4),)]))


def nested_try(x):
    out = []
    try:
        try:
            out.append(x[x.shape[0]])
        except KeyError:
            out.append("inner")
        finally:
            out.append("inner finally")
    except IndexError as e:
        out.append(type(e).__name__)
    return out


CASES.pure("nested_try", nested_try, three())


def except_tuple(x, key):
    try:
        return [1, 2][key] if isinstance(key, int) else {"a": 1}[key]
    except (IndexError, KeyError) as e:
        return type(e).__name__, str(e)


CASES.pure("except_tuple_of_types", except_tuple,
           lambda: [(vec(2), 0), (vec(3), 5), (vec(3), "a"), (vec(4), "b")])


def numpy_error_caught(x):
    try:
        return x.reshape(3, -1)
    except ValueError as e:
        return str(e)


CASES.pure("numpy_error_caught", numpy_error_caught, lambda: [(vec(3),), (vec(6),), (vec(4),), (vec(9),)])


def exception_attributes(x):
    try:
        raise AppError("a", x.shape[0])
    except AppError as e:
        return e.args, str(e), repr(e)


CASES.pure("exception_args", exception_attributes, three())


def raise_type_error_builtin(x):
    return x + "a"


CASES.pure("numpy_type_error", raise_type_error_builtin, three())


# ----- with statements --------------------------------------------------------------------------
@contextlib.contextmanager
def logged(log, name):
    log.append("enter " + name)
    try:
        yield len(log)
    finally:
        log.append("exit " + name)


def with_contextmanager(x, log):
    with logged(log, "a") as n:
        y = x * n
    return y


@CASES.case("with_contextmanager")
def _with_cm():
    log = []
    return Program(with_contextmanager, [(vec(2), log), (vec(3), log), (vec(4), log)])


class Suppress:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append(f"exit {exc_type.__name__ if exc_type else None}")
        return exc_type is IndexError


def with_class_cm(x, log):
    with Suppress(log):
        x = x * 2
        x = x[x.shape[0]]
    return x


@CASES.case("with_class_suppresses")
def _with_class():
    log = []
    return Program(with_class_cm, [(vec(2), log), (vec(3), log), (vec(4), log)])


def with_errstate(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return x / (x - x)


CASES.pure("with_np_errstate", with_errstate, three())


def with_multiple(x, log):
    with logged(log, "a"), logged(log, "b") as n:
        print("inside", n)
        v = x.sum()
    return v


@CASES.case("with_multiple_items")
def _with_multiple():
    log = []
    return Program(with_multiple, [(vec(2), log), (vec(3), log), (vec(4), log)])


def with_exception_propagates(x, log):
    with logged(log, "z"):
        if x.shape[0] > 2:
            raise AppError("big")
    return x


@CASES.case("with_exception_propagates")
def _with_exc():
    log = []
    return Program(with_exception_propagates, [(vec(2), log), (vec(3), log), (vec(2), log)])


def suppress_builtin(x):
    with contextlib.suppress(KeyError):
        return {"a": x}[str(x.shape[0])]
    return None


CASES.pure("contextlib_suppress", suppress_builtin, three())


# ----- loops ------------------------------------------------------------------------------------
def loop_dict_items(x):
    d = {"a": 1, "b": 2}
    out = x * 0
    for k, v in d.items():
        out = out + v
    return out, k


CASES.pure("loop_dict_items", loop_dict_items, three())


def loop_string(x, s):
    out = []
    for ch in s:
        out.append(ch.upper())
    return "".join(out), x * len(s)


CASES.pure("loop_over_string", loop_string, lambda: [(vec(2), "ab"), (vec(3), "xyz"), (vec(3), "")])


def loop_nested_arrays(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            total += x[i, j] * (i + j)
    return total


CASES.pure("loop_nested_indices", loop_nested_arrays,
           lambda: [(mat(2, 2),), (mat(2, 3),), (mat(3, 3),)])


def loop_modify_list_while_iterating(x):
    lst = list(range(x.shape[0]))
    for v in lst:
        if v % 2 == 0 and len(lst) < 8:
            lst.append(v + 10)
    return lst


CASES.pure("loop_list_grows_while_iterating", loop_modify_list_while_iterating, four())


def loop_counter_types(x):
    i = 0
    f = 0.0
    for _ in x:
        i += 1
        f += 0.1
    return i, f, type(i), type(f)


CASES.pure("loop_counters_types", loop_counter_types, four())


# ----- graph breaks -------------------------------------------------------------------------------
def break_at_start(x):
    ac.graph_break()
    return x * 2 + 1


CASES.pure("graph_break_at_start", break_at_start, three())


def break_at_end(x):
    y = x * 2
    ac.graph_break()
    return y


CASES.pure("graph_break_at_end", break_at_end, three())


def break_in_both_branches(x):
    if x.sum() > 5:
        print("big")
        y = x - 1
    else:
        ac.graph_break()
        y = x + 1
    return y * 2


CASES.pure("graph_break_in_both_branches", break_in_both_branches, four())


def consecutive_breaks(x):
    a = x + 1
    ac.graph_break()
    ac.graph_break()
    b = a * 2
    print("b")
    return b.sum(), a


CASES.pure("consecutive_graph_breaks", consecutive_breaks, three())


def break_in_nested_loops(x):
    total = 0.0
    for i in range(2):
        for j in range(x.shape[0]):
            if j == 1:
                ac.graph_break()
            total += x[j] * i
    return total


CASES.pure("graph_break_in_nested_loops", break_in_nested_loops, three())


def break_keeps_locals(x, k):
    a = x * k
    b = [a, k]
    s = "text"
    print(s)
    return a + 1, b[1], s, type(k)


CASES.pure("graph_break_keeps_locals", break_keeps_locals, lambda: [(vec(2), 2), (vec(3), 3), (vec(4), 2.5)])


def break_in_try(x):
    try:
        y = x + 1
        ac.graph_break()
        z = y[10]
    except IndexError:
        z = y[0]
    return z


CASES.pure("graph_break_in_try", break_in_try, three())


def break_in_with(x, log):
    with logged(log, "w"):
        y = x * 3
        ac.graph_break()
        y = y + 1
    return y


@CASES.case("graph_break_in_with")
def _break_with():
    log = []
    return Program(break_in_with, [(vec(2), log), (vec(3), log), (vec(4), log)])


def break_in_comprehension(x):
    def noisy(v):
        print("v", v)
        return v * 2
    return [noisy(v) for v in x.tolist()]


CASES.pure("graph_break_in_comprehension", break_in_comprehension, three())


def break_changes_types(x):
    n = x.shape[0]
    ac.graph_break()
    return n, type(n), str(n), x * n


CASES.pure("graph_break_size_across", break_changes_types, four())


# ----- strings ----------------------------------------------------------------------------------
def str_split_join(x, s):
    parts = s.split(",")
    return "-".join(parts), len(parts), x * len(parts)


CASES.pure("str_split_join", str_split_join, lambda: [(vec(2), "a,b"), (vec(3), "a,b,c"), (vec(3), "")])


def str_methods(x, s):
    return s.upper(), s.replace("a", "o"), s.startswith("ab"), s.strip(), s.find("b"), s.count("a")


CASES.pure("str_methods", str_methods,
           lambda: [(vec(2), " abc "), (vec(3), "banana"), (vec(3), "ab"), (vec(4), "")])


def str_format_arrays(x):
    return f"{x.sum():.3f}", "{:>6.2f}".format(x.max()), "%s" % x.dtype, str(x.shape)


CASES.pure("str_format_array_values", str_format_arrays, three())


def str_of_array(x):
    return str(x), repr(x[:2]), np.array2string(x, precision=2)


CASES.pure("str_of_array", str_of_array, three())


def str_compare_sort(x, words):
    return sorted(words), min(words), "b" > "a", words == sorted(words), x


CASES.pure("str_compare_sort", str_compare_sort,
           lambda: [(vec(2), ["b", "a"]), (vec(3), ["a", "b", "c"]), (vec(3), ["z"])])


def str_encode_slicing(x, s):
    return s.encode(), s[::-1], s[1:3], s[-1:], s * 2


CASES.pure("str_encode_slicing", str_encode_slicing, lambda: [(vec(2), "hello"), (vec(3), "ab"), (vec(3), "x")])


def str_build_from_array(x):
    return "".join(map(str, x.astype(int).tolist())), ", ".join(f"{v:g}" for v in x)


CASES.pure("str_build_from_array", str_build_from_array, four())


def str_index_error(x, s):
    return s[x.shape[0]]


CASES.pure("str_index_error", str_index_error, lambda: [(vec(1), "abc"), (vec(2), "abc"), (vec(3), "abc")])


# ----- builtins ------------------------------------------------------------------------------------
def builtin_mix(x):
    vals = x.tolist()
    return (abs(-x.shape[0]), divmod(x.shape[0], 2), pow(2, x.shape[0]), callable(len),
            isinstance(vals, list), len(vals), round(sum(vals) / 3, 3), int("7") + x.shape[0])


CASES.pure("builtins_mix", builtin_mix, four())


def builtin_conversions(x):
    n = x.shape[0]
    return float(n), str(n), bool(n - 2), int(3.9), int("-4"), float("1e3"), hex(n), bin(n), oct(n)


CASES.pure("builtin_conversions", builtin_conversions, four())


def builtin_type_errors(x, v):
    return int(v)


CASES.pure("int_conversion_errors", builtin_type_errors,
           lambda: [(vec(2), "3"), (vec(3), "4"), (vec(3), "x"), (vec(4), None), (vec(4), 2.5)])


def numpy_chain(x):
    return np.round(np.cumsum(x[::-1]) / np.arange(1, x.shape[0] + 1), 3).astype(np.float32)


CASES.pure("numpy_method_chain", numpy_chain, four())


def numpy_reductions_types(x):
    return x.sum(), x.mean(), x.argmax(), x.any(), np.count_nonzero(x > 2), x.std()


CASES.pure("numpy_reduction_result_types", numpy_reductions_types,
           lambda: [(vec(2),), (vec(3, np.int32),), (vec(4, np.float32),), (vec(5, np.bool_),)])


def numpy_int_float_mix(x, y):
    return x + y, x * 2.5, (x // 2).dtype, x / y


CASES.pure("numpy_dtype_promotion", numpy_int_float_mix,
           lambda: [(vec(2, np.int32), vec(2, np.float32)), (vec(3, np.int64), vec(3, np.float32)),
                    (vec(3, np.int8), vec(3, np.int16)), (vec(4, np.uint8), vec(4, np.int8))])


def hash_tuple_frozenset(x):
    return hash((1, 2)) == hash((1, 2)), frozenset({x.shape[0], 1}) == frozenset({1, x.shape[0]}), x


CASES.pure("hash_tuple_frozenset", hash_tuple_frozenset, three())


def conditional_expression_chain(x):
    n = x.shape[0]
    return "small" if n < 3 else "medium" if n < 4 else "large"


CASES.pure("conditional_expression_chain", conditional_expression_chain, four())


def lambda_sort_key(x):
    pts = [(float(v), -i) for i, v in enumerate(x)]
    return sorted(pts, key=lambda p: (p[0] % 2, p[1]))


CASES.pure("lambda_sort_key", lambda_sort_key, four())


def operator_module(x):
    return operator.add(x, 1), operator.getitem([1, 2, 3], x.shape[0] - 2), operator.neg(x.shape[0])


CASES.pure("operator_module", operator_module, three())


def isinstance_checks(x, v):
    return isinstance(v, (int, float)), isinstance(v, np.ndarray), isinstance(v, str), type(v).__name__


CASES.pure("isinstance_checks", isinstance_checks,
           lambda: [(vec(2), 1), (vec(3), 2.0), (vec(3), vec(2)), (vec(4), "s"), (vec(4), None)])
