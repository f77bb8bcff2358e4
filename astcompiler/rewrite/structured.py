"""``if``/``for``/``while`` become functions with explicit state (AutoGraph style).

Each statement turns into small nested functions (the body, the branches, the loop test) that
write the enclosing function's variables through ``nonlocal``, plus one runtime call::

    def for_body_12(itr_12):                 # model.py:12
        nonlocal i, s
        i = itr_12
        s = s + x[i]
    def for_get_12():
        return __ac.state(lambda: i, lambda: s)
    def for_set_12(values):
        nonlocal i, s
        i, s = values
    __ac.for_stmt(range(n), for_body_12, for_get_12, for_set_12, ('i', 's'), None)

At capture time the runtime either runs the statement in Python (static condition, short static
trip count) or captures it once as a structured region of the graph (a loop over a symbolic range,
a while loop, a branch on array data), using the get/set functions to read and write the state.

A generator or coroutine (its own body yields or awaits) is left as it is: its loops suspend,
so moving them into nested functions would change what it does (``unsupported.py`` makes it a
graph break when it runs during capture).

``break``, ``continue`` and ``return`` inside these statements become flags (``__ac_brk_12``,
``__ac_cont_12``, ``__ac_returned``): the statements after a possible jump are guarded by the
flags, loops get an extra test, and the function ends with ``return __ac_retval``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from .liveness import Liveness
from .scopes import SkipNestedScopes
from .templates import RUNTIME, body_start, runtime_attr, thunk

RETURNED = "__ac_returned"
RETVAL = "__ac_retval"

_TAG = re.compile(r"# (?P<file>.+):(?P<line>\d+)$")


# ----- analysis ------------------------------------------------------------------------------
class _Bound(cst.CSTVisitor):
    """Names a block binds, without descending into nested scopes."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def _add(self, name: str) -> None:
        if name not in self.names:
            self.names.append(name)

    def _targets(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            self._add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._targets(element.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_Del(self, node: cst.Del) -> None:  # `del y` makes `y` a variable of the scope
        self._targets(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._targets(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        target = node.asname.name if node.asname else node.name
        if isinstance(target, cst.Name):
            self._add(target.value)
        elif isinstance(target, cst.Attribute):
            root = target
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name):
                self._add(root.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    # A comprehension is a scope of its own, but an assignment expression in it binds in the
    # enclosing function (``[y := f(v) for v in xs]`` sets ``y``): only those are collected.
    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._walrus_targets(node)

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._walrus_targets(node)

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._walrus_targets(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._walrus_targets(node)

    def _walrus_targets(self, node: cst.CSTNode) -> bool:
        finder = _WalrusTargets()
        node.visit(finder)
        for name in finder.names:
            self._add(name)
        return False


class _WalrusTargets(cst.CSTVisitor):
    """Targets of ``:=`` inside a comprehension (not inside lambdas, which bind their own)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name) and node.target.value not in self.names:
            self.names.append(node.target.value)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def bound_names(nodes: Sequence[cst.CSTNode], targets: Sequence[cst.CSTNode] = ()) -> list[str]:
    """Names bound by ``targets`` (assignment targets) and inside ``nodes``."""
    visitor = _Bound()
    for target in targets:
        visitor._targets(target)
    for node in nodes:
        node.visit(visitor)
    return visitor.names


class _OwnScopeFinder(cst.CSTVisitor):
    """Finds a node of the given kinds in one scope (nested functions, classes, lambdas skipped)."""

    def __init__(self, kinds: tuple[type, ...]) -> None:
        self.kinds = kinds
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kinds):
            self.found = True
        return not self.found and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))


SUSPENDING = (cst.Yield, cst.Await)


def in_own_scope(nodes: Sequence[cst.CSTNode], kinds: tuple[type, ...]) -> bool:
    """Whether any of ``nodes`` holds a node of ``kinds`` outside nested scopes."""
    finder = _OwnScopeFinder(kinds)
    for node in nodes:
        if isinstance(node, kinds):
            return True
        node.visit(finder)
    return finder.found


def suspends(node: cst.FunctionDef) -> bool:
    """Whether ``node`` is a generator or a coroutine (its body yields or awaits, or it is an
    ``async def``): its statements must run as Python, never as converted loop regions."""
    if node.asynchronous is not None:
        return True
    return in_own_scope(getattr(node.body, "body", ()), SUSPENDING)


class _Jumps(SkipNestedScopes):
    """Which jumps a statement contains: returns anywhere (but nested scopes), breaks and
    continues that belong to the enclosing loop (not to loops nested inside)."""

    def __init__(self) -> None:
        self.returns = False
        self.breaks = False
        self.continues = False
        self._loops = 0

    def visit_Return(self, node: cst.Return) -> None:
        self.returns = True

    def visit_Break(self, node: cst.Break) -> None:
        self.breaks |= self._loops == 0

    def visit_Continue(self, node: cst.Continue) -> None:
        self.continues |= self._loops == 0

    def visit_For(self, node: cst.For) -> None:
        self._loops += 1

    def leave_For(self, node: cst.For) -> None:
        self._loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self._loops += 1

    def leave_While(self, node: cst.While) -> None:
        self._loops -= 1


def jumps(nodes: Sequence[cst.CSTNode]) -> _Jumps:
    visitor = _Jumps()
    for node in nodes:
        node.visit(visitor)
    return visitor


def _returns_inside_control_flow(body: Sequence[cst.BaseStatement]) -> bool:
    return any(isinstance(s, (cst.If, cst.For, cst.While)) and jumps([s]).returns for s in body)


# ----- building blocks -----------------------------------------------------------------------
def _tag_of(node: cst.CSTNode) -> cst.TrailingWhitespace | None:
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock) and body.header.comment is not None:
        return body.header
    if isinstance(body, cst.SimpleStatementSuite) and body.trailing_whitespace.comment is not None:
        return body.trailing_whitespace  # `if c: x = 1` on one line
    trailing = getattr(node, "trailing_whitespace", None)
    if isinstance(trailing, cst.TrailingWhitespace) and trailing.comment is not None:
        return trailing
    return None


def _line_of(node: cst.CSTNode) -> str:
    tag = _tag_of(node)
    if tag is not None:
        match = _TAG.search(tag.comment.value)
        if match:
            return match["line"]
    return "0"


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block; a one-line body (``if c: x = 1``) becomes one statement line."""
    if isinstance(block, cst.SimpleStatementSuite):
        small = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in block.body]
        return [cst.SimpleStatementLine(body=small, trailing_whitespace=block.trailing_whitespace)]
    return list(block.body)


def _line(small: Sequence[cst.BaseSmallStatement], tag: cst.TrailingWhitespace | None
          ) -> cst.SimpleStatementLine:
    line = cst.SimpleStatementLine(body=list(small))
    return line.with_changes(trailing_whitespace=tag) if tag is not None else line


def _assign(name: str, value: cst.BaseExpression, tag=None) -> cst.SimpleStatementLine:
    return _line([cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)], tag)


def _nonlocal(names: Sequence[str], tag=None) -> list[cst.SimpleStatementLine]:
    if not names:
        return []
    return [_line([cst.Nonlocal(names=[cst.NameItem(cst.Name(n)) for n in names])], tag)]


def _block(statements: Sequence[cst.BaseStatement], tag=None) -> cst.IndentedBlock:
    body = list(statements) or [_line([cst.Pass()], None)]
    block = cst.IndentedBlock(body=body)
    return block.with_changes(header=tag) if tag is not None else block


def _def(name: str, params: Sequence[str], body: Sequence[cst.BaseStatement], tag=None) -> cst.FunctionDef:
    return cst.FunctionDef(name=cst.Name(name),
                           params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
                           body=_block(body, tag))


def _names_tuple(names: Sequence[str]) -> cst.Tuple:
    return cst.Tuple(elements=[cst.Element(cst.SimpleString(repr(n))) for n in names])


def _state_functions(prefix: str, names: Sequence[str], tag=None
                     ) -> tuple[list[cst.FunctionDef], cst.BaseExpression, cst.BaseExpression]:
    """``<prefix>_get`` / ``<prefix>_set`` for the state variables (or ``None`` when stateless)."""
    if not names:
        return [], cst.Name("None"), cst.Name("None")
    getter = _def(f"{prefix}_get", [], [_line([cst.Return(cst.Call(
        func=runtime_attr("state"), args=[cst.Arg(thunk(cst.Name(n))) for n in names]))], tag)], tag)
    target = cst.Tuple(elements=[cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
    setter = _def(f"{prefix}_set", ["values"], [
        *_nonlocal(names, tag),
        _line([cst.Assign(targets=[cst.AssignTarget(target)], value=cst.Name("values"))], tag)], tag)
    return [getter, setter], cst.Name(f"{prefix}_get"), cst.Name(f"{prefix}_set")


def _runtime_stmt(name: str, args: Sequence[cst.BaseExpression | cst.Arg],
                  tag) -> cst.SimpleStatementLine:
    call = cst.Call(func=runtime_attr(name),
                    args=[a if isinstance(a, cst.Arg) else cst.Arg(a) for a in args])
    return _line([cst.Expr(call)], tag)


def _dead_arg(node: cst.For | cst.While | cst.If, names: Sequence[str],
              fn: "_Function") -> list[cst.Arg]:
    """``dead=(...)``: the state variables nothing reads after the statement; ``unused=(...)``:
    those of a loop's that its body never reads on entry either (liveness.py)."""
    user = [n for n in names if not n.startswith("__ac_")]  # the compiler's flags: not needed
    if fn.liveness is None:
        return []
    unused: tuple[str, ...] = ()
    if isinstance(node, cst.If):
        dead = fn.liveness.dead_after_if(node, user)
    else:
        dead = fn.liveness.dead_after(node, user)
        unused = fn.liveness.unused_by_loop(node, dead)
    tight = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""))
    return [cst.Arg(_names_tuple(names), keyword=cst.Name(keyword), equal=tight)
            for keyword, names in (("dead", dead), ("unused", unused)) if names]


def _not_any(flags: Sequence[str]) -> cst.BaseExpression:
    expr: cst.BaseExpression = cst.UnaryOperation(cst.Not(), cst.Name(flags[0]))
    for flag in flags[1:]:
        expr = cst.BooleanOperation(expr, cst.And(), cst.UnaryOperation(cst.Not(), cst.Name(flag)))
    return expr


# ----- the conversion ------------------------------------------------------------------------
@dataclass
class _Loop:
    brk: str | None = None
    cont: str | None = None


@dataclass
class _Function:
    uses_return_flag: bool
    liveness: Liveness | None = None
    declared: list[str] = field(default_factory=list)
    used_suffixes: dict[str, int] = field(default_factory=dict)

    def unique(self, line: str) -> str:
        count = self.used_suffixes.get(line, 0)
        self.used_suffixes[line] = count + 1
        return line if count == 0 else f"{line}_{count}"

    def declare(self, names: Sequence[str]) -> None:
        for name in names:
            if name not in self.declared:
                self.declared.append(name)


class StructuredControlFlow:
    """Converts one function's body; nested function definitions are converted on their own."""

    def convert_function(self, node: cst.FunctionDef) -> cst.FunctionDef:
        if suspends(node):  # a generator's loops suspend: they stay Python statements
            return node
        body = list(node.body.body)
        fn = _Function(uses_return_flag=_returns_inside_control_flow(body), liveness=Liveness(node))
        converted = self._block(body, fn, loop=None)
        params = {p.name.value for p in (*node.params.params, *node.params.posonly_params,
                                         *node.params.kwonly_params)}
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                params.add(star.name.value)
        prefix: list[cst.BaseStatement] = []
        declared = [n for n in fn.declared if n not in params]
        if declared:
            prefix.append(_line([cst.AnnAssign(target=cst.Name(n), annotation=cst.Annotation(
                cst.Name("object"))) for n in declared], _tag_of(node)))
        if fn.uses_return_flag:
            prefix.append(_line([
                cst.Assign(targets=[cst.AssignTarget(cst.Name(RETURNED))], value=cst.Name("False")),
                cst.Assign(targets=[cst.AssignTarget(cst.Name(RETVAL))], value=cst.Name("None"))],
                _tag_of(node)))
            converted.append(_line([cst.Return(cst.Name(RETVAL))], _tag_of(node)))
        start = body_start(converted)
        converted[start:start] = prefix
        return node.with_changes(body=node.body.with_changes(body=converted))

    # statements --------------------------------------------------------------------------------
    def _block(self, statements: Sequence[cst.BaseStatement], fn: _Function,
               loop: _Loop | None) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        for index, statement in enumerate(statements):
            out.extend(self._statement(statement, fn, loop))
            flags = self._flags_set_by(statement, fn, loop)
            rest = statements[index + 1:]
            if flags and rest:
                guard = cst.If(test=_not_any(flags), body=_block(list(rest), _tag_of(rest[0])))
                out.extend(self._statement(guard, fn, loop))
                break
        return out

    def _flags_set_by(self, statement: cst.BaseStatement, fn: _Function,
                      loop: _Loop | None) -> list[str]:
        found = jumps([statement])
        flags = []
        if found.returns and fn.uses_return_flag:
            flags.append(RETURNED)
        if loop is not None and found.breaks and loop.brk:
            flags.append(loop.brk)
        if loop is not None and found.continues and loop.cont:
            flags.append(loop.cont)
        return flags

    def _statement(self, statement: cst.BaseStatement, fn: _Function,
                   loop: _Loop | None) -> list[cst.BaseStatement]:
        if isinstance(statement, cst.If):
            return self._if(statement, fn, loop)
        if isinstance(statement, cst.For) and statement.asynchronous is None:
            return self._for(statement, fn)
        if isinstance(statement, cst.While):
            return self._while(statement, fn)
        if isinstance(statement, cst.FunctionDef):
            return [self.convert_function(statement)]
        if isinstance(statement, cst.SimpleStatementLine):
            return self._simple(statement, fn, loop)
        return [statement]

    def _simple(self, line: cst.SimpleStatementLine, fn: _Function,
                loop: _Loop | None) -> list[cst.BaseStatement]:
        small_out: list[cst.BaseSmallStatement] = []
        for small in line.body:
            small = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            if isinstance(small, cst.Return) and fn.uses_return_flag:
                value = small.value if small.value is not None else cst.Name("None")
                small_out += [cst.Assign([cst.AssignTarget(cst.Name(RETVAL))], value),
                              cst.Assign([cst.AssignTarget(cst.Name(RETURNED))], cst.Name("True"))]
                fn.declare([RETVAL, RETURNED])
                break
            if isinstance(small, cst.Break) and loop is not None and loop.brk:
                small_out.append(cst.Assign([cst.AssignTarget(cst.Name(loop.brk))], cst.Name("True")))
                break
            if isinstance(small, cst.Continue) and loop is not None and loop.cont:
                small_out.append(cst.Assign([cst.AssignTarget(cst.Name(loop.cont))], cst.Name("True")))
                break
            small_out.append(small)
        return [line.with_changes(body=small_out)]

    def _if(self, node: cst.If, fn: _Function, loop: _Loop | None) -> list[cst.BaseStatement]:
        tag = _tag_of(node)
        line = fn.unique(_line_of(node))
        orelse: list[cst.BaseStatement] = []
        if isinstance(node.orelse, cst.If):  # elif: an `if` in the else branch
            orelse = [node.orelse]
        elif isinstance(node.orelse, cst.Else):
            orelse = _statements(node.orelse.body)
        names = bound_names([node.body, *orelse])
        flags = self._flags_set_by(node, fn, loop)
        if RETURNED in flags:
            flags = [*flags, RETVAL]
        names += [f for f in flags if f not in names]
        fn.declare(names)
        true_fn = _def(f"if_true_{line}", [], _nonlocal(names, tag) + self._block(
            _statements(node.body), fn, loop), tag)
        out: list[cst.BaseStatement] = [true_fn]
        false_ref: cst.BaseExpression = cst.Name("None")
        if orelse:
            else_tag = _tag_of(node.orelse) if isinstance(node.orelse, cst.Else) else tag
            out.append(_def(f"if_false_{line}", [], _nonlocal(names, else_tag or tag) + self._block(orelse, fn, loop),
                            else_tag or tag))
            false_ref = cst.Name(f"if_false_{line}")
        state_defs, getter, setter = _state_functions(f"if_{line}", names, tag)
        out += state_defs
        out.append(_runtime_stmt("if_stmt", [node.test, cst.Name(f"if_true_{line}"), false_ref,
                                             getter, setter, _names_tuple(names),
                                             *_dead_arg(node, names, fn)], tag))
        return out

    def _loop_flags(self, node: cst.For | cst.While, fn: _Function, line: str) -> tuple[_Loop, list[str]]:
        found = jumps(_statements(node.body))
        loop = _Loop(brk=f"__ac_brk_{line}" if found.breaks else None,
                     cont=f"__ac_cont_{line}" if found.continues else None)
        stop_flags = [f for f in (loop.brk, RETURNED if found.returns and fn.uses_return_flag else None) if f]
        return loop, stop_flags

    def _extra_test(self, stop_flags: list[str]) -> cst.BaseExpression:
        return thunk(_not_any(stop_flags)) if stop_flags else cst.Name("None")

    def _flags_before_loop(self, loop: _Loop, tag) -> list[cst.BaseStatement]:
        """The loop's jump flags start False before it: bound there, they belong to the
        function holding the loop (a loop nested in another region gets fresh flags each time
        the outer body runs, never a value left from an earlier capture pass)."""
        return [_assign(flag, cst.Name("False"), tag) for flag in (loop.brk, loop.cont) if flag]

    def _loop_tail(self, node: cst.For | cst.While, loop: _Loop, fn: _Function
                   ) -> list[cst.BaseStatement]:
        if node.orelse is None:
            return []
        body = _statements(node.orelse.body)
        if loop.brk:  # `else` runs when the loop did not break
            guarded = cst.If(test=cst.UnaryOperation(cst.Not(), cst.Name(loop.brk)),
                             body=_block(body, _tag_of(node.orelse)))
            return self._statement(guarded, fn, None)
        return self._block(body, fn, None)

    def _for(self, node: cst.For, fn: _Function) -> list[cst.BaseStatement]:
        tag = _tag_of(node)
        line = fn.unique(_line_of(node))
        loop, stop_flags = self._loop_flags(node, fn, line)
        names = bound_names([node.body], targets=[node.target])
        names += [f for f in (loop.brk, loop.cont) if f and f not in names]
        if RETURNED in stop_flags:
            names += [n for n in (RETVAL, RETURNED) if n not in names]
        fn.declare(names)
        item = f"itr_{line}"
        body: list[cst.BaseStatement] = _nonlocal(names, tag)
        body.append(_line([cst.Assign([cst.AssignTarget(node.target)], cst.Name(item))], tag))
        if loop.cont:
            body.append(_assign(loop.cont, cst.Name("False"), tag))
        body += self._block(_statements(node.body), fn, loop)
        out = self._flags_before_loop(loop, tag)
        out.append(_def(f"for_body_{line}", [item], body, tag))
        state_defs, getter, setter = _state_functions(f"for_{line}", names, tag)
        out += state_defs
        out.append(_runtime_stmt("for_stmt", [node.iter, cst.Name(f"for_body_{line}"), getter,
                                              setter, _names_tuple(names),
                                              self._extra_test(stop_flags),
                                              *_dead_arg(node, names, fn)], tag))
        return out + self._loop_tail(node, loop, fn)

    def _while(self, node: cst.While, fn: _Function) -> list[cst.BaseStatement]:
        tag = _tag_of(node)
        line = fn.unique(_line_of(node))
        loop, stop_flags = self._loop_flags(node, fn, line)
        tested = bound_names([cst.Expr(node.test)])  # `while (v := f()) < n`: v is state too
        names = bound_names([node.body])
        names += [n for n in tested if n not in names]
        names += [f for f in (loop.brk, loop.cont) if f and f not in names]
        if RETURNED in stop_flags:
            names += [n for n in (RETVAL, RETURNED) if n not in names]
        fn.declare(names)
        body: list[cst.BaseStatement] = _nonlocal(names, tag)
        if loop.cont:
            body.append(_assign(loop.cont, cst.Name("False"), tag))
        body += self._block(_statements(node.body), fn, loop)
        out = self._flags_before_loop(loop, tag)
        out.append(_def(f"while_test_{line}", [], [*_nonlocal(tested, tag),
                                                   _line([cst.Return(node.test)], tag)], tag))
        out.append(_def(f"while_body_{line}", [], body, tag))
        state_defs, getter, setter = _state_functions(f"while_{line}", names, tag)
        out += state_defs
        out.append(_runtime_stmt("while_stmt", [cst.Name(f"while_test_{line}"),
                                                cst.Name(f"while_body_{line}"), getter, setter,
                                                _names_tuple(names), self._extra_test(stop_flags),
                                                *_dead_arg(node, names, fn)],
                                 tag))
        return out + self._loop_tail(node, loop, fn)


class RewriteStructuredControlFlow(cst.CSTTransformer):
    """The rule applied to a whole function definition (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._done = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # the converter walks the function itself

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if self._done:
            return updated
        self._done = True
        return StructuredControlFlow().convert_function(updated)


__all__ = ["RewriteStructuredControlFlow", "StructuredControlFlow", "bound_names", "jumps",
           "suspends",
           "RETURNED", "RETVAL", "RUNTIME"]
