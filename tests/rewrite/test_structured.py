"""Before/after tests of the structured control-flow conversion (AutoGraph style)."""

from __future__ import annotations

import textwrap

import libcst as cst

from astcompiler.rewrite.structured import RewriteStructuredControlFlow, bound_names, jumps


def convert(code: str) -> str:
    """Apply the conversion to a module holding one function."""
    return cst.parse_module(textwrap.dedent(code)).visit(RewriteStructuredControlFlow()).code


def test_if_else_becomes_branch_functions_with_state():
    assert convert("""\
        def f(x, c):
            if c:
                y = x
            else:
                y = -x
            return y
        """) == textwrap.dedent("""\
        def f(x, c):
            y: object
            def if_true_0():
                nonlocal y
                y = x
            def if_false_0():
                nonlocal y
                y = -x
            def if_0_get():
                return __ac.state(lambda: y)
            def if_0_set(values):
                nonlocal y
                y, = values
            __ac.if_stmt(c, if_true_0, if_false_0, if_0_get, if_0_set, ('y',))
            return y
        """)


def test_for_loop_carries_target_and_assigned_names():
    out = convert("""\
        def f(x, n):
            s = 0
            for i in range(n):
                s = s + x[i]
            return s
        """)
    assert "def for_body_0(itr_0):\n        nonlocal i, s\n        i = itr_0\n" in out
    # `i` is read nowhere after the loop: `dead`; nor on entry (the loop assigns it):
    # `unused`, not carried (rewrite/liveness.py)
    assert ("__ac.for_stmt(range(n), for_body_0, for_0_get, for_0_set, ('i', 's'), None, "
            "dead=('i',), unused=('i',))") in out
    assert "    i: object; s: object\n" in out


def test_break_becomes_a_flag_an_extra_test_and_guards():
    out = convert("""\
        def f(x, n):
            for i in range(n):
                if x[i] < 0:
                    break
                x[i] = 0
        """)
    assert "__ac_brk_0 = False\n" in out
    assert "__ac_brk_0 = True" in out and "break" not in out
    assert ", lambda: not __ac_brk_0, " in out       # the loop's extra test
    assert "__ac.if_stmt(not __ac_brk_0, " in out     # statements after the break are guarded


def test_returns_inside_control_flow_use_a_return_flag():
    out = convert("""\
        def f(x):
            if x:
                return 1
            return 2
        """)
    assert "__ac_returned = False; __ac_retval = None" in out
    assert "__ac_retval = 1; __ac_returned = True" in out
    assert out.rstrip().endswith("return __ac_retval")


def test_while_loop_has_a_test_function():
    out = convert("""\
        def f(n):
            while n > 1:
                n = n // 2
            return n
        """)
    assert "def while_test_0():\n        return n > 1\n" in out
    assert "__ac.while_stmt(while_test_0, while_body_0, while_0_get, while_0_set, ('n',), None)" in out


def test_converted_code_runs_like_the_original():
    source = textwrap.dedent("""\
        def f(xs, n):
            total = 0
            for i in range(n):
                if i == 1:
                    continue
                if i == 4:
                    break
                total += xs[i]
            else:
                total = -1
            k = n
            while k > 0:
                k -= 3
                if k == 2:
                    return total, k
            return total, k
        """)

    class Runtime:  # Python semantics of the runtime calls
        def state(self, *thunks):
            return tuple(t() for t in thunks)

        def for_stmt(self, it, body, get, set_, names, extra, dead=(), unused=()):
            for item in it:
                if extra is not None and not extra():
                    break
                body(item)

        def while_stmt(self, test, body, get, set_, names, extra, dead=(), unused=()):
            while (extra is None or extra()) and test():
                body()

        def if_stmt(self, cond, t, f, get, set_, names, dead=()):
            if cond:
                t()
            elif f is not None:
                f()

    original: dict = {}
    exec(source, original)
    converted: dict = {"__ac": Runtime()}
    exec(convert(source), converted)
    for n in range(0, 9):
        assert converted["f"](list(range(10)), n) == original["f"](list(range(10)), n)


def test_analysis_helpers():
    module = cst.parse_module("a = 1\nfor i, j in z:\n    b += 1\n    def g(): c = 1\n")
    assert bound_names(module.body) == ["a", "i", "j", "b", "g"]
    loop = cst.parse_module("for i in z:\n    for j in w:\n        break\n    return 1\n").body[0]
    found = jumps([loop])
    assert found.returns and not found.breaks
