"""Lifting outside values into the capture, each with the guard that keeps it valid.

Arrays become graph inputs (guarded on type, dtype and shape); Python scalars, strings and
``None`` become constants guarded by value; containers are lifted element by element (guarded on
type and length/keys); modules, functions and classes are guarded by identity; other objects are
wrapped in an ``ObjectProxy`` whose attribute reads are lifted (and guarded) in turn.
"""

from __future__ import annotations

import re
import types
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exc import ConstraintViolationError, GraphBreak
from .proxy import ArrayProxy
from .sources import Source

if TYPE_CHECKING:  # pragma: no cover
    from .tracer import Tracer

_VALUE_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))
_IDENTITY_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                   types.MethodWrapperType, types.BuiltinMethodType, type, np.ufunc,
                   types.MethodDescriptorType, types.WrapperDescriptorType)


class SideEffect:
    """One mutation of an outside object, replayed after the graph runs (in program order):
    ``kind`` is "call" (a method such as list.append), "setitem", "delitem" or "setattr"."""

    __slots__ = ("kind", "source", "name", "args")

    def __init__(self, kind: str, source: Source, name: Any, args: tuple) -> None:
        self.kind = kind
        self.source = source
        self.name = name
        self.args = args


def _record(container: Any, kind: str, name: Any, args: tuple) -> None:
    tracer = container._ac_tracer
    if tracer.in_region:
        raise GraphBreak(f"mutating {container._ac_source.name} inside a compiled loop or branch "
                         "(a side effect that cannot be replayed once per iteration)")
    tracer.side_effects.append(SideEffect(kind, container._ac_source, name, args))


def _recording(base: type, method: str):
    original = getattr(base, method)

    def mutate(self: Any, *args: Any) -> Any:
        _record(self, "call", method, args)
        return original(self, *args)  # the capture's copy changes too: later reads agree

    mutate.__name__ = method
    return mutate


def _reading(base: type, method: str):
    original = getattr(base, method)

    def read(self: Any, *args: Any) -> Any:
        self._ac_commit()
        return original(self, *args)

    read.__name__ = method
    return read


_LIST_READS = ("__len__", "__getitem__", "__iter__", "__contains__", "__reversed__", "__eq__",
               "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__rmul__",
               "count", "index", "copy")
_DICT_READS = ("__len__", "__getitem__", "__iter__", "__contains__", "__eq__", "__ne__", "get",
               "keys", "values", "items", "copy", "__or__")


class _Deferring:
    """Guards on the contents are recorded only once the code reads the contents."""

    _ac_tracer: Any = None
    _ac_source: Any = None
    _ac_pending: Any = None

    def _ac_commit(self) -> None:
        if self._ac_pending:
            self._ac_tracer.guards.commit(self._ac_pending)
            self._ac_pending = None


class GuardedList(_Deferring, list):
    """A list lifted from outside the compiled frame: mutations are recorded and replayed on the
    real list after the graph runs (the capture-time copy changes too, so later reads agree).
    Its length and items are guarded only if the code reads them."""

    for _name in _LIST_READS:
        locals()[_name] = _reading(list, _name)

    for _name in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"):
        locals()[_name] = _recording(list, _name)

    def __setitem__(self, index: Any, value: Any) -> None:
        _record(self, "setitem", index, (value,))
        list.__setitem__(self, index, value)

    def __delitem__(self, index: Any) -> None:
        _record(self, "delitem", index, ())
        list.__delitem__(self, index)

    def __iadd__(self, other: Any) -> "GuardedList":
        self.extend(other)
        return self


class GuardedDict(_Deferring, dict):
    """A dict lifted from outside the compiled frame; mutations are recorded and replayed, and
    its keys and values are guarded only if the code reads them."""

    for _name in _DICT_READS:
        locals()[_name] = _reading(dict, _name)

    for _name in ("pop", "popitem", "clear", "update", "setdefault"):
        locals()[_name] = _recording(dict, _name)

    def __setitem__(self, key: Any, value: Any) -> None:
        _record(self, "setitem", key, (value,))
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        _record(self, "delitem", key, ())
        dict.__delitem__(self, key)


