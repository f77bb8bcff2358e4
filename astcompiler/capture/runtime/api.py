"""The runtime that graph-building code calls (``__ac`` in the rewritten source).

Small on purpose: loading free names (with sources), calls, truth of conditions, boolean
operators, identity, iteration, and explicit breaks. Everything else is plain Python running on
proxies.
"""

from __future__ import annotations

import builtins
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import sympy

from ...exc import GraphBreak
from ...config import config
from ...logs import get_logger
from ...graph import TensorMeta
from ...ops import REGISTRY
from ...rewrite import is_generated, rewrite_function
from ...source.origins import current_origin
from .calls import dispatch_call
from ..lifting import ObjectProxy, lift, lifted_source, real_object
from ..objects import identical
from ..proxy import ArrayProxy
from ..signatures import signature_of
from .regions import SymRange, choice_region, for_region, if_region, while_region
from ..sources import GLOBALS_VAR, Source, cell_source, global_source
from ..state import HANDLERS
from ..tracer import Tracer


ROOT_VAR = "___fn"  # the compiled function itself, in guard and run code


class _OverBudget(Exception):
    """Unrolling a loop made the graph grow past ``config.unroll_node_budget``."""


ARRAY_NODE_WEIGHT = 8  # an op making a 2-D or larger array: a loop nest in generated code


def unrolled_size(nodes: list) -> int:
    """What ``nodes`` (added by unrolled iterations) weigh against ``config.unroll_node_budget``:
    one per node, ``ARRAY_NODE_WEIGHT`` per node that makes an array of two or more dimensions
    (each copy is a loop nest numba compiles again: unrolling folds nothing there; vertical
    diffusion's 28 column sweeps took 16 s to compile unrolled, 1.6 s as a region), plus the ops
    of region subgraphs, so copies of an inner region count in full. Vector ops stay at one:
    unrolled, pointwise chains fuse across iterations (one kernel for several trips); a loop
    whose trips call ops that fuse with nothing is a region instead (``fuses_nothing``)."""
    size = 0
    for node in nodes:
        meta = node.meta
        size += ARRAY_NODE_WEIGHT if meta is not None and meta.ndim > 1 else 1
        if node.op == "region":
            size += sum(g.op_count() for g in node.info.subgraphs.values())
    return size


def fuses_nothing(nodes: list) -> bool:
    """An unrolled iteration (``nodes``) called an op that fuses with no kernel: a BLAS/LAPACK
    call (``OpDef.threaded``) or another extern op making an array. Unrolled, every copy is one
    more call from the wrapper per trip and nothing fuses across trips; as a loop region the
    loop runs as compiled code (power iteration: 51 copies of its kernels ran at 0.5x NumPy, the
    region at 2x; ten ``linalg.solve`` steps: 1.0x unrolled, 1.5x as a region)."""
    for node in nodes:
        if node.op == "region":
            if any(fuses_nothing(list(g.nodes)) for g in node.info.subgraphs.values()):
                return True
            continue
        op = REGISTRY.ops.get(node.target) if node.op == "call" else None
        if op is not None and (op.threaded or op.kind == "extern" and node.meta is not None
                               and node.meta.ndim > 0):
            return True
    return False


