"""Lifting outside values into the capture, each with the guard that keeps it valid.

Arrays become graph inputs (guarded on type, dtype and shape); Python scalars, strings and
``None`` become constants guarded by value; containers are lifted element by element (guarded on
type and length/keys); modules, functions and classes are guarded by identity; other objects are
wrapped in an ``ObjectProxy`` whose attribute reads are lifted (and guarded) in turn.
"""

from __future__ import annotations

import collections
import collections.abc
import enum
import functools
import re
import types
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exc import ConstraintViolationError, GraphBreak
from . import objects
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
    ``kind`` is "call" (a method such as list.append), "setitem", "delitem" or "setattr".
    ``args`` are what the mutation stored: an outside container stays a reference (replayed on
    the real object), an iterable whose items are copied (``extend``, ``update``) is copied here,
    when the call happens, so later changes to it cannot leak into the replay."""

    __slots__ = ("kind", "source", "name", "args", "kwargs")

    def __init__(self, kind: str, source: Source, name: Any, args: tuple,
                 kwargs: dict | None = None) -> None:
        self.kind = kind
        self.source = source
        self.name = name
        self.args = args
        self.kwargs = kwargs or {}


def _record(container: Any, kind: str, name: Any, args: tuple, kwargs: dict | None = None) -> None:
    tracer = container._ac_tracer
    if tracer.in_region:
        raise GraphBreak(f"mutating {container._ac_source.name} inside a compiled loop or branch "
                         "(a side effect that cannot be replayed once per iteration)")
    tracer.side_effects.append(SideEffect(kind, container._ac_source, name, args, kwargs))


# methods whose result or success depends on the contents: the contents are guarded first
_CONTENT_READS = {"pop", "popitem", "remove", "setdefault", "index"}
# methods that copy the items of their argument: the argument is copied when the call happens
_COPYING = {"extend", "update", "difference_update", "intersection_update",
            "symmetric_difference_update"}


def _is_lifted(value: Any) -> bool:
    return isinstance(value, Deferring) and value._ac_source is not None


def _copy_items(target: Any, method: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``extend(it)`` / ``update(other, **kw)``: the items as they are now (a generator is
    consumed once); an outside container stays a reference (replayed on the real object)."""
    if method == "extend" and len(args) == 1 and not _is_lifted(args[0]):
        return (list(args[0]),), kwargs
    if method == "update" and isinstance(target, set):
        return tuple(arg if _is_lifted(arg) else set(arg) for arg in args), kwargs
    if method == "update" and (kwargs or (args and not _is_lifted(args[0]))):
        return (dict(*args, **kwargs),), {}
    if method.endswith("_update"):
        return tuple(arg if _is_lifted(arg) else set(arg) for arg in args), kwargs
    return args, kwargs


def _recording(base: type, method: str):
    original = getattr(base, method)

    def mutate(self: Any, *args: Any, **kwargs: Any) -> Any:
        if method in _CONTENT_READS:
            self._ac_commit()
        if method in _COPYING:
            args, kwargs = _copy_items(self, method, args, kwargs)
        _record(self, "call", method, args, kwargs)
        return original(self, *args, **kwargs)  # the capture's copy changes too: later reads agree

    mutate.__name__ = method
    mutate.__ac_traced_method__ = True  # the capture calls it as is (see capture/runtime/calls.py)
    return mutate


def _reading(base: type, method: str):
    original = getattr(base, method)

    def read(self: Any, *args: Any) -> Any:
        self._ac_commit()
        return original(self, *args)

    read.__name__ = method
    read.__ac_traced_method__ = True
    return read


_LIST_READS = ("__len__", "__getitem__", "__iter__", "__contains__", "__reversed__", "__eq__",
               "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__rmul__",
               "count", "index", "copy")
_DICT_READS = ("__len__", "__getitem__", "__iter__", "__contains__", "__eq__", "__ne__", "get",
               "keys", "values", "items", "copy", "__or__")


