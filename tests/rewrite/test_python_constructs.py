"""Python constructs that touch the frame or scoping: ``del``, ``locals()``, ``eval``, walrus
targets in comprehensions, ``global``/``nonlocal``. Each behaves as in Python, or is an explicit
eager run with a clear reason; the runtime's ``Undefined`` never reaches the user.

Rule tests (before/after source) first, then plain-vs-compiled behaviour."""

from __future__ import annotations

import copy
import textwrap

import libcst as cst
import numpy as np
import pytest

import astcompiler as ac
from astcompiler.rewrite.frame import RunEagerlyIfFrameIsUsed, frame_use
from astcompiler.rewrite.structured import bound_names

BACKENDS = ("eager", "aot_eager", "numba")
X = np.arange(3.0)
COUNTER = 0


def apply(rule: type[cst.CSTTransformer], before: str) -> str:
    return cst.parse_module(textwrap.dedent(before)).visit(rule()).code


# ----- the rules ------------------------------------------------------------------------------
def test_frame_rule_replaces_the_body_by_one_break():
    before = """\
        def f(x):  # model.py:1
            y = x + 1  # model.py:2
            return locals()  # model.py:3
        """
    after = """\
        def f(x):  # model.py:1
            __ac.unsupported("`locals()` (it needs the function's own frame: the whole function runs eagerly)")  # model.py:1
        """
    assert apply(RunEagerlyIfFrameIsUsed, before) == textwrap.dedent(after)


@pytest.mark.parametrize("body, what", [
    ("return locals()", "`locals()`"),
    ("return vars()", "`vars()`"),
    ("return dir()", "`dir()`"),
    ("return eval('x + 1')", "`eval()` without explicit globals and locals"),
    ("exec('y = x')", "`exec()` without explicit globals and locals"),
    ("return sys._getframe()", "`_getframe()`"),
    ("return inspect.currentframe()", "`currentframe()`"),
    ("global G\nG = x", "a `global` statement"),
    ("nonlocal k\nk = x", "a `nonlocal` statement"),
    ("if x:\n    return [locals() for v in x]", "`locals()`"),
])
def test_frame_uses_are_found(body, what):
    node = cst.parse_module("def f(x):\n" + textwrap.indent(body, "    ") + "\n").body[0]
    assert frame_use(node) == what


@pytest.mark.parametrize("body", [
    "return vars(x)",
    "return dir(x)",
    "return eval('x + 1', {'x': 1})",
    "def g():\n    nonlocal x\n    x = 1\nreturn x",  # nonlocal of a nested function: fine
    "return [y := v for v in x]",
])
def test_other_code_is_left_alone(body):
    source = "def f(x):\n" + textwrap.indent(body, "    ") + "\n"
    assert frame_use(cst.parse_module(source).body[0]) is None
    assert apply(RunEagerlyIfFrameIsUsed, source) == source


@pytest.mark.parametrize("block, names", [
    ("r = [y := f(v) for v in xs]", ["r", "y"]),
    ("r = {k: (t := v) for k, v in d}", ["r", "t"]),
    ("r = sum((z := v) for v in xs)", ["r", "z"]),
    ("r = [lambda: (w := 1) for v in xs]", ["r"]),  # a lambda's walrus binds in the lambda
    ("r = [v for v in xs]", ["r"]),  # the loop variable stays in the comprehension
    ("del y, z[0]", ["y"]),  # `del` makes a name a variable of the scope
])
def test_walrus_targets_in_comprehensions_are_bound_in_the_function(block, names):
    assert bound_names(cst.parse_module(block + "\n").body) == names


# ----- behaviour ------------------------------------------------------------------------------
def outcome(fn, args):
    try:
        return "ok", fn(*copy.deepcopy(args))
    except Exception as error:  # noqa: BLE001 - the exception is part of the behaviour
        return type(error), str(error)


def same_outcome(fn, calls, backends=BACKENDS, **compile_kwargs):
    for backend in backends:
        compiled = ac.compile(fn, backend=backend, **compile_kwargs)
        for args in calls:
            expected, got = outcome(fn, args), outcome(compiled, args)
            assert got[0] == expected[0], (got, expected)
            if expected[0] == "ok":
                assert_equal(got[1], expected[1])
            else:
                assert got[1] == expected[1]
    return compiled


def assert_equal(actual, expected):
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, np.ndarray):
        np.testing.assert_allclose(actual, expected)
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_equal(a, e)
    else:
        assert actual == expected


def test_locals_eval_and_vars_run_the_whole_function_eagerly():
    def reads_locals(x):
        y = x + 1
        ac.graph_break()  # would split the function: locals() must still see x and y
        return sorted(locals())

    def evaluates(x):
        y = x * 2
        return eval("x + y")

    compiled = same_outcome(reads_locals, [(X,), (X,)])
    assert compiled.entries[0].is_eager
    assert "locals()" in compiled.entries[0].break_reason.reason
    same_outcome(evaluates, [(X,), (X + 1,)])
    with pytest.raises(ac.exc.Unsupported, match="`eval\\(\\)` without explicit globals"):
        ac.compile(evaluates, backend="eager", fullgraph=True)(X)


def test_global_statement_writes_the_module_global():
    global COUNTER

    def bump(x):
        global COUNTER
        COUNTER += 1
        return x + COUNTER

    COUNTER = 0
    plain = [bump(X) for _ in range(3)]
    COUNTER = 0
    compiled = ac.compile(bump, backend="eager")
    got = [compiled(X) for _ in range(3)]
    assert COUNTER == 3
    for a, b in zip(got, plain):
        np.testing.assert_allclose(a, b)
    assert "`global` statement" in compiled.entries[0].break_reason.reason