def holds_loop(body: Callable[..., Any]) -> bool:
    """The rewritten loop body ``body`` holds a loop statement (nested blocks included): the
    outer loop is then better a region than unrolled, whose copies would each hold the inner
    loop (numba compiles every copy; nothing folds)."""
    codes = [getattr(body, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is None:
            continue
        if "for_stmt" in code.co_names or "while_stmt" in code.co_names:
            return True
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return False


class Undefined:
    """A free name that exists nowhere (``local``: a local variable that is not bound): using it
    raises NameError (UnboundLocalError), as Python would."""

    def __init__(self, name: str, local: bool = False) -> None:
        self.name = name
        self.local = local

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        if self.local:
            raise UnboundLocalError(f"cannot access local variable {self.name!r} where it is not "
                                    "associated with a value")
        raise NameError(f"name {self.name!r} is not defined")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # probed by the compiler itself (getattr with a default)
            raise AttributeError(name)
        return self._fail()

    __call__ = __getitem__ = __add__ = __radd__ = __mul__ = __bool__ = _fail
    __rmul__ = __sub__ = __rsub__ = __truediv__ = __iter__ = __len__ = __str__ = _fail


_UNBOUND: dict[str, Undefined] = {}
_SUSPENDING = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
               | inspect.CO_ITERABLE_COROUTINE)  # code whose calls return generators/coroutines


def unbound_local(name: str) -> Undefined:
    """The marker of unbound local ``name``: one per name, so guards on it stay valid."""
    marker = _UNBOUND.get(name)
    if marker is None:
        marker = _UNBOUND.setdefault(name, Undefined(name, local=True))
    return marker


def is_unbound(value: Any) -> bool:
    """``value`` marks an unbound local variable (the pieces of a split ``del`` it)."""
    if isinstance(value, ObjectProxy):
        value = object.__getattribute__(value, "_ac_value")
    return isinstance(value, Undefined) and value.local


def read_state(*thunks: Callable[[], Any]) -> tuple:
    """The values ``thunks`` read; a variable that is not bound becomes an ``Undefined``."""
    values = []
    for thunk in thunks:
        try:
            values.append(thunk())
        except NameError as error:
            values.append(unbound_local(getattr(error, "name", None) or "?"))
    return tuple(values)


HANDLERS[is_unbound] = lambda runtime, value: is_unbound(value)


@dataclass
class Frame:
    """One (possibly inlined) user function being captured."""

    fn: types.FunctionType
    globals_var: str
    module: str | None
    cells: dict[str, tuple[str, Any]] = field(default_factory=dict)  # name -> (var, cell)


def _bounded(kind: str) -> Iterator[int]:
    """Counts the iterations of one loop run in Python at capture: past
    ``config.static_loop_limit`` the loop is a graph break (it then runs as plain Python), so
    capture never spins on a loop whose end it cannot see."""
    limit = config.static_loop_limit
    count = 0
    while True:
        if count >= limit:
            raise GraphBreak(f"{kind} loop still running after config.static_loop_limit "
                             f"({limit}) iterations at capture: it runs in Python")
        yield count
        count += 1


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
        if not self.frames:
            self._guard_root(fn)
        frame = self._frame_for(fn)
        self.frames.append(frame)
        try:
            return rewritten.factory(self)(*args, **kwargs)
        finally:
            self.frames.pop()

    def _guard_root(self, fn: types.FunctionType) -> None:
        """The compiled function's own defaults: the guard and run functions carry a copy of
        them, so a reassigned ``__defaults__``/``__kwdefaults__`` must miss the cache."""
        if fn.__defaults__ is None and fn.__kwdefaults__ is None:
            return
        self.namespace[ROOT_VAR] = fn
        root = Source(fn.__qualname__, ROOT_VAR)
        if fn.__defaults__ is not None:
            self.tracer.guards.add("id", root.attr("__defaults__"), fn.__defaults__)
        if fn.__kwdefaults__ is not None:  # mutated in place, the copies see it (same dict)
            self.tracer.guards.add("id", root.attr("__kwdefaults__"), fn.__kwdefaults__)

    def inline(self, fn: types.FunctionType, args: tuple, kwargs: dict) -> Any:
        """Capture a call to a user function by rewriting and running its body."""
        if fn.__code__.co_flags & _SUSPENDING:  # its body runs later, one step per next()
            raise GraphBreak(f"calling generator or coroutine function {fn.__qualname__}: "
                             "it runs in Python")
        source = self.guard_function(fn)
        bound = self.bind_call(fn, source, args, kwargs)
        try:
            return self.run_function(fn, bound.args, bound.kwargs)
        except GraphBreak as error:  # remember where it broke: the split compiles the callee
            error.__dict__.setdefault("inlined", []).append(fn)
            raise

    def guard_function(self, fn: types.FunctionType) -> Source | None:
        """Guard what a call to ``fn`` relies on beyond its identity: its ``__code__`` and its
        ``__defaults__`` tuple (both assignable). Returns the source ``fn`` was read from (its
        identity is guarded there), or None for a function made inside the compiled code."""
        guards = self.tracer.guards
        source = guards.identity_source(fn)
        if source is None:
            return None
        guards.add("id", source.attr("__code__"), fn.__code__)
        if fn.__defaults__ is not None:
            guards.add("id", source.attr("__defaults__"), fn.__defaults__)
        return source

    def bind_call(self, fn: types.FunctionType, source: Source | None, args: tuple,
                  kwargs: dict) -> inspect.BoundArguments:
        """Bind a call like Python: the defaults are ``fn``'s own, read from ``source`` (arrays
        and containers lifted with their guards, keyword-only defaults guarded by value)."""
        sig = signature_of(fn)
        bound = sig.bind(*args, **kwargs)
        positional = [p.name for p in sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        defaults = fn.__defaults__ or ()
        for name, param in sig.parameters.items():
            if name in bound.arguments:
                continue
            if param.kind is param.VAR_POSITIONAL:
                bound.arguments[name] = ()
            elif param.kind is param.VAR_KEYWORD:
                bound.arguments[name] = {}
            elif param.kind is param.KEYWORD_ONLY:
                value = (fn.__kwdefaults__ or {})[name]
                bound.arguments[name] = value if source is None else lift(
                    self.tracer, value, source.attr("__kwdefaults__").item(name))
            else:
                index = positional.index(name) - (len(positional) - len(defaults))
                value = defaults[index]
                # the __defaults__ tuple's identity is guarded: immutable values are covered
                immutable = type(value) in (bool, int, float, complex, str, bytes, type(None))
                bound.arguments[name] = value if source is None or immutable else lift(
                    self.tracer, value, source.attr("__defaults__").item(index))
        return bound

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
            if name not in builtin_values:
                values.append(Undefined(name))
                continue
            # ``builtins.abs = ...`` rebinds it for every module: guarded by identity too
            self.tracer.guards.add("id", Source(f"builtins.{name}", f"___builtins.{name}",
                                                (("___builtins", builtins),)),
                                   builtin_values[name])
            values.append(builtin_values[name])
        return tuple(values)

    def load_closure(self, *names: str) -> tuple:
        frame = self.frames[-1]
        values = []
        for name in names:
            var, cell = frame.cells[name]
            try:
                contents = cell.cell_contents
            except ValueError:  # not bound yet: guard that it still is not
                self.tracer.guards.add("empty_cell", Source(f"C[{name!r}]", var))
                values.append(Undefined(name))
                continue
            if name.startswith("___"):  # the compiler's own helpers (split functions): fixed
                values.append(contents)
                continue
            if name == "__class__":  # zero-argument super(): the method's own class, as is
                self.tracer.guards.add("id", cell_source(name, var), contents)
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
            return bool(value)  # the class's __bool__/__len__ (capture/objects.py)
        if isinstance(value, sympy.Basic):
            raise GraphBreak(f"branching on a data-dependent size ({value}); sizes produced by "
                             "boolean masks or nonzero() are only known at run time")
        return bool(value)

    # ----- structured control flow (see rewrite/structured.py) ---------------------------------
    def state(self, *thunks: Callable[[], Any]) -> tuple:
        """Current values of a statement's state variables (unbound ones as ``Undefined``)."""
        return read_state(*thunks)

    def for_stmt(self, iterable: Any, body: Callable[[Any], None], get_state: Any, set_state: Any,
                 names: tuple, extra_test: Callable[[], Any] | None, dead: tuple = (),
                 unused: tuple = ()) -> None:
        """A ``for`` statement: unrolled in Python when short and static (and its body holds no
        loop), else a loop region. ``dead``: state variables nothing reads after the loop;
        ``unused``: those of them the body never reads on entry either (rewrite/liveness.py)."""
        region = self._loop_region_plan(iterable)
        if region is None and isinstance(iterable, range) and len(iterable) > 1 \
                and holds_loop(body):  # unrolled, each iteration would copy the inner loop
            region = ((iterable.start, iterable.stop, iterable.step), (lambda i: i), True)
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
                return for_region(self, bounds, item, body, get_state, set_state, names, extra_test,
                                  dead, unused)
            except GraphBreak as error:
                if not static:
                    raise
                get_logger("graph_breaks").debug("loop region failed (%s); unrolling", error)
                if set_state is not None:
                    set_state(init)  # fall back to running the loop in Python
        for item, _ in zip(self.iterate(iterable), _bounded("for")):
            if extra_test is not None and not self.truth(extra_test()):
                break
            body(item)

    def _unroll(self, iterable: range, body: Callable[[Any], None],
                extra_test: Callable[[], Any] | None, start_size: int) -> None:
        budget = config.unroll_node_budget
        graph = self.tracer.graph
        size, seen = 0, start_size
        for item in iterable:
            if extra_test is not None and not self.truth(extra_test()):
                break
            body(item)
            added = graph.nodes[seen:]
            size += unrolled_size(added)
            seen = len(graph.nodes)
            if size > budget or len(iterable) > 1 and fuses_nothing(added):
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
            if not isinstance(rows, int):  # a symbolic length: a loop over range(len(data))
                stop = self.tracer.sym_value(rows.expr)  # a graph value, as range() makes it
                return (0, stop, 1), (lambda i: iterable[i]), False
            if rows > limit:
                return (0, rows, 1), (lambda i: iterable[i]), True
        return None

    def while_stmt(self, test: Callable[[], Any], body: Callable[[], None], get_state: Any,
                   set_state: Any, names: tuple, extra_test: Callable[[], Any] | None,
                   dead: tuple = (), unused: tuple = ()) -> None:
        """A ``while`` statement: in Python while its condition is static; from the first
        condition on array data, the rest of the loop is a while region, and so it is after the
        first iteration when the body holds a loop. ``dead``, ``unused``: as for ``for_stmt``."""
        key = test  # this execution of the statement (a new test function each time)
        # unrolled, each iteration would copy the inner loop: after the first iteration (which
        # settles the variables' types) the rest is a while region with a run-time test
        peel = set_state is not None and holds_loop(body)
        for _ in _bounded("while"):
            if extra_test is not None:
                go = extra_test()
                if self._is_traced(go):
                    return while_region(self, test, body, get_state, set_state, names, extra_test,
                                        dead, unused)
                if not go:
                    break
            before = len(self.tracer.graph.nodes)
            condition = test()
            if self._is_traced(condition):
                return while_region(self, test, body, get_state, set_state, names, extra_test,
                                    dead, unused)
            if not self.truth(condition):
                break
            body()
            self.tracer.count_loop_iteration(key, len(self.tracer.graph.nodes) != before)
            if peel:
                peel, state = False, get_state()
                try:
                    return while_region(self, test, body, get_state, set_state, names,
                                        extra_test, dead, unused)
                except GraphBreak as error:
                    get_logger("graph_breaks").debug("while region failed (%s); unrolling",
                                                     error)
                    set_state(state)  # the rest of the loop runs in Python

    def if_stmt(self, condition: Any, true_fn: Callable[[], None], false_fn: Any,
                get_state: Any, set_state: Any, names: tuple, dead: tuple = ()) -> None:
        """An ``if`` statement: decided at capture when static, a branch region on array data.
        ``dead``: state variables nothing reads after it (rewrite/liveness.py)."""
        if self._is_traced(condition):
            if_region(self, condition, true_fn, false_fn, get_state, set_state, names, dead)
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
            iterable = self._iterate_object(iterable)
        if inspect.isgenerator(iterable) and not is_generated(iterable.gi_code):
            raise GraphBreak("iterating over a generator created outside the compiled code")
        return self.tracer.unrolled(iterable)

    def _iterate_object(self, proxy: ObjectProxy) -> Any:
        """An outside object's ``__iter__`` written in Python is inlined (what it reads is
        guarded); immutable objects, enum classes and astcompiler's own containers iterate as
        they are; any other outside iterable could change unseen: a graph break."""
        value = proxy._ac_value
        method = getattr(type(value), "__iter__", None)
        if isinstance(method, types.FunctionType) \
                and not (method.__module__ or "").startswith("astcompiler"):
            return self.inline(method, (proxy,), {})
        if proxy._ac_source is None or isinstance(value, (frozenset, range, bytes, str)) \
                or isinstance(value, type) \
                or (type(value).__module__ or "").startswith("astcompiler"):
            return value
        raise GraphBreak(f"iterating over a {type(value).__qualname__} from outside the compiled "
                         "code (its contents are not guarded)")

    def and_(self, *thunks: Callable[[], Any]) -> Any:
        return self._short_circuit(thunks, stop_when=False)

    def or_(self, *thunks: Callable[[], Any]) -> Any:
        return self._short_circuit(thunks, stop_when=True)

    def _short_circuit(self, thunks: tuple, stop_when: bool) -> Any:
        """``and``/``or`` as Python: each operand is evaluated only when the ones before it did
        not decide, and the result is the deciding operand itself. A Python value decides at
        capture (its truth is guarded as any other); array data (a traced scalar) decides at run
        time: the rest becomes one side of a branch region, never evaluated eagerly."""
        for index, thunk in enumerate(thunks):
            value = thunk()
            if index + 1 == len(thunks):
                return value  # the last operand is the result, its truth is not asked
            if self._is_traced(value):
                rest = thunks[index + 1:]
                undecided = lambda: self._short_circuit(rest, stop_when)  # noqa: E731
                decided = lambda: value  # noqa: E731
                sides = (decided, undecided) if stop_when else (undecided, decided)
                what = "`a or b`" if stop_when else "`a and b`"
                return choice_region(self, self._test(value), *sides, what)
            if self.truth(value) == stop_when:
                return value
        return None  # (no operands: not produced by the rewrite)

    def and_test(self, *thunks: Callable[[], Any]) -> Any:
        return self._test_short_circuit(thunks, stop_when=False)

    def or_test(self, *thunks: Callable[[], Any]) -> Any:
        return self._test_short_circuit(thunks, stop_when=True)

    def _test_short_circuit(self, thunks: tuple, stop_when: bool) -> Any:
        """The truth of ``a and b``/``a or b`` where only the truth is used (the test of an `if`
        or a `while`, the operand of `not`): as lazy as Python. The result is a Python bool, or a
        traced NumPy bool on array data (a branch region of booleans, so operands of different
        types may meet)."""
        value = thunks[0]()
        if not self._is_traced(value):
            truth = self.truth(value)
            if len(thunks) == 1 or truth == stop_when:
                return truth
            return self._test_short_circuit(thunks[1:], stop_when)
        test = self._test(value)
        if len(thunks) == 1:
            return test

        def rest() -> Any:
            truth = self._test_short_circuit(thunks[1:], stop_when)
            return truth if isinstance(truth, ArrayProxy) else np.bool_(truth)
        sides = (lambda: test, rest) if stop_when else (rest, lambda: test)
        return choice_region(self, test, *sides, "a test")

    def _test(self, value: ArrayProxy) -> ArrayProxy:
        """The truth of a traced scalar as a NumPy bool (NaN is true, as in Python)."""
        if value.dtype == np.bool_ and value.is_scalar and value.node.meta is not None \
                and value.node.meta.pytype is None:
            return value
        test = self.tracer.call_op("astype", (value, np.dtype(bool)), {})
        return test if test.is_scalar else test[()]

    def not_(self, value: Any) -> Any:
        """``not value``: a Python bool, also of array data (a node typed as a Python bool)."""
        if self._is_traced(value):
            test = self._test(value)
            meta = TensorMeta((), np.dtype(bool), True, bool)
            node = self.tracer.graph.call("logical_not", (self.tracer.localize(test.node),), {},
                                          meta, current_origin())
            return ArrayProxy(self.tracer, node, not bool(value.example))
        return not self.truth(value)

    def ifexp(self, test: Any, body: Callable[[], Any], orelse: Callable[[], Any]) -> Any:
        """``body() if test else orelse()``; on array data a branch region (one side runs)."""
        if self._is_traced(test):
            return choice_region(self, self._test(test), body, orelse, "`a if test else b`")
        return body() if self.truth(test) else orelse()

    @staticmethod
    def _unwrap(value: Any) -> Any:
        return value._ac_value if isinstance(value, ObjectProxy) else value

    def is_(self, left: Any, right: Any) -> Any:
        traced = self._traced_bool_is(left, right)
        if traced is not None:
            return traced
        # identity of the real objects; a proxy's identity, when it decided, is guarded
        same = identical(self._input_value(left), self._input_value(right))
        if left is not right:
            self._guard_identity(left, right, same)
        return same

    def is_not(self, left: Any, right: Any) -> Any:
        return self.not_(self.is_(left, right))

    def _traced_bool_is(self, left: Any, right: Any) -> Any:
        """``b is True`` of a traced Python bool (``bool(x[i])``, ``not x[i]``) is ``b`` itself,
        ``b is False`` is ``not b``, and it is never another constant. A traced NumPy bool
        scalar (``(x > 2)[0]``) is one of NumPy's two singletons: ``v is np.True_`` is its
        truth, ``v is np.False_`` its negation, never another object. None for other operands."""
        for traced, other in ((left, right), (right, left)):
            meta = traced.node.meta if isinstance(traced, ArrayProxy) else None
            if meta is None:
                continue
            if meta.pytype is bool and not isinstance(other, ArrayProxy):
                self.tracer.refuse_ambiguous(traced)
                if other is True or other is False:
                    return traced if other else self.not_(traced)
                return False
            singleton = self._input_value(other)  # np.False_ read from a module: an input
            if meta.pytype is None and meta.scalar and np.dtype(meta.dtype) == np.bool_ \
                    and (singleton is np.True_ or singleton is np.False_) \
                    and self._input_value(traced) is traced:
                self.tracer.refuse_ambiguous(traced)
                return self.not_(traced) if singleton is np.False_ \
                    else self.not_(self.not_(traced))
        return None

    def _input_value(self, value: Any) -> Any:
        """The outside object an input's stand-in holds (``value`` itself for anything else)."""
        if isinstance(value, ArrayProxy):
            return next((v for node, _, v in self.tracer.inputs if node is value.node), value)
        return real_object(self.tracer, value)

    def _guard_identity(self, left: Any, right: Any, same: bool) -> None:
        """``a is b`` on two stand-ins of outside objects: guard the answer (one object read
        twice is usually one stand-in already, with its own alias guard)."""
        first, second = lifted_source(self.tracer, left), lifted_source(self.tracer, right)
        if first is not None and second is not None and first.expr != second.expr:
            self.tracer.guards.add("alias" if same else "distinct", first, second)

    def unsupported(self, what: str) -> None:
        raise GraphBreak(f"{what} is not supported inside compiled code; move it out of the "
                         "compiled function or call it from an uncompiled helper")