class Deferring:
    """Guards on the contents are recorded only once the code reads the contents."""

    _ac_tracer: Any = None
    _ac_source: Any = None
    _ac_pending: Any = None
    _ac_type: Any = None  # the lifted object's own class (``OrderedDict`` read as a dict)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # ``x.__class__`` is the user's class, as ``type(x)`` is
        return self._ac_type or type(self).__mro__[2]

    def _ac_commit(self) -> None:
        if self._ac_pending:
            self._ac_tracer.guards.commit(self._ac_pending)
            self._ac_pending = None

    def _ac_commit_size(self) -> None:
        """Guard only the length (list) or the keys (dict): ``lst[i] = v`` and ``del d[k]``
        succeed or raise depending on them, not on the values."""
        if self._ac_pending:
            own = [f for f in self._ac_pending
                   if f.kind in ("len", "keys") and f.source == self._ac_source]
            self._ac_tracer.guards.commit(own)
            self._ac_pending = [f for f in self._ac_pending if all(f is not o for o in own)]


class GuardedList(Deferring, list):
    """A list lifted from outside the compiled frame: mutations are recorded and replayed on the
    real list after the graph runs (the capture-time copy changes too, so later reads agree).
    Its length and items are guarded only if the code reads them."""

    for _name in _LIST_READS:
        locals()[_name] = _reading(list, _name)

    for _name in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"):
        locals()[_name] = _recording(list, _name)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._ac_commit_size()
        if isinstance(index, slice):
            value = list(value)  # its items, as they are now
        _record(self, "setitem", index, (value,))
        list.__setitem__(self, index, value)

    def __delitem__(self, index: Any) -> None:
        self._ac_commit_size()
        _record(self, "delitem", index, ())
        list.__delitem__(self, index)

    def __iadd__(self, other: Any) -> "GuardedList":
        self.extend(other)
        return self

    def __imul__(self, count: Any) -> "GuardedList":
        self[:] = list.__mul__(list(self), count)  # ``lst *= n``: the same list, repeated
        return self


class GuardedDict(Deferring, dict):
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
        self._ac_commit_size()
        _record(self, "delitem", key, ())
        dict.__delitem__(self, key)

    def __ior__(self, other: Any) -> "GuardedDict":
        self.update(other)
        return self


_SET_READS = ("__len__", "__iter__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__",
              "__gt__", "__ge__", "__or__", "__and__", "__sub__", "__xor__", "__ror__",
              "__rand__", "__rsub__", "__rxor__", "copy", "union", "intersection", "difference",
              "symmetric_difference", "issubset", "issuperset", "isdisjoint")


class GuardedSet(Deferring, set):
    """A set lifted from outside the compiled frame: mutations are recorded and replayed, its
    contents are guarded only if the code reads them."""

    for _name in _SET_READS:
        locals()[_name] = _reading(set, _name)

    for _name in ("add", "discard", "remove", "pop", "clear", "update", "difference_update",
                  "intersection_update", "symmetric_difference_update"):
        locals()[_name] = _recording(set, _name)

    def __ior__(self, other: Any) -> "GuardedSet":
        self.update(other)
        return self

    def __iand__(self, other: Any) -> "GuardedSet":
        self.intersection_update(other)
        return self

    def __isub__(self, other: Any) -> "GuardedSet":
        self.difference_update(other)
        return self

    def __ixor__(self, other: Any) -> "GuardedSet":
        self.symmetric_difference_update(other)
        return self


