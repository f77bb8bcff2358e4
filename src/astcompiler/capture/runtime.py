"""The runtime that graph-building code calls (``__ac`` in the rewritten source).

Small on purpose: loading free names (with sources), calls, truth of conditions, boolean
operators, identity, iteration, and explicit breaks. Everything else is plain Python running on
proxies.
"""

from __future__ import annotations

import builtins
import inspect
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import sympy

from ..exc import GraphBreak
from ..config import config
from ..logs import get_logger
from ..rewrite import is_generated, rewrite_function
from .calls import dispatch_call
from .lifting import ObjectProxy, lift
from .proxy import ArrayProxy
from .regions import SymRange, for_region, if_region, while_region
from .sources import GLOBALS_VAR, Source, cell_source, global_source
from .tracer import Tracer


class _OverBudget(Exception):
    """Unrolling a loop made the graph grow past ``config.unroll_node_budget``."""


class Undefined:
    """A free name that exists nowhere: using it raises NameError, as Python would."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise NameError(f"name {self.name!r} is not defined")

    __call__ = __getattr__ = __getitem__ = __add__ = __radd__ = __mul__ = __bool__ = _fail


def read_state(*thunks: Callable[[], Any]) -> tuple:
    """The values ``thunks`` read; a variable that is not bound becomes an ``Undefined``."""
    values = []
    for thunk in thunks:
        try:
            values.append(thunk())
        except NameError as error:
            values.append(Undefined(getattr(error, "name", None) or "?"))
    return tuple(values)


@dataclass
class Frame:
    """One (possibly inlined) user function being captured."""

    fn: types.FunctionType
    globals_var: str
    module: str | None
    cells: dict[str, tuple[str, Any]] = field(default_factory=dict)  # name -> (var, cell)


_SIGNATURES: dict[Any, inspect.Signature] = {}
_SIG_LOCK = threading.Lock()


def signature_of(fn: Callable) -> inspect.Signature:
    code = getattr(fn, "__code__", fn)
    with _SIG_LOCK:
        sig = _SIGNATURES.get((code, getattr(fn, "__defaults__", None) is not None))
    if sig is None:
        sig = inspect.signature(fn, follow_wrapped=False)
        with _SIG_LOCK:
            _SIGNATURES[(code, getattr(fn, "__defaults__", None) is not None)] = sig
    return sig


class Runtime:
    """``__ac``: the capture runtime for one compile."""

    def __init__(self, tracer: Tracer, cache_dir: str, inline_depth_limit: int = 16) -> None:
        self.tracer = tracer
        self.cache_dir = cache_dir
        self.inline_depth_limit = inline_depth_limit
        self.frames: list[Frame] = []
        self.namespace: dict[str, Any] = {}  # variable name -> object (globals dicts, cells)
        self._globals_vars: dict[int, str] = {}
        self.root_globals: dict | None = None
        self.rewritten: list[Any] = []  # RewrittenFunction of every function captured

    # ----- frames ------------------------------------------------------------------------------
    def _globals_var(self, globals_dict: dict) -> str:
        if self.root_globals is None:
            self.root_globals = globals_dict
        if globals_dict is self.root_globals:
            self.namespace[GLOBALS_VAR] = globals_dict
            return GLOBALS_VAR
        var = self._globals_vars.get(id(globals_dict))
        if var is None:
            var = f"___G{len(self._globals_vars) + 1}"
            self._globals_vars[id(globals_dict)] = var
            self.namespace[var] = globals_dict
        return var

    def _frame_for(self, fn: types.FunctionType) -> Frame:
        gvar = self._globals_var(fn.__globals__)
        module = None if gvar == GLOBALS_VAR else fn.__globals__.get("__name__")
        frame = Frame(fn, gvar, module)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            var = f"___cell{sum(1 for k in self.namespace if k.startswith('___cell'))}"
            self.namespace[var] = cell
            frame.cells[name] = (var, cell)
        return frame

    def run_function(self, fn: types.FunctionType, args: tuple, kwargs: dict) -> Any:
        """Run the rewritten form of ``fn`` on already-lifted arguments."""
        if len(self.frames) >= self.inline_depth_limit:
            raise GraphBreak(f"inlining deeper than config.inline_depth_limit "
                             f"({self.inline_depth_limit}) (recursion?)")
        rewritten = rewrite_function(fn, self.cache_dir)
        if rewritten not in self.rewritten:
            self.rewritten.append(rewritten)
        frame = self._frame_for(fn)
        self.frames.append(frame)
        try:
            return rewritten.factory(self)(*args, **kwargs)
        finally:
            self.frames.pop()

    def inline(self, fn: types.FunctionType, args: tuple, kwargs: dict) -> Any:
        """Capture a call to a user function by rewriting and running its body."""
        bound = signature_of(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        try:
            return self.run_function(fn, bound.args, bound.kwargs)
        except GraphBreak as error:  # remember where it broke: the split compiles the callee
            error.__dict__.setdefault("inlined", []).append(fn)
            raise

    @staticmethod
    def is_generated(fn: Any) -> bool:
        return is_generated(fn)

    # ----- free names -------------------------------------------------------------------------
    def load_globals(self, *names: str) -> tuple:
        frame = self.frames[-1]
        values = []
        for name in names:
            source = global_source(name, frame.globals_var, frame.module)
            globals_dict = frame.fn.__globals__
            if name in globals_dict:
                values.append(lift(self.tracer, globals_dict[name], source))
                continue
            self.tracer.guards.add("absent", Source(source.name, frame.globals_var), name)
            builtin_values = vars(builtins)
            values.append(builtin_values[name] if name in builtin_values else Undefined(name))
        return tuple(values)

    def load_closure(self, *names: str) -> tuple:
        frame = self.frames[-1]
        values = []
        for name in names:
            var, cell = frame.cells[name]
            try:
                contents = cell.cell_contents
            except ValueError:
                values.append(Undefined(name))
                continue
            if name.startswith("___"):  # the compiler's own helpers (split functions): fixed
                values.append(contents)
                continue
            values.append(lift(self.tracer, contents, cell_source(name, var)))
        return tuple(values)

    # ----- calls and control flow ---------------------------------------------------------------
    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return dispatch_call(self, fn, args, kwargs)

    def truth(self, value: Any) -> bool:
        if isinstance(value, ArrayProxy):
            raise GraphBreak("branching on array data (data-dependent control flow): "
                             "use np.where, or keep the condition on shapes and Python values")
        if isinstance(value, ObjectProxy):
            return bool(value._ac_value)
        if isinstance(value, sympy.Basic):
            raise GraphBreak(f"branching on a data-dependent size ({value}); sizes produced by "
                             "boolean masks or nonzero() are only known at run time")
        return bool(value)

    # ----- structured control flow (see rewrite/structured.py) ---------------------------------
    def state(self, *thunks: Callable[[], Any]) -> tuple:
        """Current values of a statement's state variables (unbound ones as ``Undefined``)."""
        return read_state(*thunks)

    def for_stmt(self, iterable: Any, body: Callable[[Any], None], get_state: Any, set_state: Any,
                 names: tuple, extra_test: Callable[[], Any] | None) -> None:
        """A ``for`` statement: unrolled in Python when short and static, else a loop region."""
        region = self._loop_region_plan(iterable)
        if region is None and isinstance(iterable, range):
            # short and static: unroll, unless the unrolled graph grows past the node budget
            init = get_state() if get_state is not None else ()
            graph, effects = self.tracer.graph, len(self.tracer.side_effects)
            keep = {id(n) for n in graph.nodes}
            try:
                return self._unroll(iterable, body, extra_test, len(keep))
            except _OverBudget:
                graph.rollback(keep)
                del self.tracer.side_effects[effects:]
                if set_state is not None:
                    set_state(init)
                region = ((iterable.start, iterable.stop, iterable.step), (lambda i: i), True)
        if region is not None:
            bounds, item, static = region
            init = get_state() if get_state is not None else ()
            try:
                return for_region(self, bounds, item, body, get_state, set_state, names, extra_test)
            except GraphBreak as error:
                if not static:
                    raise
                get_logger("graph_breaks").debug("loop region failed (%s); unrolling", error)
                if set_state is not None:
                    set_state(init)  # fall back to running the loop in Python
        for item in self.iterate(iterable):
            if extra_test is not None and not self.truth(extra_test()):
                break
            body(item)

    def _unroll(self, iterable: range, body: Callable[[Any], None],
                extra_test: Callable[[], Any] | None, start_size: int) -> None:
        budget = config.unroll_node_budget
        graph = self.tracer.graph
        for item in iterable:
            if extra_test is not None and not self.truth(extra_test()):
                break
            body(item)
            if len(graph.nodes) - start_size > budget:
                raise _OverBudget()

    def _loop_region_plan(self, iterable: Any):
        """``(bounds, item_fn, static)`` when the loop should be a region, else None."""
        limit = self.tracer.unroll_limit
        if isinstance(iterable, SymRange):
            return (iterable.start, iterable.stop, iterable.step), (lambda i: i), False
        if isinstance(iterable, range) and len(iterable) > limit:
            return (iterable.start, iterable.stop, iterable.step), (lambda i: i), True
        if isinstance(iterable, ArrayProxy) and iterable.ndim > 0:
            rows = iterable.shape[0]
            if not isinstance(rows, int) or rows > limit:
                if not isinstance(rows, int):
                    raise GraphBreak("iterating over an array whose length depends on the data")
                return (0, rows, 1), (lambda i: iterable[i]), True
        return None

    def while_stmt(self, test: Callable[[], Any], body: Callable[[], None], get_state: Any,
                   set_state: Any, names: tuple, extra_test: Callable[[], Any] | None) -> None:
        """A ``while`` statement: in Python while its condition is static; from the first
        condition on array data, the rest of the loop is a while region."""
        key = test.__code__
        while True:
            if extra_test is not None:
                go = extra_test()
                if self._is_traced(go):
                    return while_region(self, test, body, get_state, set_state, names, extra_test)
                if not go:
                    break
            before = len(self.tracer.graph.nodes)
            condition = test()
            if self._is_traced(condition):
                return while_region(self, test, body, get_state, set_state, names, extra_test)
            if not self.truth(condition):
                break
            body()
            self.tracer.count_loop_iteration(key, len(self.tracer.graph.nodes) != before)

    def if_stmt(self, condition: Any, true_fn: Callable[[], None], false_fn: Any,
                get_state: Any, set_state: Any, names: tuple) -> None:
        """An ``if`` statement: decided at capture when static, a branch region on array data."""
        if self._is_traced(condition):
            if_region(self, condition, true_fn, false_fn, get_state, set_state, names)
        elif self.truth(condition):
            true_fn()
        elif false_fn is not None:
            false_fn()

    @staticmethod
    def _is_traced(value: Any) -> bool:
        if isinstance(value, ArrayProxy):
            if value.ndim != 0:
                raise GraphBreak("the truth value of an array with more than one element is "
                                 "ambiguous (use a.any() or a.all())")
            return True
        return False

    def loop_test(self, value: Any) -> bool:
        caller = sys._getframe(1)
        key = (caller.f_code, caller.f_lineno)
        before = self._loop_marks.get(key, len(self.tracer.graph.nodes))
        now = len(self.tracer.graph.nodes)
        self.tracer.count_loop_iteration(key, now != before)
        self._loop_marks[key] = now
        return self.truth(value)

    @property
    def _loop_marks(self) -> dict:
        marks = self.__dict__.get("_marks")
        if marks is None:
            marks = self.__dict__["_marks"] = {}
        return marks

    def iterate(self, iterable: Any) -> Iterator[Any]:
        if isinstance(iterable, ArrayProxy):
            return iter(iterable)
        if isinstance(iterable, ObjectProxy):
            iterable = iterable._ac_value
        if inspect.isgenerator(iterable) and not is_generated(iterable.gi_code):
            raise GraphBreak("iterating over a generator created outside the compiled code")
        return self.tracer.unrolled(iterable)

    def and_(self, *thunks: Callable[[], Any]) -> Any:
        return self._short_circuit(thunks, stop_when=False)

    def or_(self, *thunks: Callable[[], Any]) -> Any:
        return self._short_circuit(thunks, stop_when=True)

    def _short_circuit(self, thunks: tuple, stop_when: bool) -> Any:
        """``and``/``or`` with Python's semantics; once an operand is array data (a 0-d traced
        value), the rest is evaluated too and combined with ``np.where`` (a select)."""
        value = None
        for index, thunk in enumerate(thunks):
            value = thunk()
            if self._is_traced(value):
                rest = self._short_circuit(thunks[index + 1:], stop_when) if index + 1 < len(thunks) else value
                if rest is value:
                    return value
                test = self.tracer.call_op("astype", (value, np.dtype(bool)), {})
                chosen = (value, rest) if stop_when else (rest, value)
                return self.tracer.call_op("where", (test, *chosen), {})
            if bool(value) == stop_when:
                return value
        return value

    def not_(self, value: Any) -> Any:
        if self._is_traced(value):
            return self.tracer.call_op("logical_not", (value,), {})
        return not self.truth(value)

    def ifexp(self, test: Any, body: Callable[[], Any], orelse: Callable[[], Any]) -> Any:
        return body() if self.truth(test) else orelse()

    @staticmethod
    def _unwrap(value: Any) -> Any:
        return value._ac_value if isinstance(value, ObjectProxy) else value

    def is_(self, left: Any, right: Any) -> bool:
        return self._unwrap(left) is self._unwrap(right)

    def is_not(self, left: Any, right: Any) -> bool:
        return self._unwrap(left) is not self._unwrap(right)

    def unsupported(self, what: str) -> None:
        raise GraphBreak(f"{what} is not supported inside compiled code; move it out of the "
                         "compiled function or call it from an uncompiled helper")
