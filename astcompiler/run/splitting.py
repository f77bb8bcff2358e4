"""Graph breaks that split a function: a compiled prefix, one statement in Python, a resume.

When capture breaks inside top-level statement ``k`` of a function, the statements before it
become a *prefix* function (compiled: one graph that returns the live variables), statement ``k``
runs in plain Python (a *break* function), and the statements after it become a *resume* function
taking the live variables as parameters (compiled and guarded on its own, and split again if it
breaks again). A break nested in a loop or branch runs that whole top-level statement in Python.

Prefix and resume functions are built from the user's own statement nodes, so their generated
code still names the user's file and lines; returns inside them become ``(True, value)`` so the
entry can tell "the function returned" from "here are the live variables". Zero-argument
``super()`` becomes ``super(__class__, self)`` (a piece's first parameter is not ``self``), and a
function is not split where a variable shared with a nested function (a cell) would be torn
between pieces: each piece has its own frame, so the closure would see a stale value.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import libcst as cst
import numpy as np

from ..capture.runtime.api import is_unbound
from ..capture.sizes.dynamic import MARKERS, DimMarker
from ..capture.lifting import lazy_reader
from ..capture.state import HANDLERS
from ..exc import GraphBreak
from ..rewrite.calls import ExplicitSuper
from ..rewrite.structured import bound_names, in_own_scope
from ..source import load_generated_module, write_generated_file
from ..source.loader import FunctionSource, register_synthetic

LIVE = "___live"


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.names:
            self.names.append(node.value)


def names_in(nodes: Sequence[cst.CSTNode]) -> list[str]:
    visitor = _Names()
    for node in nodes:
        node.visit(visitor)
    return visitor.names


class _FlagReturns(cst.CSTTransformer):
    """``return v`` -> ``return (True, v)`` (not inside nested functions)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return True

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        if self.depth > 0:
            return updated
        value = updated.value if updated.value is not None else cst.Name("None")
        if isinstance(value, cst.Tuple) and not value.lpar:  # return a, b -> (True, (a, b))
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated.with_changes(value=cst.Tuple([cst.Element(cst.Name("True")),
                                                     cst.Element(value)]))


def _has_return(statement: cst.BaseStatement) -> bool:
    return in_own_scope([statement], (cst.Return,))


def _flag_returns(statements: Sequence[cst.BaseStatement],
                  positions: dict | None = None) -> list[cst.BaseStatement]:
    """Statements with their returns flagged; those without a return are kept as they are (the
    same nodes, so their source positions still name the user's lines). The rebuilt nodes of
    those with a return get their originals' positions in ``positions`` (when given)."""
    transformer = _FlagReturns()
    out = [s.visit(transformer) if _has_return(s) else s for s in statements]
    if positions is not None:
        for old, new in zip(statements, out):
            carry_positions(old, new, positions)
    return out


def carry_positions(old: cst.CSTNode, new: cst.CSTNode, positions: dict) -> None:
    """Give the nodes of ``new`` (``old`` rebuilt by a transformer: unchanged subtrees are the
    same objects) the source positions of the nodes of ``old`` they replace."""
    if old is new:
        return
    if old in positions:
        positions[new] = positions[old]
    if type(old) is type(new):
        old_children, new_children = old.children, new.children
        if len(old_children) == len(new_children):
            for old_child, new_child in zip(old_children, new_children):
                carry_positions(old_child, new_child, positions)


def explicit_super(fn: types.FunctionType, definition: cst.FunctionDef,
                   positions: dict) -> tuple[list[cst.BaseStatement], dict]:
    """The body of ``definition`` with zero-argument ``super()`` made explicit (when ``fn`` is a
    method: it has a ``__class__`` cell and a first parameter), and the source positions with
    the changed statements at their original lines."""
    body = list(definition.body.body)
    params = [*definition.params.posonly_params, *definition.params.params]
    if "__class__" not in fn.__code__.co_freevars or not params:
        return body, positions
    out, moved = [], {}
    for statement in body:
        transformer = ExplicitSuper(params[0].name.value)
        changed = statement.visit(transformer)
        if transformer.changed and statement in positions:
            moved[changed] = positions[statement]
        out.append(changed if transformer.changed else statement)
    return out, ({**positions, **moved} if moved else positions)


REDIRECT = "___redirect"