class ObjectProxy:
    """An outside object: attribute reads are lifted with guards, writes are graph breaks."""

    __slots__ = ("_ac_tracer", "_ac_value", "_ac_source", "_ac_written")

    def __init__(self, tracer: "Tracer", value: Any, source: Source) -> None:
        object.__setattr__(self, "_ac_tracer", tracer)
        object.__setattr__(self, "_ac_value", value)
        object.__setattr__(self, "_ac_source", source)
        object.__setattr__(self, "_ac_written", _written(tracer, value))

    def __getattr__(self, name: str) -> Any:
        if name in self._ac_written:  # written earlier in this capture
            return self._ac_written[name]
        obj, source = self._ac_value, self._ac_source
        registry = _module_registry(obj, name)
        if registry is not None:  # a module's parameter, buffer or submodule
            members = getattr(obj, registry)  # (its type: the module-tree guard's registries)
            self._ac_tracer.guards.add("type", source.attr(registry), type(members))
            return lift(self._ac_tracer, members[name], source.attr(registry).item(name))
        if isinstance(obj, enum.Enum) and name in ("name", "value", "_name_", "_value_"):
            return lift(self._ac_tracer, getattr(obj, name), source.attr(name))  # fixed
        getter = user_getter(self._ac_tracer, obj, source, name)
        if getter is not None:  # a property or __getattr__ in user code: inlined, run once
            return self._ac_tracer.runtime.inline(getter[0], (self, *getter[1:]), {})
        try:
            value = getattr(obj, name)
        except AttributeError:  # hasattr(), getattr(obj, name, default): guard the absence
            if source is not None:
                self._ac_tracer.guards.add("no_attr", source, name)
            raise
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
        setter = user_setter(self._ac_tracer, self._ac_value, self._ac_source, name)
        if setter is not None:  # a property setter in user code: inlined, runs once
            self._ac_tracer.runtime.inline(setter, (self, value), {})
            return
        _record(self, "setattr", name, (value,))
        self._ac_written[name] = value

    # Special methods run what the object's class defines (capture/objects.py): inlined user
    # code, object's identity defaults, enum members' methods, or dataclasses' generated ones.
    @property
    def __class__(self) -> type:  # type: ignore[override]
        return type(object.__getattribute__(self, "_ac_value"))

    def __eq__(self, other: Any) -> Any:
        return objects.compare(self, "__eq__", other)

    def __ne__(self, other: Any) -> Any:
        return objects.compare(self, "__ne__", other)

    def __lt__(self, other: Any) -> Any:
        return objects.compare(self, "__lt__", other)

    def __le__(self, other: Any) -> Any:
        return objects.compare(self, "__le__", other)

    def __gt__(self, other: Any) -> Any:
        return objects.compare(self, "__gt__", other)

    def __ge__(self, other: Any) -> Any:
        return objects.compare(self, "__ge__", other)

    def __hash__(self) -> int:
        return objects.to_hash(self)

    def __str__(self) -> str:
        return objects.to_str(self)

    def __repr__(self) -> str:
        return objects.to_repr(self)

    def __format__(self, spec: str) -> str:
        return objects.to_format(self, spec)

    def __bool__(self) -> bool:
        return objects.to_bool(self)

    def __len__(self) -> int:
        return objects.to_len(self)

    def __getitem__(self, key: Any) -> Any:
        return objects.special_method(self, "__getitem__", key)

    def __contains__(self, item: Any) -> bool:
        return objects.to_bool_result(self, objects.special_method(self, "__contains__", item))