class ObjectProxy:
    """An outside object: attribute reads are lifted with guards, writes are graph breaks."""

    __slots__ = ("_ac_tracer", "_ac_value", "_ac_source", "_ac_written")

    def __init__(self, tracer: "Tracer", value: Any, source: Source) -> None:
        object.__setattr__(self, "_ac_tracer", tracer)
        object.__setattr__(self, "_ac_value", value)
        object.__setattr__(self, "_ac_source", source)
        object.__setattr__(self, "_ac_written", {})

    def __getattr__(self, name: str) -> Any:
        if name in self._ac_written:  # written earlier in this capture
            return self._ac_written[name]
        obj, source = self._ac_value, self._ac_source
        registry = _module_registry(obj, name)
        if registry is not None:  # a module's parameter, buffer or submodule
            return lift(self._ac_tracer, getattr(obj, registry)[name],
                        source.attr(registry).item(name))
        value = getattr(obj, name)
        if isinstance(value, types.MethodType) and value.__self__ is obj:
            instance_dict = getattr(obj, "__dict__", None)
            if instance_dict is not None:  # a method patched onto the instance would win
                self._ac_tracer.guards.add("absent", Source(f"{source.name}.__dict__",
                                                            f"{source.expr}.__dict__"), name)
            func = lift(self._ac_tracer, value.__func__,
                        Source(f"type({source.name}).{name}", f"type({source.expr}).{name}"))
            return BoundMethod(func, self)
        return lift(self._ac_tracer, value, source.attr(name))

    def __setattr__(self, name: str, value: Any) -> None:
        """Recorded, replayed on the real object after the graph runs."""
        _record(self, "setattr", name, (value,))
        self._ac_written[name] = value

    def __repr__(self) -> str:
        return f"ObjectProxy({self._ac_source.name})"

    def __bool__(self) -> bool:
        return bool(self._ac_value)


def _module_registry(obj: Any, name: str) -> str | None:
    """Which of an ``ac.nn.Module``'s registries holds attribute ``name`` (torch's sources:
    ``L['self']._parameters['weight']``)."""
    state = getattr(obj, "__dict__", None)
    if state is None or "_parameters" not in state or name in state:
        return None
    for registry in ("_parameters", "_buffers", "_modules"):
        if name in state.get(registry, ()):
            return registry
    return None


_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_forward_pre_hooks_with_kwargs",
               "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_global_forward_pre_hooks", "_global_forward_hooks",
               "_global_forward_hooks_with_kwargs", "_global_forward_hooks_always_called")


def _is_hook_dict(source: Source) -> bool:
    name = source.name
    return any(name.endswith(f".{d}") or name.endswith(f"['{d}']") for d in _HOOK_DICTS)


def _lift_hook_dict(tracer: "Tracer", value: dict, source: Source) -> Any:
    """Hook dictionaries: with ``config.skip_nnmodule_hook_guards`` no guard per dictionary, but
    one on the global hook-version counter (so adding or removing a hook still recompiles)."""
    from ..config import config
    if not config.skip_nnmodule_hook_guards:
        return None
    from ..nn.modules import module as nn_module
    tracer.namespace_objects["___nn_module"] = nn_module
    tracer.guards.add("equals", Source("nn.modules.hooks_version()", "___nn_module._hooks_version"),
                      nn_module._hooks_version)
    with tracer.guards.deferred():  # the contents are covered by the version counter
        lifted = GuardedDict({k: lift(tracer, v, source.item(k)) for k, v in value.items()})
    lifted._ac_tracer, lifted._ac_source = tracer, source
    return lifted


class BoundMethod:
    """``obj.method`` read through an ObjectProxy: inlined with the proxy as ``self``."""

    __slots__ = ("func", "self_")

    def __init__(self, func: Any, self_: ObjectProxy) -> None:
        self.func = func
        self.self_ = self_


def lift(tracer: "Tracer", value: Any, source: Source) -> Any:
    """The capture-time stand-in for ``value`` read from ``source``, with its guards recorded."""
    guards = tracer.guards
    kind = type(value)
    if kind is np.ndarray or _is_parameter(value):
        return _lift_array(tracer, value, source)
    if isinstance(value, np.generic):
        guards.add("type", source, kind)
        return tracer.placeholder(source, value, _hint(source))
    if isinstance(value, np.ndarray):
        raise GraphBreak(f"{source.name} is an ndarray subclass ({kind.__name__}), "
                         "which astcompiler does not support yet")
    if kind is int and tracer.policy is not None:
        marker = tracer.policy.int_marker(source.name)
        if marker is not None and value not in (0, 1):
            return _lift_dynamic_int(tracer, value, source, marker)
    if kind in _VALUE_TYPES:
        guards.add("equals", source, value)
        return value
    if kind is tuple:
        guards.add("type", source, kind)
        guards.add("len", source, len(value))
        return tuple(lift(tracer, item, source.item(i)) for i, item in enumerate(value))
    if kind is list:
        guards.add("type", source, kind)
        with guards.deferred() as pending:
            guards.add("len", source, len(value))
            lifted = GuardedList(lift(tracer, item, source.item(i)) for i, item in enumerate(value))
        lifted._ac_tracer, lifted._ac_source, lifted._ac_pending = tracer, source, pending
        return lifted
    if kind is OrderedDict:  # read like a dict (insertion order is dict order)
        kind = dict
    if kind is dict and _is_hook_dict(source):
        lifted_hooks = _lift_hook_dict(tracer, value, source)
        if lifted_hooks is not None:
            return lifted_hooks
    if kind is dict:
        guards.add("type", source, type(value))
        with guards.deferred() as pending:
            guards.add("keys", source, tuple(value.keys()))
            lifted_dict = GuardedDict({k: lift(tracer, v, source.item(k)) for k, v in value.items()})
        lifted_dict._ac_tracer, lifted_dict._ac_source = tracer, source
        lifted_dict._ac_pending = pending
        return lifted_dict
    if kind is slice:
        guards.add("equals", source, value)
        return value
    if kind is np.dtype or isinstance(value, np.dtype):
        guards.add("equals", source, value)
        return value
    if isinstance(value, _IDENTITY_TYPES) or callable(value) and not hasattr(value, "__dict__"):
        guards.add("id", source, value)
        return value
    if isinstance(value, (ArrayProxy, ObjectProxy)):
        return value
    from ..pytree import DEFAULT as pytrees
    if pytrees.is_constant(value):  # register_constant: compared by equality
        guards.add("type", source, kind)
        guards.add("equals", source, value)
        return value
    if _is_module(value):  # modules: by type, so instances of a class share compiled code
        guards.add("type", source, kind)
        return ObjectProxy(tracer, value, source)
    guards.add("id", source, value)
    return ObjectProxy(tracer, value, source)