class _RedirectCalls(cst.CSTTransformer):
    """``f(a)`` -> ``___redirect(f)(a)`` in the statement that broke: a call that reaches the
    user function the capture broke in goes to its compiled version instead."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if isinstance(updated.func, cst.Name) and updated.func.value == "super":
            return updated
        return updated.with_changes(func=cst.Call(func=cst.Name(REDIRECT),
                                                  args=[cst.Arg(updated.func)]))


def redirect_to(callee: Callable, compiled: Callable) -> Callable[[Any], Any]:
    """What ``___redirect`` does: ``callee`` (or a method bound to it) becomes ``compiled``."""
    def redirect(fn: Any) -> Any:
        if fn is callee:
            return compiled
        if isinstance(fn, types.MethodType) and fn.__func__ is callee:
            return types.MethodType(compiled, fn.__self__)
        return fn

    return redirect


def _no_redirect(fn: Any) -> Any:
    return fn


def _params(names: Sequence[str]) -> cst.Parameters:
    return cst.Parameters(params=[cst.Param(cst.Name(n)) for n in names])


def _live_return(names: Sequence[str]) -> cst.SimpleStatementLine:
    """``return (False, ___live(lambda: a, lambda: b))``: unbound names become ``Undefined``."""
    call = cst.Call(func=cst.Name(LIVE), args=[cst.Arg(cst.Lambda(cst.Parameters(), cst.Name(n)))
                                                for n in names])
    value = cst.Tuple([cst.Element(cst.Name("False")), cst.Element(call)])
    return cst.SimpleStatementLine(body=[cst.Return(value)])


def read_live(*thunks: Callable[[], Any]) -> tuple:
    """Values of the live variables; an unbound one becomes an ``Undefined`` marker."""
    from ..capture.runtime.api import read_state
    return read_state(*thunks)


read_live.unbound = is_unbound  # type: ignore[attr-defined]  # ``___live.unbound(y)``


class _Deleted(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Del(self, node: cst.Del) -> None:
        targets = [e.value for e in node.target.elements] \
            if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        self.names += [t.value for t in targets if isinstance(t, cst.Name)]


def _maybe_unbound(body: Sequence[cst.BaseStatement], upto: int) -> set[str]:
    """Names that may be unbound after ``body[:upto]``: deleted anywhere, or bound only inside
    compound statements."""
    deleted = _Deleted()
    for statement in body:
        statement.visit(deleted)
    simple = bound_names([s for s in body[:upto] if isinstance(s, cst.SimpleStatementLine)])
    return set(deleted.names) | (set(bound_names(body[:upto])) - set(simple))


def _unbind(names: Sequence[str], maybe: set[str]) -> list[cst.BaseStatement]:
    """``if ___live.unbound(y): del y``: a piece starts with such a variable unbound, so using
    it raises UnboundLocalError as in Python (the ``Undefined`` marker never reaches the user)."""
    lines: list[cst.BaseStatement] = []
    for name in names:
        if name in maybe:
            test = cst.Call(func=cst.Attribute(cst.Name(LIVE), cst.Name("unbound")),
                            args=[cst.Arg(cst.Name(name))])
            lines.append(cst.If(test=test, body=cst.SimpleStatementSuite(
                body=[cst.Del(target=cst.Name(name))])))
    return lines


@dataclass
class SplitPlan:
    """Where and how one function splits."""

    index: int                 # the top-level statement that breaks
    live_in: list[str]         # live before it (the prefix returns them)
    live_out: list[str]        # live after it (the resume takes them)
    prefix: types.FunctionType | None
    brk: types.FunctionType
    resume: types.FunctionType | None
    sources: dict[str, str]    # name -> generated source (for show)


def statement_index(origin: FunctionSource, line: int) -> int | None:
    """The top-level statement of the function that contains user line ``line``."""
    body = origin.node.body.body if isinstance(origin.node.body, cst.IndentedBlock) else ()
    for index, statement in enumerate(body):
        position = origin.positions.get(statement)
        if position is not None and position.start.line <= line <= position.end.line:
            return index
    return None


def _parameter_names(node: cst.FunctionDef) -> list[str]:
    params = node.params
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names += [p.name.value for p in params.kwonly_params]
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


class _NoDefaults(cst.CSTTransformer):
    """Parameter defaults as ``None``: the generated module cannot evaluate the user's default
    expressions (``deepcopy=deepcopy`` names the user module's globals); the function gets the
    original's ``__defaults__`` and ``__kwdefaults__`` instead."""

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if updated.default is None:
            return updated
        return updated.with_changes(default=cst.Name("None"))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:  # (nested functions keep theirs)
        return self._outer is None and not setattr(self, "_outer", node)

    _outer: cst.FunctionDef | None = None


def _compile_synthetic(fn: types.FunctionType, node: cst.FunctionDef, origin: FunctionSource,
                       cache_dir: str, kind: str,
                       redirect: Callable[[Any], Any] = _no_redirect,
                       positions: dict | None = None) -> types.FunctionType:
    """A real Python function for ``node`` (plain Python, the original closure cells), whose
    source the compiler reads from ``node`` (registered as synthetic)."""
    free = [LIVE, REDIRECT, *[v for v in fn.__code__.co_freevars if v not in (LIVE, REDIRECT)]]
    inner = cst.Module(body=[node.visit(_NoDefaults())]).code  # (the caller sets __defaults__)
    maker = (f"def ___make({', '.join(free)}):\n"
             + "".join(f"    {line}\n" if line else "\n" for line in inner.splitlines())
             + f"    return {node.name.value}\n")
    source = (f"# {kind} of {origin.qualname} ({origin.display_name}), generated by astcompiler\n"
              + maker)
    path = write_generated_file(f"{cache_dir}/split", f"{origin.qualname}_{kind}", source)
    made = load_generated_module(path).___make(read_live, redirect, *[None] * (len(free) - 2))
    cells = dict(zip(made.__code__.co_freevars, made.__closure__ or ()))
    cells.update(zip(fn.__code__.co_freevars, fn.__closure__ or ()))  # the user's live cells
    closure = tuple(cells[name] for name in made.__code__.co_freevars) or None
    result = types.FunctionType(made.__code__, fn.__globals__, node.name.value, None, closure)
    result.__qualname__ = f"{origin.qualname}.<{kind}>"
    result.__module__ = fn.__module__
    register_synthetic(result.__code__, FunctionSource(
        filename=origin.filename, display_name=origin.display_name, qualname=result.__qualname__,
        node=node, positions=origin.positions if positions is None else positions,
        module_text=origin.module_text,
        digest=f"{origin.digest}-{kind}"))
    return result


class _Nonlocals(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.update(item.name.value for item in node.names)


class _ClosureNames(cst.CSTVisitor):
    """Names mentioned inside the closures a block creates: nested functions, lambdas, classes
    and generator expressions (objects that outlive the statement that made them; list, set
    and dict comprehensions run at once)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def _closure(self, node: cst.CSTNode) -> bool:
        self.names.update(names_in([node]))
        return False

    visit_FunctionDef = visit_Lambda = visit_ClassDef = visit_GeneratorExp = _closure


def _closure_names(statements: Sequence[cst.BaseStatement]) -> set[str]:
    finder = _ClosureNames()
    for statement in statements:
        statement.visit(finder)
    return finder.names


def shared_cells_across(fn: types.FunctionType, body: Sequence[cst.BaseStatement],
                        index: int) -> list[str]:
    """Variables of ``fn`` that nested functions share (cells) and that a split at statement
    ``index`` would tear apart: read by a closure made before a piece boundary and rebound
    after it (or written by a nested function's ``nonlocal`` and used after it). Each piece has
    its own frame, so a closure made in one piece keeps reading (or writing) that piece's cell."""
    cells = set(fn.__code__.co_cellvars)
    if not cells:
        return []
    finder = _Nonlocals()
    for statement in body:
        statement.visit(finder)
    torn: list[str] = []
    for boundary in (index, index + 1):
        if not 0 < boundary < len(body):
            continue
        before, after = _closure_names(body[:boundary]), body[boundary:]
        rebound = set(bound_names(after)) | (finder.names & set(names_in(after)))
        torn += [n for n in sorted(cells & before & rebound) if n not in torn]
    return torn


def plan_split(fn: types.FunctionType, origin: FunctionSource, index: int, cache_dir: str,
               redirect: Callable[[Any], Any] | None = None) -> SplitPlan | None:
    """Build the prefix, break and resume functions for a break in statement ``index``;
    ``redirect`` (see ``redirect_to``) sends the statement's calls of the function the capture
    broke in to its compiled version. None: the function cannot be split there (a variable
    shared with a nested function would be torn apart, see ``shared_cells_across``)."""
    definition = origin.node
    body, positions = explicit_super(fn, definition, origin.positions)
    positions = dict(positions)  # flagged returns add their rebuilt nodes (origin's stay as is)
    if shared_cells_across(fn, body, index):
        return None
    params = _parameter_names(definition)
    before = params + [n for n in bound_names(body[:index]) if n not in params]
    live_in = [n for n in before if n in names_in(body[index:])]
    defined = live_in + [n for n in bound_names([body[index]]) if n not in live_in]
    live_out = [n for n in defined if n in names_in(body[index + 1:])]
    name = definition.name.value if isinstance(definition, cst.FunctionDef) else "lambda"
    sources: dict[str, str] = {}

    prefix = None
    if index > 0:
        node = cst.FunctionDef(name=cst.Name(f"{name}__graph_{index}"), params=definition.params,
                               body=cst.IndentedBlock(body=[*_flag_returns(body[:index], positions),
                                                            _live_return(live_in)]))
        prefix = _compile_synthetic(fn, node, origin, cache_dir, f"prefix_{index}",
                                    positions=positions)
        prefix.__defaults__, prefix.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
        sources["prefix"] = cst.Module(body=[node]).code
    statement = _flag_returns([body[index]], positions)
    if redirect is not None:
        statement = [s.visit(_RedirectCalls()) for s in statement]
    brk_node = cst.FunctionDef(name=cst.Name(f"{name}__break_{index}"), params=_params(live_in),
                               body=cst.IndentedBlock(body=[*_unbind(live_in, _maybe_unbound(body, index)),
                                                            *statement, _live_return(live_out)]))
    brk = _compile_synthetic(fn, brk_node, origin, cache_dir, f"break_{index}",
                             redirect or _no_redirect, positions)
    sources["break"] = cst.Module(body=[brk_node]).code
    resume = None
    if index + 1 < len(body):
        node = cst.FunctionDef(name=cst.Name(f"{name}__resume_{index}"), params=_params(live_out),
                               body=cst.IndentedBlock(body=[
                                   *_unbind(live_out, _maybe_unbound(body, index + 1)),
                                   *body[index + 1:]]))
        resume = _compile_synthetic(fn, node, origin, cache_dir, f"resume_{index}",
                                    positions=positions)
        sources["resume"] = cst.Module(body=[node]).code
    return SplitPlan(index, live_in, live_out, prefix, brk, resume, sources)


def _read_live_handler(runtime: Any, *thunks: Callable[[], Any]) -> tuple:
    values = runtime.state(*thunks)
    for value in values:
        if lazy_reader(value):
            raise GraphBreak(f"a {type(value).__name__} object is live across a graph break: it "
                             "reads its container when it is consumed, which a compiled piece "
                             "cannot hand over")
    return values



HANDLERS[read_live] = _read_live_handler


def carry_dynamic_sizes(inputs: Sequence[Any], live: Sequence[Any]) -> None:
    """Dims of the live arrays a resume gets whose sizes are those of a dynamic dim of the
    call's inputs (``mark_dynamic``, ``maybe_mark_dynamic``) become ``maybe`` dynamic: a resume
    compiled on its own would otherwise see a computed array (``a = np.exp(x)``) with static
    sizes, and ``a + x`` would specialize the dynamic size of ``x`` (an error for
    ``mark_dynamic``). Only a hint: a dynamic size is never a wrong answer."""
    if not len(MARKERS):
        return
    sizes = {array.shape[dim] for array in inputs if isinstance(array, np.ndarray)
             for dim, marker in MARKERS.get(array).items() if marker.dynamic
             and array.shape[dim] >= 2}
    if not sizes:
        return
    for value in live:
        if isinstance(value, np.ndarray) and not MARKERS.get(value):
            dims = [dim for dim, size in enumerate(value.shape) if size in sizes]
            if dims:
                MARKERS.mark(value, dims, DimMarker("maybe"))


def split_runner(plan: SplitPlan, prefix: Callable | None, resume: Callable | None,
                 original: types.FunctionType) -> Callable[..., Any]:
    """The entry's run function: prefix (compiled), the statement (Python, calling the compiled
    version of the function it broke in), resume (compiled)."""
    brk = plan.brk

    def run(*args: Any, **kwargs: Any) -> Any:
        if prefix is not None:
            done, live = prefix(*args, **kwargs)
            if done:
                return live
        else:
            from ..capture.runtime.api import signature_of
            bound = signature_of(original).bind(*args, **kwargs)
            bound.apply_defaults()
            live = tuple(bound.arguments[n] for n in plan.live_in)
        done, live = brk(*live)
        if done:
            return live
        if resume is None:
            return None
        carry_dynamic_sizes((*args, *kwargs.values()), live)
        return resume(*live)

    return run