class LocalObject(ObjectProxy):
    """An instance of a user class created by the compiled code (``capture/objects.py``): the
    real object holds capture values; reads resolve properties and methods through the capture,
    writes change the object itself (the run code rebuilds it if it outlives the call)."""

    __slots__ = ()

    def __init__(self, tracer: "Tracer", value: Any) -> None:
        super().__init__(tracer, value, None)

    def __getattr__(self, name: str) -> Any:
        return objects.local_getattr(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        objects.local_setattr(self, name, value)

    def __delattr__(self, name: str) -> None:
        objects.local_delattr(self, name)


def _written(tracer: "Tracer", value: Any) -> dict:
    """The attributes this capture wrote on ``value``: shared by every proxy of the object (read
    as ``Cfg`` in one function and ``self.__class__`` or a cell in another), so a later read
    through any of them sees the write."""
    table = tracer.__dict__.setdefault("written_attributes", {})
    entry = table.get(id(value))
    if entry is None or entry[0] is not value:
        entry = table[id(value)] = (value, {})
    return entry[1]


def _is_user_code(fn: Any) -> bool:
    return isinstance(fn, types.FunctionType) and not (fn.__module__ or "").startswith("astcompiler")


def user_getter(tracer: "Tracer", obj: Any, source: Source, name: str) -> tuple | None:
    """``(getter, *extra args)`` when reading ``obj.name`` runs user Python: a ``property``
    (inlined, so it runs once per call like plain Python, never at capture time or in a guard),
    or a ``__getattr__`` fallback. Other Python-level descriptors (``cached_property``, custom
    ``__get__``) and a user ``__getattribute__`` are graph breaks. The descriptor's identity on
    the class is guarded."""
    kind = type(obj)
    shown = Source(f"type({source.name})", f"type({source.expr})")
    if _is_user_code(getattr(kind, "__getattribute__", None)):
        raise GraphBreak(f"{kind.__qualname__} defines __getattribute__ (user code on every "
                         "attribute read)")
    found = next((klass.__dict__[name] for klass in kind.__mro__ if name in klass.__dict__), None)
    if isinstance(found, property):
        if not _is_user_code(found.fget):
            return None
        tracer.guards.add("id", shown.attr(name), found)
        return (found.fget,)
    instance_dict = getattr(obj, "__dict__", None)
    if found is not None and _is_user_code(getattr(type(found), "__get__", None)):
        data = hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")
        if not data and instance_dict is not None and name in instance_dict:
            return None  # e.g. a cached_property already cached: the instance's value wins
        raise GraphBreak(f"{kind.__qualname__}.{name} is a descriptor with Python code "
                         f"({type(found).__qualname__}): reading it runs eagerly")
    if found is not None or (instance_dict is not None and name in instance_dict):
        return None
    fallback = getattr(kind, "__getattr__", None)
    if not _is_user_code(fallback):
        return None
    if instance_dict is not None:
        tracer.guards.add("absent", Source(f"{source.name}.__dict__", f"{source.expr}.__dict__"),
                          name)
    tracer.guards.add("id", shown.attr("__getattr__"), fallback)
    return (fallback, name)


def user_setter(tracer: "Tracer", obj: Any, source: Source, name: str) -> Any:
    """The user-code ``fset`` when assigning ``obj.name`` runs a property's setter (guarded on
    the property's identity); a descriptor with a Python ``__set__`` or a user ``__setattr__``
    is a graph break."""
    kind = type(obj)
    if _is_user_code(getattr(kind, "__setattr__", None)):
        raise GraphBreak(f"{kind.__qualname__} defines __setattr__ (user code on every write)")
    found = next((klass.__dict__[name] for klass in kind.__mro__ if name in klass.__dict__), None)
    if isinstance(found, property):
        if not _is_user_code(found.fset):
            raise GraphBreak(f"assigning {kind.__qualname__}.{name}, a property without a "
                             "Python setter")
        tracer.guards.add("id", Source(f"type({source.name}).{name}",
                                       f"type({source.expr}).{name}"), found)
        return found.fset
    if found is not None and _is_user_code(getattr(type(found), "__set__", None)):
        raise GraphBreak(f"{kind.__qualname__}.{name} is a descriptor with Python code "
                         f"({type(found).__qualname__}): assigning it runs eagerly")
    return None


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
               "_global_forward_hooks_with_kwargs", "_global_forward_hooks_always_called",
               "_backward_hooks", "_backward_pre_hooks", "_global_backward_hooks",
               "_global_backward_pre_hooks")


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
    lifted._ac_tracer, lifted._ac_source, lifted._ac_type = tracer, source, type(value)
    return lifted


class BoundMethod:
    """``obj.method`` read through an ObjectProxy: inlined with the proxy as ``self``."""

    __slots__ = ("func", "self_")

    def __init__(self, func: Any, self_: ObjectProxy) -> None:
        self.func = func
        self.self_ = self_


