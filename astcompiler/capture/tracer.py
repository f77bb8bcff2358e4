"""The ``Tracer``: graph, guards and shape environment of one capture.

It turns op calls on proxies into graph nodes (running each op's NumPy reference on example
values to learn the result), lifts outside values (arguments, globals, closure cells) into
proxies or guarded constants, and counts unrolled loop iterations.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..exc import GraphBreak, Unsupported
from ..graph import Graph, Node, TensorMeta, map_nodes
from ..graph.ir import map_leaves
from ..ops import REGISTRY, OpDef
from ..source.origins import current_origin
from .fp_effects import may_set_fp_flags, user_place
from .guard_facts import GuardSet
from .proxy import ArrayProxy
from .sizes.data_lengths import (define_lengths, has_data_bounds, read_at_run_time,
                                 readable_length)
from .sizes.shape_env import ShapeEnv
from .state import compiling_scope, is_compiling  # noqa: F401 (re-exported)
from .sources import Source
from .type_tags import TypeTag, result_tag


def _map_proxies(value: Any, fn: Callable[[ArrayProxy], Any]) -> Any:
    return map_leaves(value, ArrayProxy, fn)


def contains_proxy(value: Any) -> bool:
    found = []
    _map_proxies(value, found.append)
    return bool(found)


_PYTHON_SCALARS = (bool, int, float, complex)


def python_meta(value: Any) -> TensorMeta:
    """Meta of a traced Python scalar (the loop index, a carried counter): NEP 50 weak."""
    return TensorMeta((), np.asarray(type(value)(0)).dtype, True, type(value))


@contextlib.contextmanager
def quiet_examples() -> Iterator[None]:
    """Computing on example values never warns: the compiled run warns (or raises, under the
    caller's ``np.errstate``) as NumPy does when it computes the real values, and a side of a
    branch that is not taken never does."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _zero_example(proxy: ArrayProxy) -> Any:
    """A zero of ``proxy``'s type, for scalars (a region's stand-in values); arrays as they are,
    except an empty one, zeros with its empty sizes made 1 (the traced row of a CSR matrix
    was empty: ``vals[j]`` in a loop over it is typed on a stand-in element)."""
    example = proxy.example
    if isinstance(example, np.generic):
        return example.dtype.type(0)
    if type(example) in _PYTHON_SCALARS:
        return type(example)(0)
    if isinstance(example, np.ndarray) and (example.ndim == 0 or example.size == 0):
        return np.zeros(tuple(max(d, 1) for d in example.shape), example.dtype)
    return example


def _all_python(args: Any, kwargs: Any) -> bool:
    """Only Python scalars (traced or constant) among the operands: Python arithmetic."""
    proxies: list = []
    rebuilt = _map_proxies((args, kwargs), lambda p: proxies.append(p) or 0)
    constants: list = []
    map_nodes(rebuilt, lambda n: n)
    _collect_constants(rebuilt, constants)
    return bool(proxies) and all(p.node.meta is not None and p.node.meta.pytype is not None
                                 for p in proxies) \
        and not any(isinstance(c, (np.generic, np.ndarray)) for c in constants)


def _collect_constants(value: Any, out: list) -> None:
    if isinstance(value, (tuple, list)):
        for v in value:
            _collect_constants(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _collect_constants(v, out)
    else:
        out.append(value)


class Scope:
    """One graph under construction: the root, or a region's subgraph with its captured inputs."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.captured: dict[Node, Node] = {}  # node of the enclosing graph -> placeholder here


def meta_of(example: Any) -> TensorMeta | None:
    if isinstance(example, np.ndarray):
        return TensorMeta(tuple(example.shape), example.dtype, False)
    if isinstance(example, np.generic):
        return TensorMeta((), example.dtype, True)
    return None


class Tracer:
    """State of one capture."""

    def __init__(self, unroll_limit: int = 64, policy: Any = None) -> None:
        self.policy = policy
        self.root = Graph()
        self.scopes: list[Scope] = [Scope(self.root)]
        self.guards = GuardSet()
        self.shape_env = ShapeEnv()
        self.unroll_limit = unroll_limit
        self.inputs: list[tuple[Node, Source, Any]] = []  # placeholder, source, real value
        self._by_source: dict[str, Any] = {}
        self._loop_counts: dict[Any, int] = {}
        self.symbol_nodes: dict[Any, tuple[ArrayProxy, int | None]] = {}
        self.side_effects: list[Any] = []  # lifting.SideEffect, in program order
        self.namespace_objects: dict[str, Any] = {}  # objects guard code refers to by name
        self.lifted_objects: dict[int, tuple[Any, Any, Source]] = {}  # id -> (value, lifted, source)
        self.real_objects: dict[int, tuple[Any, Any]] = {}  # id(stand-in) -> (stand-in, value)
        self.node_exprs: dict[Node, Any] = {}  # graph values that are size expressions
        # values whose Python type the data decides (after a loop that may run zero times):
        # node -> (why, whether storing it into an array is still exact)
        self.ambiguous: dict[Node, tuple[str, bool]] = {}
        # those of them whose type a traced bool tells at run time (capture/type_tags.py)
        self.tags: dict[Node, TypeTag] = {}
        # (dimension, bounds...) -> the unbacked length of a slice with bounds read from data
        self.data_lengths: dict[tuple, Any] = {}
        # node -> its traced value, kept while ac.grad captures a function (autodiff/)
        self.proxy_log: dict[Node, ArrayProxy] | None = None

    # ----- graphs and scopes (regions capture into subgraphs) ---------------------------------
    @property
    def graph(self) -> Graph:
        return self.scopes[-1].graph

    @property
    def in_region(self) -> bool:
        return len(self.scopes) > 1

    def localize(self, node: Node, depth: int | None = None) -> Node:
        """``node`` as seen from the scope at ``depth``: nodes of enclosing graphs become inputs
        of the subgraph (recursively through nested regions)."""
        depth = len(self.scopes) - 1 if depth is None else depth
        scope = self.scopes[depth]
        if node.graph is scope.graph:
            return node
        if depth == 0:
            raise AssertionError(f"{node} does not belong to this capture")
        outer = self.localize(node, depth - 1)
        inner = scope.captured.get(outer)
        if inner is None:
            inner = scope.graph.placeholder(f"captured:{outer.name}", outer.meta, outer.name)
            scope.captured[outer] = inner
        return inner

    def push_scope(self) -> "Scope":
        scope = Scope(Graph())
        self.scopes.append(scope)
        return scope

    def pop_scope(self) -> "Scope":
        return self.scopes.pop()

    def proxy_in(self, graph_node: Node, example: Any) -> ArrayProxy:
        return ArrayProxy(self, graph_node, example)

    # ----- symbolic sizes ---------------------------------------------------------------------
    def specialize(self, expr: Any) -> int:
        return self.shape_env.specialize(expr, current_origin(display=False))

    def evaluate_relation(self, relation: Any) -> bool:
        return self.shape_env.evaluate(relation, current_origin(display=False))

    def define_symbol(self, symbol: Any, proxy: ArrayProxy, dim: int | None) -> None:
        """``symbol`` is ``proxy.shape[dim]`` (or the int input ``proxy`` when dim is None)."""
        self.symbol_nodes[symbol] = (proxy, dim)

    def sym_value(self, expr: Any) -> Any:
        """A size expression as a graph value (a Python int computed at run time)."""
        import sympy

        from .sizes.sym_values import build_sym_value
        expr = sympy.sympify(expr)
        if expr.is_Integer:
            return int(expr)
        value = build_sym_value(self, expr)
        if isinstance(value, ArrayProxy):
            self.node_exprs[value.node] = expr
        return value

    def sym_shape(self, shape: tuple) -> tuple:
        """A meta shape as user-visible sizes: ints, or SymInts for symbolic dims."""
        from .sizes.symbolic import SymInt
        return tuple(d if isinstance(d, (int, np.integer)) else SymInt(self, d) for d in shape)

    # ----- inputs --------------------------------------------------------------------------------
    def existing_input(self, source: Source) -> Any:
        return self._by_source.get(source.expr)

    def placeholder(self, source: Source, value: Any, name_hint: str,
                    shape: tuple | None = None) -> ArrayProxy:
        """A graph input for an array (or NumPy scalar) read from ``source``."""
        existing = self._by_source.get(source.expr)
        if existing is not None:
            return existing
        example = np.array(value, copy=True) if isinstance(value, np.ndarray) else value
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            example.flags.writeable = False  # a write into it raises NumPy's own error
        meta = meta_of(example)
        if shape is not None and meta is not None:
            meta = TensorMeta(shape, meta.dtype, meta.scalar)
        node = self.root.placeholder(source.name, meta, name_hint)
        proxy = ArrayProxy(self, node, example)
        self.inputs.append((node, source, value))
        self._by_source[source.expr] = proxy
        return proxy

    def int_input(self, source: Source, value: int, name_hint: str) -> ArrayProxy:
        """A graph input for a dynamic int or float argument (a Python number at run time)."""
        node = self.root.placeholder(source.name, python_meta(value), name_hint)
        proxy = ArrayProxy(self, node, value)
        self.inputs.append((node, source, value))
        self._by_source[source.expr] = proxy
        return proxy

    def constant_array(self, value: np.ndarray) -> ArrayProxy:
        """An array constant (folded at capture): a fresh copy per run, never shared."""
        node = self.graph.call("constant", (value.copy(),), {}, meta_of(value), current_origin())
        return ArrayProxy(self, node, value.copy())

    # ----- ops -----------------------------------------------------------------------------------
    def call_op(self, name: str, args: tuple, kwargs: dict, python: bool = False) -> Any:
        """``python``: a Python operator (``a + b``, ``-a``, ``round(a)``), which has Python's
        semantics when every operand is a Python number; NumPy functions have NumPy's."""
        op = REGISTRY.ops.get(name)
        if op is None:
            raise GraphBreak(f"{name} is not supported by astcompiler yet")
        return self.trace_op(op, args, kwargs, python=python)

    def trace_ufunc(self, ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
        if method == "__call__":
            op = REGISTRY.lookup_callable(ufunc)
            if op is None:
                raise GraphBreak(f"np.{ufunc.__name__} is not supported by astcompiler yet")
            out = kwargs.get("out")
            if isinstance(out, tuple):
                kwargs = {**kwargs, "out": out[0] if len(out) == 1 else out}
            return self.trace_op(op, inputs, kwargs)
        from ..ops.ufunc_methods import lookup_ufunc_method
        op = lookup_ufunc_method(ufunc, method)
        if op is None:
            raise GraphBreak(f"np.{ufunc.__name__}.{method} is not supported by astcompiler yet")
        return self.trace_op(op, (ufunc, *inputs), kwargs)

    def trace_op(self, op: OpDef, args: tuple, kwargs: dict, python: bool = False) -> Any:
        """Record ``op`` applied to ``args``: a node whose meta comes from the NumPy reference
        run on example values. Calls on constants only are folded (except creation ops)."""
        try:
            args, kwargs = op.canonical(tuple(args), dict(kwargs))
        except Exception as error:  # the arguments NumPy would reject: the user's to see
            error.__ac_from_numpy__ = True  # type: ignore[attr-defined]
            raise
        args, kwargs = self._materialize_sizes((args, kwargs))
        typed_by = self._ambiguous_operands(op, args, kwargs, python) if self.ambiguous else None
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            out = out[0] if len(out) == 1 else out
        if op.kind != "creation" and not contains_proxy((args, kwargs)) and out is None:
            return self._fold(op, args, kwargs)
        if op.identity_on_arrays is not None and args and isinstance(args[0], ArrayProxy) \
                and not args[0].is_scalar and out is None \
                and op.identity_on_arrays(args, kwargs):
            return args[0]  # NumPy returns the array itself: ``np.asarray(x) is x``
        if python and out is None and _all_python(args, kwargs):
            scalar = self._python_scalar_op(op, args, kwargs)
            if scalar is not None:
                return scalar
        args = self._lift_array_constants(args)
        kwargs = self._lift_array_constants(kwargs)
        example_args = _map_proxies(args, lambda p: p.example)
        example_kwargs = _map_proxies(kwargs, lambda p: p.example)
        if op.kind == "mutation" and args and isinstance(args[0], ArrayProxy):
            self.guard_writeable(args[0])
        if isinstance(out, ArrayProxy):
            self._check_out(op, out, example_args, example_kwargs)
        try:
            with quiet_examples():
                result = op.impl(*example_args, **example_kwargs)
        except Exception as error:  # NumPy rejects the user's operation: its error, not ours
            if self.in_region:  # ... unless the examples are only a region's stand-ins
                result = self._stand_in_result(op, args, kwargs, error)
            else:
                error.__ac_from_numpy__ = True  # type: ignore[attr-defined]
                raise
        self._guard_weak_ints(op, args, example_args, result)
        origin = current_origin()
        node_args = _map_proxies(args, lambda p: self.localize(p.node))
        node_kwargs = _map_proxies(kwargs, lambda p: self.localize(p.node))
        if python and isinstance(result, np.generic) and _all_python(args, kwargs):
            result = result.item()  # Python scalars in, a Python scalar out (as in eager Python)
        proxy = self._wrap_result(op, node_args, node_kwargs, result, origin)
        if typed_by is not None and isinstance(proxy, ArrayProxy):
            self._tag_result(proxy, *typed_by)
        if isinstance(proxy, ArrayProxy):
            proxy.node.operator = python  # replayed as the operator on NumPy scalars
            if may_set_fp_flags(proxy.node):
                proxy.node.place = user_place()  # its warnings come from the user's line
        if out is not None:
            if not isinstance(out, ArrayProxy):
                raise GraphBreak("out= must be a traced array")
            self._guard_fits(proxy, out)
            self.trace_op(REGISTRY["copy_"], (out, proxy), {})
            return out
        return proxy

    def _stand_in_result(self, op: OpDef, args: tuple, kwargs: dict, error: Exception) -> Any:
        """Inside a region the examples are stand-ins (the first iteration's values, zeros for
        carried state), not what every run sees: an op that fails on them (an index past the end
        of a row the loop never enters, ``int()`` of a NaN stand-in) runs again with zeros for its
        scalar operands, which give the same result type. A failure on those too is a break."""
        zero_args = _map_proxies(args, _zero_example)
        zero_kwargs = _map_proxies(kwargs, _zero_example)
        try:
            with quiet_examples():
                return op.impl(*zero_args, **zero_kwargs)
        except Exception:  # noqa: BLE001
            raise GraphBreak(f"{op.name} fails on the example values inside a compiled loop or "
                             f"branch ({type(error).__name__}: {error}); it runs in Python") from None

    def refuse_ambiguous(self, value: Any) -> None:
        """A graph break if ``value`` holds a proxy whose Python type depends on the data (a
        Python float or a NumPy float, after a loop that may run zero times): only storing it
        into an array is exact (``trace_op`` allows that), every other use observes the type."""
        if self.ambiguous:
            _map_proxies(value, self._refuse_one)

    def _refuse_one(self, proxy: ArrayProxy) -> ArrayProxy:
        mark = self.ambiguous.get(proxy.node)
        if mark is not None:
            raise GraphBreak(mark[0])
        return proxy

    def _ambiguous_operands(self, op: OpDef, args: tuple, kwargs: dict,
                            python: bool) -> tuple[list[TypeTag], type, str] | None:
        """Refuse every ambiguous operand (a graph break) except a value of the right kind
        stored into an array, and a tagged operand of an op ``type_tags.result_tag`` models:
        then (tags, Python type, why) for the result's own tag, or None."""
        store = op.store(args, kwargs) if op.store is not None else None
        stored = store.value_arg if store is not None else None
        tagged = False
        for index, arg in enumerate(args):
            mark = self.ambiguous.get(arg.node) if isinstance(arg, ArrayProxy) else None
            if mark is not None and index == stored and mark[1] \
                    and isinstance(args[0], ArrayProxy) and not args[0].is_scalar:
                continue
            if mark is not None and arg.node in self.tags and stored is None:
                tagged = True
                continue
            self.refuse_ambiguous(arg)
        self.refuse_ambiguous(kwargs)
        if not tagged:
            return None
        typed = result_tag(op, python, args, self.tags)
        if typed is None:
            return None
        why = next(self.ambiguous[a.node][0] for a in args
                   if isinstance(a, ArrayProxy) and a.node in self.tags)
        return typed[0], typed[1], why

    def _tag_result(self, proxy: ArrayProxy, tags: list[TypeTag], pytype: type, why: str) -> None:
        """The result is NumPy's when any tagged operand is; else a Python ``pytype``."""
        flag = tags[0].numpy
        for tag in tags[1:]:
            flag = self.call_op("logical_or", (flag, tag.numpy), {})
        self.tag_value(proxy, flag, pytype, why)

    def tag_value(self, value: ArrayProxy, numpy: ArrayProxy, pytype: type, why: str) -> None:
        """``value`` is NumPy-typed when ``numpy`` is true at run time, else a ``pytype``."""
        self.tags[value.node] = TypeTag(numpy, pytype)
        self.ambiguous[value.node] = (why, value.dtype.kind in "fc")

    def guard_writeable(self, target: ArrayProxy) -> None:
        """A write into ``target`` relies on whether the input it views is writeable: guarded
        (a read-only example makes the write raise NumPy's error at capture)."""
        root = target.example
        while isinstance(getattr(root, "base", None), np.ndarray):
            root = root.base
        if not isinstance(root, np.ndarray):
            return
        for _, source, _ in self.inputs:
            proxy = self._by_source.get(source.expr)
            if isinstance(proxy, ArrayProxy) and proxy.example is root:
                self.guards.add("writeable", source, bool(root.flags.writeable))
                return

    def _check_out(self, op: OpDef, out: ArrayProxy, example_args: tuple,
                   example_kwargs: dict) -> None:
        """``out=``: NumPy's own checks on the examples (writeable, broadcasting to the shape of
        ``out``, casting), so a bad ``out`` raises NumPy's error, as the plain call would."""
        self.guard_writeable(out)
        if op.kind != "pointwise" or not isinstance(out.example, np.ndarray):
            return
        target = out.example if not out.example.flags.writeable else np.empty_like(out.example)
        try:
            with quiet_examples():
                op.impl(*example_args, **example_kwargs, out=target)
        except Exception as error:  # the user's out= is wrong: NumPy's error, not ours
            error.__ac_from_numpy__ = True  # type: ignore[attr-defined]
            raise

    def _guard_fits(self, value: Any, out: ArrayProxy) -> None:
        """The result fits ``out`` as NumPy requires (each size 1 or equal to out's): with
        dynamic sizes that is a guarded relation, so a later call with other sizes recompiles
        and NumPy's own error comes out of the capture."""
        import sympy
        if not isinstance(value, ArrayProxy) or value.node.meta is None or out.node.meta is None:
            return
        pairs = zip(reversed(value.node.meta.shape), reversed(out.node.meta.shape))
        for size, target in pairs:
            static = isinstance(size, (int, np.integer)) and isinstance(target, (int, np.integer))
            if size == 1 or static:  # (static sizes: NumPy checked them on the examples)
                continue
            self.evaluate_relation(sympy.Eq(sympy.sympify(size), sympy.sympify(target)))

    def _guard_weak_ints(self, op: OpDef, args: tuple, examples: tuple, result: Any) -> None:
        """A dynamic Python int that meets a narrow integer array (``int8_x + n``) must fit its
        dtype, or NumPy raises OverflowError (NEP 50): the range is a guard on the int."""
        if op.kind not in ("pointwise", "mutation") or op.comparison:
            return
        target = examples[0] if op.kind == "mutation" and examples else result
        dtype = getattr(target, "dtype", None)
        if dtype is None or dtype.kind not in "iu" or (dtype.kind == "i" and dtype.itemsize == 8):
            return
        import sympy
        info = np.iinfo(dtype)
        for arg in args:
            expr = self.node_exprs.get(arg.node) if isinstance(arg, ArrayProxy) else None
            if expr is not None and arg.node.meta is not None and arg.node.meta.pytype is int:
                self.evaluate_relation(sympy.Ge(expr, int(info.min)))
                self.evaluate_relation(sympy.Le(expr, int(info.max)))

    def _python_scalar_op(self, op: OpDef, args: tuple, kwargs: dict) -> Any:
        """A Python operator on Python numbers: Python's result type and value (ops/python_scalars).
        None when the op has no Python meaning here (NumPy's rules then apply)."""
        from ..ops.python_scalars import PYTHON_OPS, python_result_type
        fn = PYTHON_OPS.get(op.name)
        if fn is None or kwargs:
            return None
        kinds = tuple(a.node.meta.pytype if isinstance(a, ArrayProxy) else type(a) for a in args)
        if not all(k in (bool, int, float, complex) for k in kinds):
            return None  # a str or a container operand: not arithmetic on numbers
        constants = tuple(None if isinstance(a, ArrayProxy) else a for a in args)
        kind = python_result_type(op.name, kinds, constants)
        if kind is None:
            raise GraphBreak(f"Python {op.name} of {', '.join(k.__name__ for k in kinds)} values: "
                             "its result type depends on the values (e.g. a negative float to a "
                             "fractional power is complex)")
        examples = [a.example if isinstance(a, ArrayProxy) else a for a in args]
        try:
            example = fn(*examples)
        except Exception as error:  # noqa: BLE001
            if not self.in_region:  # real values: Python raises this for the user's code
                error.__ac_from_numpy__ = True  # type: ignore[attr-defined]
                raise
            example = kind(0)  # a region's placeholders are not real values
        if type(example) is not kind:
            if not self.in_region:
                raise GraphBreak(f"Python {op.name} gave a {type(example).__name__}, "
                                 f"expected {kind.__name__}")
            example = kind(0)
        node_args = _map_proxies(tuple(args), lambda p: self.localize(p.node))
        meta = TensorMeta((), np.asarray(kind(0)).dtype, True, kind)
        node = self.graph.call(op.name, node_args, {}, meta, current_origin())
        return ArrayProxy(self, node, example)

    def _wrap_result(self, op: OpDef, node_args: tuple, node_kwargs: dict, result: Any,
                     origin: str | None) -> Any:
        if result is None:
            if not op.side_effects:
                raise GraphBreak(f"{op.name} returned None")
            self.graph.call(op.name, node_args, node_kwargs, None, origin)
            return None
        if isinstance(result, tuple) and all(isinstance(r, (np.ndarray, np.generic)) for r in result):
            node = self.graph.call(op.name, node_args, node_kwargs, None, origin)
            items = [ArrayProxy(self, self.graph.call("getitem", (node, i), {}, meta_of(r), origin), r)
                     for i, r in enumerate(result)]
            return tuple(items) if type(result) is tuple else type(result)(*items)  # named tuples
        meta = self._symbolic_meta(op, node_args, node_kwargs, meta_of(result))
        if meta is None and type(result) in _PYTHON_SCALARS:
            meta = python_meta(result)
        if meta is None:
            raise GraphBreak(f"np.{op.name} returned a Python {type(result).__name__}, "
                             "which depends on the data")
        if meta.dtype.kind in "OUSV":
            raise GraphBreak(f"arrays of dtype {meta.dtype} are not supported")
        node = self.graph.call(op.name, node_args, node_kwargs, meta, origin)
        proxy = ArrayProxy(self, node, result)
        define_lengths(self, proxy)
        return proxy

    def run_time_length(self, expr: Any) -> bool:
        """A data-bounded slice's length, readable here (``sizes/data_lengths.py``)."""
        return readable_length(self, expr)

    def read_at_run_time(self, expr: Any) -> bool:
        """``expr`` involves such lengths: computed at run time, not guarded."""
        return read_at_run_time(self, expr)

    def _symbolic_meta(self, op: OpDef, node_args: tuple, node_kwargs: dict,
                       meta: TensorMeta | None) -> TensorMeta | None:
        """The result's shape over symbols. Sizes that depend on data (boolean-mask reads,
        nonzero) are unbacked symbols: the example's sizes are only one possible outcome."""
        if meta is None:
            return None
        inputs = _flat_nodes((node_args, node_kwargs))
        symbolic = any((n.meta is not None and not _static(n.meta.shape)) or n in self.node_exprs
                       for n in inputs) or (op.subscript and has_data_bounds(self, node_args))
        data_dependent = op.data_dependent_shape is not None \
            and op.data_dependent_shape(node_args, node_kwargs)
        if not data_dependent and not symbolic:
            return meta
        shape = None
        if not data_dependent:
            from .sizes.shape_rules import symbolic_shape
            shape = symbolic_shape(self, op, node_args, node_kwargs)
            if shape is not None and not self._agrees(shape, meta.shape):
                shape = None
        if shape is None:
            shape = tuple(self.shape_env.create_unbacked(op.name) for _ in meta.shape)
            if data_dependent:  # read at run time from the result, as a data-bounded slice's
                self.data_lengths.update((("data", size), size) for size in shape)
        return TensorMeta(tuple(shape), meta.dtype, meta.scalar, meta.pytype)

    def _agrees(self, shape: tuple, example: tuple) -> bool:
        """A rule's shape must give the example's sizes for the hints (else: no rule)."""
        if len(shape) != len(example):
            return False
        for dim, size in zip(shape, example):
            try:
                if self.shape_env.size_hint(dim) != size:
                    return False
            except Exception:  # noqa: BLE001 - unbacked sizes have no hint
                continue
        return True

    def _materialize_sizes(self, value: Any) -> Any:
        """SymInts left in an op's arguments become graph values (sizes read at run time)."""
        from .sizes.symbolic import SymInt
        if isinstance(value, SymInt):
            return self.sym_value(value.expr)
        if isinstance(value, tuple):
            return tuple(self._materialize_sizes(v) for v in value)
        if isinstance(value, list):
            return [self._materialize_sizes(v) for v in value]
        if isinstance(value, dict):
            return {k: self._materialize_sizes(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(self._materialize_sizes(value.start), self._materialize_sizes(value.stop),
                         self._materialize_sizes(value.step))
        return value

    def _fold(self, op: OpDef, args: tuple, kwargs: dict) -> Any:
        if self.in_region:  # a branch or an iteration that may never run: no warnings
            with quiet_examples():
                result = op.impl(*args, **kwargs)
        else:
            result = op.impl(*args, **kwargs)
        if isinstance(result, np.ndarray):
            return self.constant_array(result)
        return result

    def _lift_array_constants(self, value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return self.constant_array(value)
        if isinstance(value, tuple):
            return tuple(self._lift_array_constants(v) for v in value)
        if isinstance(value, list):
            return [self._lift_array_constants(v) for v in value]
        if isinstance(value, dict):
            return {k: self._lift_array_constants(v) for k, v in value.items()}
        return value

    # ----- loops ---------------------------------------------------------------------------------
    def unrolled(self, iterable: Iterable[Any], item: Callable[[Any], Any] | None = None,
                 key: Any = None) -> Iterator[Any]:
        """Iterate in Python (unrolling into the graph); iterations that add graph nodes count
        against the unroll limit, past which capture breaks the graph."""
        counted = 0
        for value in iterable:
            before = len(self.graph.nodes)
            yield item(value) if item is not None else value
            if len(self.graph.nodes) != before:
                counted += 1
                if counted > self.unroll_limit:
                    raise GraphBreak(
                        f"loop unrolled more than config.unroll_limit ({self.unroll_limit}) "
                        "iterations that add graph nodes; raise the limit or reduce the trip count")

    def count_loop_iteration(self, key: Any, added_nodes: bool) -> None:
        if not added_nodes:
            return
        count = self._loop_counts.get(key, 0) + 1
        self._loop_counts[key] = count
        if count > self.unroll_limit:
            raise GraphBreak(f"while loop ran more than config.unroll_limit ({self.unroll_limit}) "
                             "iterations that add graph nodes")

    def output(self, values: tuple) -> Node:
        return self.graph.output(tuple(_map_proxies(values, lambda p: self.localize(p.node))))


def _flat_nodes(value: Any) -> list[Node]:
    found: list[Node] = []
    map_nodes(value, lambda n: found.append(n) or n)
    return found


def _static(shape: tuple) -> bool:
    return all(isinstance(d, (int, np.integer)) for d in shape)


__all__ = ["Tracer", "ArrayProxy", "is_compiling", "compiling_scope", "contains_proxy",
           "meta_of", "map_nodes", "Unsupported"]