def _is_parameter(value: Any) -> bool:
    return type(value).__name__ == "Parameter" and type(value).__module__.startswith("astcompiler.nn")


def _is_module(value: Any) -> bool:
    from ..nn.modules.module import Module
    return isinstance(value, Module)


def _lift_array(tracer: "Tracer", value: np.ndarray, source: Source) -> Any:
    """An input array: dynamic dimensions get symbols (>= 2, or unbacked); the guard checks the
    static ones exactly and the dynamic ones through their ranges."""
    existing = tracer.existing_input(source)
    if existing is not None:
        return existing
    markers = tracer.policy.array_dims(source.name, value) if tracer.policy is not None \
        else [None] * value.ndim
    env = tracer.shape_env
    guards = tracer.guards
    shape: list[Any] = []
    specialized: list[int] = []
    symbols: list[tuple[Any, int]] = []
    for dim, (size, marker) in enumerate(zip(value.shape, markers)):
        name = f"{source.name}.size()[{dim}]"
        if marker is None:
            shape.append(size)
            continue
        lo, hi = marker.min, marker.max
        if (lo is not None and size < lo) or (hi is not None and size > hi):
            raise ConstraintViolationError(
                f"{name} = {size} is outside the range [{lo}, {hi}] given to mark_dynamic")
        if marker.kind == "unbacked":
            symbol = env.create_symbol(size, name, f"{source.expr}.shape[{dim}]", min=lo or 0,
                                       max=hi, strict=marker.strict, marker="unbacked",
                                       unbacked=True)
        elif size in (0, 1):
            shape.append(size)
            specialized.append(dim)
            continue
        else:
            symbol = env.create_symbol(size, name, f"{source.expr}.shape[{dim}]",
                                       min=max(2, lo or 2), max=hi, strict=marker.strict,
                                       marker={"dynamic": "mark_dynamic"}.get(marker.kind, marker.kind))
        shape.append(symbol)
        symbols.append((symbol, dim))
    pattern = tuple(size if not isinstance(size, (int, np.integer)) else int(size) for size in shape)
    guards.add("array", source, (value.dtype, tuple(d if isinstance(d, int) else None for d in pattern),
                                 type(value)), tuple(specialized))
    proxy = tracer.placeholder(source, value, _hint(source), shape=tuple(shape))
    for symbol, dim in symbols:
        tracer.define_symbol(symbol, proxy, dim)
    return proxy


def _lift_dynamic_int(tracer: "Tracer", value: int, source: Source, marker: Any) -> Any:
    """An int argument that changed between calls: a symbol with the value as its hint."""
    from .symbolic import SymInt
    tracer.guards.add("type", source, int)
    symbol = tracer.shape_env.create_symbol(value, source.name, source.expr, min=2,
                                            marker=marker.kind)
    proxy = tracer.int_input(source, value, _hint(source))
    tracer.define_symbol(symbol, proxy, None)
    return SymInt(tracer, symbol)


def _hint(source: Source) -> str:
    """A readable graph name for an input: ``x`` for ``L['x']``, ``g_W`` for ``G['W']``,
    ``module_fc1_weight`` for ``L['module']._modules['fc1']._parameters['weight']``."""
    name = source.name
    for registry in ("._modules", "._parameters", "._buffers"):
        name = name.replace(registry, "")
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+", name)
    if words and words[0] == "G":
        words[0] = "g"
    elif words and words[0] in ("L", "C"):
        words = words[1:]
    return "_".join(words) or "arg"