class NamespaceProxy(ObjectProxy):
    """A module or a user class read from outside: each attribute the code reads is lifted from
    its own source (``G['np'].sum``, ``G['Cfg'].scale``) and guarded there, so a rebound
    ``settings.SCALE``, a changed ``Cfg.scale`` or a monkeypatched ``np.sum`` misses the cache.
    Everything else (``isinstance``, ``==``, hashing, calls) acts on the real object."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name in self._ac_written:  # written earlier in this capture
            return self._ac_written[name]
        obj, source = self._ac_value, self._ac_source
        try:
            value = getattr(obj, name)
        except AttributeError:  # hasattr(), getattr(obj, name, default): guard the absence
            self._ac_tracer.guards.add("no_attr", source, name)
            raise
        if isinstance(value, types.MethodType) and value.__self__ is obj:  # a classmethod
            func = lift(self._ac_tracer, value.__func__, source.attr(name).attr("__func__"))
            return BoundMethod(func, self)
        return lift(self._ac_tracer, value, source.attr(name))

    def __instancecheck__(self, instance: Any) -> bool:
        return isinstance(_real(instance), self._ac_value)

    def __subclasscheck__(self, subclass: Any) -> bool:
        return issubclass(_real(subclass), self._ac_value)

    def __eq__(self, other: Any) -> bool:
        return self._ac_value == _real(other)

    def __ne__(self, other: Any) -> bool:
        return self._ac_value != _real(other)

    def __hash__(self) -> int:
        return hash(self._ac_value)


def _real(value: Any) -> Any:
    return value._ac_value if isinstance(value, ObjectProxy) else value


def _is_numpy_object(value: Any) -> bool:
    """NumPy's own objects (``np.sum``'s dispatcher, ``np.s_``): used as they are."""
    module = getattr(type(value), "__module__", None) or ""
    return (module == "numpy" or module.startswith("numpy.")) and not isinstance(value, np.random.Generator)


def _is_namespace(value: Any) -> bool:
    """Modules, and classes whose attributes user code may change (not builtins, not NumPy's
    types, not enums: their members cannot be rebound)."""
    if isinstance(value, types.ModuleType):
        return True
    if not isinstance(value, type):
        return False
    module = getattr(value, "__module__", None) or ""
    if module == "builtins" or module == "numpy" or module.startswith("numpy."):
        return False
    import enum
    return not issubclass(value, enum.Enum)


def lift(tracer: "Tracer", value: Any, source: Source) -> Any:
    """The capture-time stand-in for ``value`` read from ``source``, with its guards recorded."""
    guards = tracer.guards
    if source.constants:  # dict keys the source's expression names
        tracer.namespace_objects.update(source.constants)
    kind = type(value)
    if kind in _ALIASABLE or _is_parameter(value) or _is_module(value):
        return _lift_once(tracer, value, source)
    if lazy_reader(value):
        raise GraphBreak(f"{source.name} is a {kind.__name__} object: it reads its container "
                         "(or runs code) when consumed, which capture would do once, ahead")
    return _lift_value(tracer, value, source)


_LAZY = (collections.abc.Iterator, collections.abc.MappingView, functools.partial, memoryview,
         np.flatiter, types.GeneratorType, types.CoroutineType)
_LAZY_MODULES = ("builtins", "itertools", "functools", "collections", "numpy")


def lazy_reader(value: Any) -> bool:
    """A built-in object that reads another one (or runs code) later: an iterator, a dict view,
    a generator, a partial. Read at capture, it would be consumed (or snapshot) there; live across
    a graph break, a compiled piece would hand over the capture's copy."""
    if isinstance(value, functools.partial):  # of constants only: nothing to read later
        return not all(_frozen(v) for v in (*value.args, *value.keywords.values()))
    if isinstance(value, types.BuiltinMethodType):  # ``append = y.append``: y's own method
        return isinstance(value.__self__, _MUTABLE)
    return isinstance(value, _LAZY) and type(value).__module__ in _LAZY_MODULES


