"""Graph breaks that split a function: a compiled prefix, one statement in Python, a resume.

When capture breaks inside top-level statement ``k`` of a function, the statements before it
become a *prefix* function (compiled: one graph that returns the live variables), statement ``k``
runs in plain Python (a *break* function), and the statements after it become a *resume* function
taking the live variables as parameters (compiled and guarded on its own, and split again if it
breaks again). A break nested in a loop or branch runs that whole top-level statement in Python.

Prefix and resume functions are built from the user's own statement nodes, so their generated
code still names the user's file and lines; returns inside them become ``(True, value)`` so the
entry can tell "the function returned" from "here are the live variables".
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import libcst as cst

from ..capture.state import HANDLERS
from ..rewrite.structured import bound_names
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
        return updated.with_changes(value=cst.Tuple([cst.Element(cst.Name("True")),
                                                     cst.Element(value)]))


def _flag_returns(statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    transformer = _FlagReturns()
    return [s.visit(transformer) for s in statements]


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
    from ..capture.runtime import read_state
    return read_state(*thunks)


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
    overrides: list[str]       # names the break statement calls that get a compiled version


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


def _compile_synthetic(fn: types.FunctionType, node: cst.FunctionDef, origin: FunctionSource,
                       cache_dir: str, kind: str) -> types.FunctionType:
    """A real Python function for ``node`` (plain Python, the original closure cells), whose
    source the compiler reads from ``node`` (registered as synthetic)."""
    free = [LIVE, *fn.__code__.co_freevars]
    inner = cst.Module(body=[node]).code
    maker = (f"def ___make({', '.join(free)}):\n"
             + "".join(f"    {line}\n" if line else "\n" for line in inner.splitlines())
             + f"    return {node.name.value}\n")
    source = (f"# {kind} of {origin.qualname} ({origin.display_name}), generated by astcompiler\n"
              + maker)
    path = write_generated_file(f"{cache_dir}/split", f"{origin.qualname}_{kind}", source)
    made = load_generated_module(path).___make(read_live, *[None] * (len(free) - 1))
    cells = dict(zip(made.__code__.co_freevars, made.__closure__ or ()))
    cells.update(zip(fn.__code__.co_freevars, fn.__closure__ or ()))  # the user's live cells
    closure = tuple(cells[name] for name in made.__code__.co_freevars) or None
    result = types.FunctionType(made.__code__, fn.__globals__, node.name.value, None, closure)
    result.__qualname__ = f"{origin.qualname}.<{kind}>"
    result.__module__ = fn.__module__
    register_synthetic(result.__code__, FunctionSource(
        filename=origin.filename, display_name=origin.display_name, qualname=result.__qualname__,
        node=node, positions=origin.positions, module_text=origin.module_text,
        digest=f"{origin.digest}-{kind}"))
    return result


def plan_split(fn: types.FunctionType, origin: FunctionSource, index: int,
               cache_dir: str, overrides: Sequence[str] = ()) -> SplitPlan:
    """Build the prefix, break and resume functions for a break in statement ``index``."""
    definition = origin.node
    body = list(definition.body.body)
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
                               body=cst.IndentedBlock(body=[*_flag_returns(body[:index]),
                                                            _live_return(live_in)]))
        prefix = _compile_synthetic(fn, node, origin, cache_dir, f"prefix_{index}")
        prefix.__defaults__, prefix.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
        sources["prefix"] = cst.Module(body=[node]).code
    brk_node = cst.FunctionDef(name=cst.Name(f"{name}__break_{index}"),
                               params=_params([*live_in, *overrides]),
                               body=cst.IndentedBlock(body=[*_flag_returns([body[index]]),
                                                            _live_return(live_out)]))
    brk = _compile_synthetic(fn, brk_node, origin, cache_dir, f"break_{index}")
    sources["break"] = cst.Module(body=[brk_node]).code
    resume = None
    if index + 1 < len(body):
        node = cst.FunctionDef(name=cst.Name(f"{name}__resume_{index}"), params=_params(live_out),
                               body=cst.IndentedBlock(body=body[index + 1:]))
        resume = _compile_synthetic(fn, node, origin, cache_dir, f"resume_{index}")
        sources["resume"] = cst.Module(body=[node]).code
    return SplitPlan(index, live_in, live_out, prefix, brk, resume, sources, list(overrides))


def _read_live_handler(runtime: Any, *thunks: Callable[[], Any]) -> tuple:
    return runtime.state(*thunks)


HANDLERS[read_live] = _read_live_handler


def split_runner(plan: SplitPlan, prefix: Callable | None, resume: Callable | None,
                 original: types.FunctionType, compiled_callees: Sequence[Callable] = ()
                 ) -> Callable[..., Any]:
    """The entry's run function: prefix (compiled), the statement (Python, calling the compiled
    version of the function it broke in), resume (compiled)."""
    brk = plan.brk
    callees = tuple(compiled_callees)

    def run(*args: Any, **kwargs: Any) -> Any:
        if prefix is not None:
            done, live = prefix(*args, **kwargs)
            if done:
                return live
        else:
            from ..capture.runtime import signature_of
            bound = signature_of(original).bind(*args, **kwargs)
            bound.apply_defaults()
            live = tuple(bound.arguments[n] for n in plan.live_in)
        done, live = brk(*live, *callees)
        if done:
            return live
        return resume(*live) if resume is not None else None

    return run