def test_nonlocal_in_a_compiled_closure_writes_the_cell():
    def make():
        k = 0

        def inc(x):
            nonlocal k
            k += 1
            return x + k
        return inc

    plain, compiled = make(), ac.compile(make(), backend="eager")
    for _ in range(3):
        np.testing.assert_allclose(compiled(X), plain(X))

    def caller(x):  # the closure inlined into another compiled function
        return helper(x) * 2

    helper = make()
    compiled_caller = ac.compile(caller, backend="eager")
    first, second = compiled_caller(X), compiled_caller(X)
    np.testing.assert_allclose(first, (X + 1) * 2)
    np.testing.assert_allclose(second, (X + 2) * 2)


def test_nonlocal_in_a_nested_function_compiles():
    def fn(x):
        k = 1

        def inner():
            nonlocal k
            k += 1
            return k
        return x + inner() + k

    compiled = same_outcome(fn, [(X,), (X,)], fullgraph=True)
    assert not compiled.entries[0].is_eager


def test_walrus_in_a_comprehension_sets_the_variable():
    def fn(x, xs, flag):
        y = 0
        if flag:
            r = [y := v * 2 for v in xs]
        else:
            r = []
        return x + y, r

    same_outcome(fn, [(X, [1, 2], True), (X, [1, 2], False), (X, [3], True)], fullgraph=True)

    def in_loop(x, xs):
        total = x
        for v in xs:
            total = total + sum([last := w for w in range(v)])
        return total, last

    same_outcome(in_loop, [(X, [2, 3]), (X, [2, 3])], fullgraph=True)
    same_outcome(in_loop, [(X, [2, 3]), (X, [4])])  # a dynamic range: may run eagerly


def test_del_behaves_as_python():
    def del_then_read(x):
        y = x + 1
        del y
        return y

    def del_in_branch(x, flag):
        y = x + 1
        if flag:
            del y
        return y

    def del_in_branch_then_rebind(x, flag):
        y = x + 1
        if flag:
            del y
            y = x * 2
        return y

    def del_then_rebind(x):
        y = x + 1
        del y
        y = x * 3
        return y

    def del_items(x, lst, d):
        del lst[0], lst[-1]
        del d["a"]
        return x + len(lst) + len(d)

    same_outcome(del_then_read, [(X,), (X,)])
    same_outcome(del_in_branch, [(X, False), (X, True), (X, False)])
    same_outcome(del_then_rebind, [(X,), (X,)], fullgraph=True)
    same_outcome(del_in_branch_then_rebind, [(X, True), (X, False)], fullgraph=True)
    same_outcome(del_items, [(X, [1, 2, 3, 4], {"a": 1, "b": 2})], fullgraph=True)
    with pytest.raises(UnboundLocalError):
        ac.compile(del_then_read, backend="eager", fullgraph=True)(X)


def test_del_items_of_argument_containers_reach_the_caller():
    def fn(x, lst, d):
        del lst[0]
        del d["a"]
        return x + 1

    lst, d = [1, 2, 3], {"a": 1, "b": 2}
    ac.compile(fn, backend="eager", fullgraph=True)(X, lst, d)
    assert lst == [2, 3] and d == {"b": 2}


def test_deleted_variable_across_a_graph_break_is_unbound():
    def fn(x):
        y = x + 1
        del y
        ac.graph_break()
        return y

    def rebinds_after(x):
        y = x + 1
        del y
        ac.graph_break()
        y = x * 2
        return y

    same_outcome(fn, [(X,), (X,)])
    same_outcome(rebinds_after, [(X,), (X,)])


def test_one_line_bodies_of_if_for_while():
    def fn(x, flag):
        y = 0
        if flag: y = 1
        else: y = 2
        for i in range(2): y += i
        while y < 5: y += 1
        return x + y

    compiled = same_outcome(fn, [(X, True), (X, False)], fullgraph=True)
    assert "# test_python_constructs.py:" in compiled.entries[0].rewritten_code


def test_walrus_in_a_while_condition():
    def fn(x):
        out = []
        i = 0
        while (v := i * 2) < x.shape[0]:
            out.append(v)
            i += 1
        return out, v

    same_outcome(fn, [(np.ones(2),), (np.ones(3),), (np.ones(4),)])
    same_outcome(fn, [(np.ones(2),), (np.ones(2),)], fullgraph=True)


def test_simple_namespace_built_inside():
    import types

    def fn(x):
        ns = types.SimpleNamespace(total=x.sum(), n=x.shape[0])
        ns.mean = ns.total / ns.n
        return ns

    for backend in BACKENDS:
        compiled = ac.compile(fn, backend=backend, fullgraph=True)
        for x in (np.ones(2), np.arange(3.0)):
            got, expected = compiled(x), fn(x)
            assert type(got) is types.SimpleNamespace and vars(got).keys() == vars(expected).keys()
            for key in vars(expected):
                assert_equal(getattr(got, key), getattr(expected, key))


def test_parameter_named_ns_in_guards():
    import types

    def fn(ns):
        return ns.total / ns.n

    compiled = ac.compile(fn, backend="eager")
    assert compiled(types.SimpleNamespace(total=3.0, n=2)) == 1.5


def test_zero_argument_super_becomes_explicit():
    from astcompiler.rewrite.calls import ExplicitSuper
    before = """\
        def value(self, x):
            if x:
                return super().value(x)
            def inner(other):
                return super().f()
            return super(Base, self).g()
        """
    after = """\
        def value(self, x):
            if x:
                return super(__class__, self).value(x)
            def inner(other):
                return super().f()
            return super(Base, self).g()
        """
    assert apply(ExplicitSuper, before) == textwrap.dedent(after)