_MUTABLE = (list, dict, set, bytearray, collections.deque, np.ndarray)


def _frozen(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_frozen(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic,
                                               np.ufunc, types.FunctionType,
                                               types.BuiltinFunctionType))


_ALIASABLE = (np.ndarray, list, dict, OrderedDict)


def _lift_once(tracer: "Tracer", value: Any, source: Source) -> Any:
    """Arrays, containers and nn modules: one stand-in per object. The same object read again
    from another source (``f(x, x)``, two attributes holding one list) is that stand-in, with
    a guard that the two sources are still one object; so ``a is b`` and writes through one
    seen through the other are exactly Python's. (An object first met as an item of a container
    the code has not read yet gets its own facts committed then.)"""
    known = tracer.lifted_objects.get(id(value))
    if known is not None and known[0] is value:
        if known[2].expr != source.expr:
            if not tracer.guards.deferring:  # its first source's own facts now matter
                tracer.guards.commit_source(known[2])
            tracer.guards.add("alias", source, known[2])
        return known[1]
    lifted = _lift_value(tracer, value, source)
    tracer.lifted_objects[id(value)] = (value, lifted, source)
    tracer.real_objects[id(lifted)] = (lifted, value)
    return lifted


def real_object(tracer: "Tracer", value: Any) -> Any:
    """The outside object an array or container stand-in was lifted from (``value`` itself for
    anything else, object proxies included)."""
    if isinstance(value, ObjectProxy):
        return value
    known = tracer.real_objects.get(id(value))
    return known[1] if known is not None and known[0] is value else value


def lifted_source(tracer: "Tracer", value: Any) -> Source | None:
    """The source an outside object's stand-in was lifted from (an input array, a container,
    an object proxy), or None for a value made inside the compiled code."""
    if isinstance(value, ArrayProxy):
        return next((s for node, s, _ in tracer.inputs if node is value.node), None)
    if isinstance(value, (ObjectProxy, Deferring)):
        return value._ac_source
    return None


def _lift_value(tracer: "Tracer", value: Any, source: Source) -> Any:
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
        if marker is not None:  # any int, 0 and 1 too: only array sizes specialize those
            return _lift_dynamic_int(tracer, value, source, marker)
    if kind is float and tracer.policy is not None:
        marker = tracer.policy.float_marker(source.name)
        if marker is not None:  # config.specialize_float=False: a value read at run time
            tracer.guards.add("type", source, float)
            return tracer.int_input(source, value, _hint(source))
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
    if kind is OrderedDict or getattr(kind, "__ac_dict__", False) is True:
        kind = dict  # read like a dict (insertion order is dict order; a module's registries)
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
        lifted_dict._ac_pending, lifted_dict._ac_type = pending, type(value)
        return lifted_dict
    if kind is set:
        guards.add("type", source, kind)
        with guards.deferred() as pending:
            guards.add("equals", source, set(value))
        lifted_set = GuardedSet(value)
        lifted_set._ac_tracer, lifted_set._ac_source, lifted_set._ac_pending = tracer, source, pending
        return lifted_set
    if kind is slice:
        guards.add("equals", source, value)
        return value
    if kind is np.dtype or isinstance(value, np.dtype):
        guards.add("equals", source, value)
        return value
    if isinstance(value, _IDENTITY_TYPES) or callable(value) and not hasattr(value, "__dict__") \
            or _is_numpy_object(value):
        guards.add("id", source, value)
        return NamespaceProxy(tracer, value, source) if _is_namespace(value) else value
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
    """An int argument that changed between calls: a symbol with the value as its hint. It may
    be any integer (no lower bound, no sign): every decision on it is a guard."""
    from .sizes.symbolic import SymInt
    tracer.guards.add("type", source, int)
    symbol = tracer.shape_env.create_symbol(value, source.name, source.expr, min=None,
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
