"""Lifting outside values into the capture, each with the guard that keeps it valid.

Arrays become graph inputs (guarded on type, dtype and shape); Python scalars, strings and
``None`` become constants guarded by value; containers are lifted element by element (guarded on
type and length/keys); modules, functions and classes are guarded by identity; other objects are
wrapped in an ``ObjectProxy`` whose attribute reads are lifted (and guarded) in turn.
"""

from __future__ import annotations

import types
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


class GuardedList(list):
    """A list lifted from outside the compiled frame: reading is fine, mutating is a graph break
    (side effects on outside lists are replayed in a later version)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise GraphBreak("mutating a list that lives outside the compiled function "
                         "(its side effects would not be replayed)")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


class GuardedDict(dict):
    """A dict lifted from outside the compiled frame (read-only during capture)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise GraphBreak("mutating a dict that lives outside the compiled function "
                         "(its side effects would not be replayed)")

    __setitem__ = __delitem__ = pop = popitem = clear = update = setdefault = _refuse


class ObjectProxy:
    """An outside object: attribute reads are lifted with guards, writes are graph breaks."""

    __slots__ = ("_ac_tracer", "_ac_value", "_ac_source")

    def __init__(self, tracer: "Tracer", value: Any, source: Source) -> None:
        object.__setattr__(self, "_ac_tracer", tracer)
        object.__setattr__(self, "_ac_value", value)
        object.__setattr__(self, "_ac_source", source)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ac_value, name)
        if isinstance(value, types.MethodType) and value.__self__ is self._ac_value:
            func = lift(self._ac_tracer, value.__func__,
                        Source(f"type({self._ac_source.name}).{name}",
                               f"type({self._ac_source.expr}).{name}"))
            return BoundMethod(func, self)
        return lift(self._ac_tracer, value, self._ac_source.attr(name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise GraphBreak(f"setting attribute {name!r} of {self._ac_source.name} "
                         "(side effects on outside objects are not replayed yet)")

    def __repr__(self) -> str:
        return f"ObjectProxy({self._ac_source.name})"


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
    if kind is np.ndarray:
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
    if kind is tuple or kind is list:
        guards.add("type", source, kind)
        guards.add("len", source, len(value))
        items = [lift(tracer, item, source.item(i)) for i, item in enumerate(value)]
        return tuple(items) if kind is tuple else GuardedList(items)
    if kind is dict:
        guards.add("type", source, kind)
        guards.add("keys", source, tuple(value.keys()))
        return GuardedDict({k: lift(tracer, v, source.item(k)) for k, v in value.items()})
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
    guards.add("id", source, value)
    return ObjectProxy(tracer, value, source)


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
    guards.add("array", source, (value.dtype, tuple(d if isinstance(d, int) else None for d in pattern)),
               tuple(specialized))
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
    name = source.name
    if name.startswith("L['") and name.endswith("']") and name.count("[") == 1:
        return name[3:-2]
    if name.startswith("G['") and name.endswith("']") and name.count("[") == 1:
        return "g_" + name[3:-2]
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name)
    return cleaned.strip("_") or "arg"
