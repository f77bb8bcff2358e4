"""Before/after source tests: one per rewrite rule, in the style of libcst codemod tests."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from astcompiler.rewrite.boolean import RewriteBoolean
from astcompiler.rewrite.calls import RewriteCalls
from astcompiler.rewrite.comprehensions import RewriteComprehensions
from astcompiler.rewrite.identity import RewriteIdentity
from astcompiler.rewrite.names import free_names
from astcompiler.rewrite.unsupported import MarkUnsupported


def apply(rule: type[cst.CSTTransformer], before: str) -> str:
    return cst.parse_module(textwrap.dedent(before)).visit(rule()).code


def assert_rewrites(rule, before: str, after: str) -> None:
    assert apply(rule, before) == textwrap.dedent(after)


@pytest.mark.parametrize("before, after", [
    ("y = np.sin(x)\n", "y = __ac.call(np.sin, x)\n"),
    ("y = f(a, *b, k=c, **d)\n", "y = __ac.call(f, a, *b, k=c, **d)\n"),
    ("y = x.sum(axis=1)\n", "y = __ac.call(x.sum, axis=1)\n"),
    ("y = f(g(x))\n", "y = __ac.call(f, __ac.call(g, x))\n"),
    ("super().__init__()\n", "__ac.call(super().__init__)\n"),
    ("__ac.call(f, x)\n", "__ac.call(f, x)\n"),  # runtime calls are left alone
    ("s = sum(v for v in xs)\n", "s = __ac.call(sum, (v for v in xs))\n"),
])
def test_calls(before, after):
    assert_rewrites(RewriteCalls, before, after)


@pytest.mark.parametrize("before, after", [
    ("z = a and b\n", "z = __ac.and_(lambda: a, lambda: b)\n"),
    ("z = a or b\n", "z = __ac.or_(lambda: a, lambda: b)\n"),
    ("z = not a\n", "z = __ac.not_(a)\n"),
    ("z = -a\n", "z = -a\n"),
    ("z = a if c else b\n", "z = __ac.ifexp(c, lambda: a, lambda: b)\n"),
    ("z = a and b or c\n",
     "z = __ac.or_(lambda: __ac.and_(lambda: a, lambda: b), lambda: c)\n"),
])
def test_boolean(before, after):
    assert_rewrites(RewriteBoolean, before, after)


@pytest.mark.parametrize("before, after", [
    ("z = a is None\n", "z = __ac.is_(a, None)\n"),
    ("z = a is not b\n", "z = __ac.is_not(a, b)\n"),
    ("z = a < b\n", "z = a < b\n"),
    ("z = a is b is c\n", "z = a is b is c\n"),
])
def test_identity(before, after):
    assert_rewrites(RewriteIdentity, before, after)


def test_comprehensions():
    assert_rewrites(RewriteComprehensions, "ys = [y for y in xs if y]\n",
                    "ys = [y for y in __ac.iterate(xs) if __ac.truth(y)]\n")


@pytest.mark.parametrize("statement, what", [
    ("try:\n    pass\nexcept E:\n    pass\n", "a `try` block"),
    ("with open(p) as f:\n    pass\n", "a `with` block"),
    ("global G\n", "a `global` statement"),
    ("class C:\n    pass\n", "a class definition"),
])
def test_unsupported_statements_get_a_break_in_front(statement, what):
    code = "def f():\n" + textwrap.indent(statement, "    ")
    out = apply(MarkUnsupported, code)
    lines = out.splitlines()
    assert lines[1].strip().startswith(f"__ac.unsupported('{what}")
    assert out.count(statement.splitlines()[0].strip()) == 1  # the statement itself is kept


def test_yield_is_unsupported():
    out = apply(MarkUnsupported, "def f():\n    yield 1\n")
    assert "__ac.unsupported('a generator" in out


def test_free_names_in_order_of_appearance():
    node = cst.parse_module(textwrap.dedent("""\
        def f(x, n):
            y = np.sin(x) * SCALE
            def g(z):
                return z + K + y
            for i in range(n):
                y = y + len(x)
            return [w for w in y if w > T]
        """)).body[0]
    assert free_names(node) == ["np", "SCALE", "K", "range", "len", "T"]
