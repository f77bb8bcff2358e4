"""User objects at capture time: their special methods, and instances created by compiled code.

Special methods (``==``, ``<``, ``hash``, ``str``, ``repr``, ``format``, ``bool``, ``len``,
``in``, ``[]``) of an object proxy are resolved on the object's class, as Python does, and
captured by what defines them:

- a method written in Python with source: rewritten and inlined (the proxy is ``self``);
- ``object``'s defaults (identity ``==``, identity hash, ``str`` -> ``repr``, ...) and the
  methods of ``enum`` members: evaluated on the concrete value, which the proxy's identity guard
  pins (an ``ac.nn.Module``, guarded by type only, gets an identity guard when this happens);
- the methods ``dataclasses`` generates (they have no source file): ``==`` and the orderings are
  replayed on the fields read through the proxy, ``repr``/``hash`` read (and guard) the fields
  and then run on the concrete value;
- anything else is a graph break.

Comparisons follow Python's protocol (the reflected method of the other operand, then identity
for ``==``/``!=`` or a ``TypeError``), so a proxy never compares by its own identity.

Instances of user classes (plain classes, dataclasses) created inside compiled code are
``LocalObject``s: a real instance whose attributes hold capture values; ``__init__`` is inlined
(a dataclass's generated ``__init__`` is replayed from its fields), attribute reads resolve
properties and methods through the capture, and an instance that outlives the call (returned,
stored in an outside object, live across a graph break) is rebuilt per call by the run code
(``new_object``).
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import linecache
import sys
import types
from typing import TYPE_CHECKING, Any

from ..exc import GraphBreak
from .proxy import ArrayProxy

if TYPE_CHECKING:  # pragma: no cover
    from .lifting import ObjectProxy

_MISSING = object()

REFLECTED = {"__eq__": "__eq__", "__ne__": "__ne__", "__lt__": "__gt__", "__gt__": "__lt__",
             "__le__": "__ge__", "__ge__": "__le__"}
SYMBOLS = {"__eq__": "==", "__ne__": "!=", "__lt__": "<", "__gt__": ">", "__le__": "<=",
           "__ge__": ">="}


# ----- looking up special methods ------------------------------------------------------------
def lookup_special(cls: type, name: str) -> tuple[type | None, Any]:
    """``(defining class, raw attribute)`` of ``name`` on ``cls``'s MRO (no descriptors run)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass, klass.__dict__[name]
    return None, _MISSING


def has_source(fn: types.FunctionType) -> bool:
    """Python functions whose source can be read (exec'd ones, such as the methods dataclasses
    generate, cannot)."""
    filename = fn.__code__.co_filename
    return not filename.startswith("<") or filename in linecache.cache


def _is_stdlib(klass: type) -> bool:
    return (klass.__module__ or "").split(".")[0] in sys.stdlib_module_names


def _is_generated_dataclass_method(cls: type, method: Any) -> bool:
    """Made by ``dataclasses`` (exec'd, no source; ``__repr__`` wrapped by a recursion guard)."""
    if not dataclasses.is_dataclass(cls) or not isinstance(method, types.FunctionType):
        return False
    inner = getattr(method, "__wrapped__", method)
    return isinstance(inner, types.FunctionType) and not has_source(inner)


def _traced(value: Any) -> bool:
    """Contains a traced value (an array proxy or a symbolic size)."""
    from .sizes.symbolic import SymBool, SymInt
    if isinstance(value, (ArrayProxy, SymInt, SymBool)):
        return True
    if isinstance(value, (tuple, list)):
        return any(_traced(v) for v in value)
    if isinstance(value, dict):
        return any(_traced(v) for v in value.values())
    return False


def concrete(value: Any) -> Any:
    """The real object behind a proxy (containers of proxies unwrapped too)."""
    from .lifting import ObjectProxy
    if isinstance(value, ObjectProxy):
        return object.__getattribute__(value, "_ac_value")
    if type(value) is tuple:
        return tuple(concrete(v) for v in value)
    return value


def _runtime(proxy: "ObjectProxy") -> Any:
    return object.__getattribute__(proxy, "_ac_tracer").runtime


def _pin_identity(proxy: "ObjectProxy") -> None:
    """The result depends on which object this is: guard its identity (already guarded for
    everything but modules, which are guarded by type)."""
    source = object.__getattribute__(proxy, "_ac_source")
    if source is not None:
        tracer = object.__getattribute__(proxy, "_ac_tracer")
        tracer.guards.add("id", source, object.__getattribute__(proxy, "_ac_value"))


def _specialized(value: Any, what: str) -> Any:
    """``value`` with symbolic sizes specialized to their hints (guarded); array data cannot be
    made concrete: a graph break."""
    from .sizes.symbolic import SymBool, SymInt
    if isinstance(value, SymInt):
        return int(value)
    if isinstance(value, SymBool):
        return bool(value)
    if isinstance(value, ArrayProxy):
        raise GraphBreak(f"{what} of a traced array (it depends on the data)")
    if type(value) in (tuple, list):
        return type(value)(_specialized(v, what) for v in value)
    if type(value) is dict:
        return {k: _specialized(v, what) for k, v in value.items()}
    return concrete(value)


def identity(proxy: "ObjectProxy") -> int:
    """``id()`` of the object behind ``proxy`` (an object made in compiled code has a new identity
    per call: a graph break)."""
    if object.__getattribute__(proxy, "_ac_source") is None:
        raise GraphBreak("id() of an object created in compiled code (a new object per call)")
    _pin_identity(proxy)
    return id(concrete(proxy))


def identical(left: Any, right: Any) -> bool:
    """``left is right`` on the real objects. When the answer depends on which object a proxy
    stands for (same class on both sides), that identity is guarded; objects of different
    classes are never identical, whatever instance comes (a module guarded by type stays so)."""
    from .lifting import ObjectProxy
    real_left, real_right = concrete(left), concrete(right)
    if type(real_left) is type(real_right):
        for side in (left, right):
            if isinstance(side, ObjectProxy):
                _pin_identity(side)
    return real_left is real_right


def _evaluate(proxy: "ObjectProxy", name: str, args: tuple) -> Any:
    """Run the method on the concrete value (its result depends on the object's identity, which
    the guards pin, or on an enum member's fixed name and value)."""
    what = f"{type(concrete(proxy)).__qualname__}.{name}"
    args = _specialized(args, what)
    _pin_identity(proxy)
    value = concrete(proxy)
    if object.__getattribute__(proxy, "_ac_source") is None:  # made here: its state may be traced
        _specialized(list(getattr(value, "__dict__", {}).values()), what)
    return getattr(type(value), name)(value, *args)


def _touch_fields(proxy: "ObjectProxy", flag: str) -> None:
    """Read the dataclass fields (with ``flag`` set) through the proxy, so they are guarded and
    symbolic ones specialized: a generated ``repr``/``hash`` needs their concrete values."""
    value = concrete(proxy)
    for f in dataclasses.fields(value):
        if getattr(f, flag):
            _specialized(getattr(proxy, f.name), f"{type(value).__qualname__}.{f.name}")


def special_method(proxy: "ObjectProxy", name: str, *args: Any) -> Any:
    """Call special method ``name`` of the object behind ``proxy`` (see the module docstring).
    Returns ``NotImplemented`` as the method would."""
    value = concrete(proxy)
    cls = type(value)
    owner, method = lookup_special(cls, name)
    if method is _MISSING or method is None:
        return _missing(proxy, cls, name, args)
    if _is_generated_dataclass_method(cls, method):
        return _dataclass_method(proxy, name, args)
    if isinstance(method, types.FunctionType) and has_source(method) \
            and not (isinstance(value, enum.Enum) and _is_stdlib(owner)):
        return _runtime(proxy).inline(method, (proxy, *args), {})
    if owner is object:
        return _object_default(proxy, name, args)
    if name in _CONTENT_READS and isinstance(value, _CONTAINERS) \
            and not isinstance(method, types.FunctionType):
        return _container_read(proxy, name, args)
    if isinstance(value, enum.Enum) or not isinstance(method, types.FunctionType):
        return _evaluate(proxy, name, args)  # enum members, C methods of builtin bases
    raise GraphBreak(f"{cls.__qualname__}.{name} has no source to rewrite")


_CONTAINERS = (list, dict, collections.deque)  # subclasses reach here (the bases lift apart)
_CONTENT_READS = ("__getitem__", "__len__", "__contains__")


def _container_read(proxy: "ObjectProxy", name: str, args: tuple) -> Any:
    """A C method reading the contents of a list or dict subclass (or a deque) passed in: the
    guard pins the object's identity only, and the contents may change between calls, so the
    contents read are guarded too (its length; an item read is lifted from ``x[key]``, with its
    own guards and recorded mutations, never the capture's own object to mutate in place;
    ``in`` a dict guards its keys, ``in`` a list every item). A dict's ``__missing__`` for an
    absent key would insert it while capturing: a graph break there."""
    value = concrete(proxy)
    source = object.__getattribute__(proxy, "_ac_source")
    what = f"{type(value).__qualname__}.{name}"
    if source is None:  # made inside the compiled code: its contents are the capture's own
        return _evaluate(proxy, name, args)
    tracer = object.__getattribute__(proxy, "_ac_tracer")
    from .lifting import lift
    args = _specialized(args, what)
    if name == "__len__":
        tracer.guards.add("len", source, len(value))
        return len(value)
    if name == "__contains__":
        if isinstance(value, dict):
            tracer.guards.add("keys", source, tuple(value.keys()))
            return args[0] in value
        tracer.guards.add("len", source, len(value))
        items = [lift(tracer, item, source.item(i)) for i, item in enumerate(value)]
        return _runtime(proxy).truth(any(_runtime(proxy).truth(item == args[0])
                                         for item in items))
    key = args[0]
    if isinstance(value, dict) and key not in value \
            and lookup_special(type(value), "__missing__")[1] is not _MISSING:
        raise GraphBreak(f"{type(value).__qualname__}[...] of a missing key calls __missing__ "
                         "(it may insert the key)")
    if isinstance(key, slice) or not isinstance(key, (int, str, bytes, float, tuple, bool)):
        return _evaluate(proxy, name, args)  # (a slice copies: mutating the copy is local)
    if isinstance(value, dict):
        tracer.guards.add("keys", source, tuple(value.keys()))
    else:
        tracer.guards.add("len", source, len(value))
    return lift(tracer, _evaluate(proxy, name, args), source.item(key))


def _missing(proxy: "ObjectProxy", cls: type, name: str, args: tuple) -> Any:
    if name == "__hash__":
        raise TypeError(f"unhashable type: '{cls.__name__}'")
    if name == "__bool__":  # no __bool__: __len__ decides, else always true
        if lookup_special(cls, "__len__")[1] is _MISSING:
            return True
        return special_method(proxy, "__len__")
    if name == "__len__":
        raise TypeError(f"object of type '{cls.__name__}' has no len()")
    if name == "__getitem__":
        raise TypeError(f"'{cls.__name__}' object is not subscriptable")
    if name == "__contains__":
        raise GraphBreak(f"`in` on a {cls.__qualname__} without __contains__ (iterates it)")
    return NotImplemented


def _truth(proxy: "ObjectProxy", value: Any) -> bool:
    return bool(_runtime(proxy).truth(value))


def _object_default(proxy: "ObjectProxy", name: str, args: tuple) -> Any:
    """``object``'s own special methods, which depend only on identity (or on other methods)."""
    if name == "__eq__":
        _pin_identity(proxy)
        return True if concrete(proxy) is concrete(args[0]) else NotImplemented
    if name == "__ne__":  # object.__ne__ inverts __eq__
        result = special_method(proxy, "__eq__", *args)
        return result if result is NotImplemented else _runtime(proxy).not_(result)
    if name in ("__lt__", "__le__", "__gt__", "__ge__"):
        return NotImplemented
    if name == "__str__":
        return special_method(proxy, "__repr__")
    if name == "__format__":
        if args[0]:
            raise TypeError(f"unsupported format string passed to "
                            f"{type(concrete(proxy)).__name__}.__format__")
        return to_str(proxy)
    return _evaluate(proxy, name, args)  # __repr__, __hash__


def _dataclass_method(proxy: "ObjectProxy", name: str, args: tuple) -> Any:
    """The methods ``dataclasses`` generates, replayed on the fields read through the proxy."""
    value = concrete(proxy)
    if name in REFLECTED:
        other = args[0]
        if type(concrete(other)) is not type(value):
            return NotImplemented
        mine = tuple(getattr(proxy, f.name) for f in dataclasses.fields(value) if f.compare)
        theirs = tuple(getattr(other, f.name) for f in dataclasses.fields(value) if f.compare)
        return {"__eq__": lambda a, b: a == b, "__ne__": lambda a, b: a != b,
                "__lt__": lambda a, b: a < b, "__le__": lambda a, b: a <= b,
                "__gt__": lambda a, b: a > b, "__ge__": lambda a, b: a >= b}[name](mine, theirs)
    if name in ("__repr__", "__hash__"):
        _touch_fields(proxy, "repr" if name == "__repr__" else "compare")
        method = getattr(type(value), name)
        return method(value)
    raise GraphBreak(f"{type(value).__qualname__}.{name} (generated by dataclasses)")


# ----- the operators --------------------------------------------------------------------------
def compare(proxy: "ObjectProxy", name: str, other: Any) -> Any:
    """``proxy <op> other`` with Python's rich-comparison protocol, on the real objects."""
    from .lifting import ObjectProxy
    mine, theirs = type(concrete(proxy)), type(concrete(other))
    reflected = REFLECTED[name]
    first_other = theirs is not mine and issubclass(theirs, mine) and isinstance(other, ObjectProxy) \
        and lookup_special(theirs, reflected)[1] is not lookup_special(mine, reflected)[1]
    attempts = [(other, reflected, proxy), (proxy, name, other)] if first_other else \
        [(proxy, name, other), (other, reflected, proxy)]
    for left, method, right in attempts:
        result = _try(left, method, right)
        if result is not NotImplemented:
            return result
    if name in ("__eq__", "__ne__"):
        _pin_identity(proxy)
        same = concrete(proxy) is concrete(other)
        return same if name == "__eq__" else not same
    raise TypeError(f"'{SYMBOLS[name]}' not supported between instances of "
                    f"'{mine.__name__}' and '{theirs.__name__}'")


def _try(left: Any, name: str, right: Any) -> Any:
    from .lifting import ObjectProxy
    if isinstance(left, ObjectProxy):
        return special_method(left, name, right)
    if isinstance(left, (ArrayProxy,)) or _traced(left):
        return getattr(left, name)(right)
    owner, method = lookup_special(type(left), name)
    if owner is object or owner is None or isinstance(left, enum.Enum) \
            or type(left).__module__ == "builtins":
        if owner is object and name == "__eq__":
            return True if left is concrete(right) else NotImplemented
        if owner is object and name == "__ne__":
            return False if left is concrete(right) else NotImplemented
        if owner is object:
            return NotImplemented
        return getattr(type(left), name)(left, concrete(right))
    raise GraphBreak(f"comparing {type(left).__qualname__} (not read through the capture) with "
                     f"{type(concrete(right)).__qualname__}")


def to_str(proxy: "ObjectProxy") -> str:
    return _checked(special_method(proxy, "__str__"), str, "__str__")


def to_repr(proxy: "ObjectProxy") -> str:
    return _checked(special_method(proxy, "__repr__"), str, "__repr__")


def to_hash(proxy: "ObjectProxy") -> int:
    return _checked(special_method(proxy, "__hash__"), int, "__hash__")


def to_format(proxy: "ObjectProxy", spec: str) -> str:
    return _checked(special_method(proxy, "__format__", spec), str, "__format__")


def to_bool(proxy: "ObjectProxy") -> bool:
    return to_bool_result(proxy, special_method(proxy, "__bool__"))


def to_bool_result(proxy: "ObjectProxy", result: Any) -> bool:
    """The truth of what ``__bool__``/``__len__``/``__contains__`` returned."""
    if isinstance(result, bool):
        return result
    if isinstance(result, int) and not _traced(result):  # from __len__
        return result != 0
    return _truth(proxy, result)


def to_len(proxy: "ObjectProxy") -> int:
    return _checked(special_method(proxy, "__len__"), int, "__len__")


def _checked(result: Any, kind: type, name: str) -> Any:
    if isinstance(result, kind):
        return result
    if _traced(result):
        raise GraphBreak(f"{name} returned a traced value (it depends on the data)")
    raise TypeError(f"{name} returned non-{kind.__name__} (type {type(result).__name__})")


# ----- objects created by compiled code ------------------------------------------------------
def is_constructible(cls: type) -> bool:
    """A user class whose instances the capture builds itself (see ``construct``), or
    ``types.SimpleNamespace``."""
    if cls is types.SimpleNamespace:
        return True
    module = (cls.__module__ or "").split(".")[0]
    if module in ("builtins", "numpy", "astcompiler") or module in sys.stdlib_module_names:
        return False
    return not isinstance(cls, enum.EnumMeta)


def _check_class(cls: type) -> None:
    if type(cls).__call__ is not type.__call__:
        raise GraphBreak(f"constructing {cls.__qualname__}: its metaclass defines __call__")
    if cls.__new__ is not object.__new__:
        raise GraphBreak(f"constructing {cls.__qualname__}: it defines (or inherits) __new__")
    for hook in ("__getattribute__", "__setattr__", "__delattr__"):
        owner, method = lookup_special(cls, hook)
        if owner is not object and not _frozen_setter(cls, method):
            raise GraphBreak(f"constructing {cls.__qualname__}: it defines {hook}")


def _frozen_setter(cls: type, method: Any) -> bool:
    params = getattr(cls, "__dataclass_params__", None)
    return params is not None and params.frozen and _is_generated_dataclass_method(cls, method)


def construct(runtime: Any, cls: type, args: tuple, kwargs: dict) -> Any:
    """``cls(*args, **kwargs)`` for a user class, captured: a ``LocalObject`` whose
    ``__init__`` is inlined (or, for a dataclass's generated one, replayed from its fields)."""
    from .lifting import LocalObject
    if cls is types.SimpleNamespace:  # its C __init__ sets the keyword arguments
        if args:
            raise TypeError("no positional arguments expected")
        namespace = LocalObject(runtime.tracer, types.SimpleNamespace())
        for name, value in kwargs.items():
            object.__setattr__(concrete(namespace), name, value)
        return namespace
    _check_class(cls)
    instance = LocalObject(runtime.tracer, object.__new__(cls))
    init = lookup_special(cls, "__init__")[1]
    if init is object.__init__:
        if args or kwargs:
            raise TypeError(f"{cls.__name__}() takes no arguments")
    elif _is_generated_dataclass_method(cls, init):
        _dataclass_init(runtime, instance, cls, args, kwargs)
    elif isinstance(init, types.FunctionType):
        result = runtime.inline(init, (instance, *args), kwargs)
        if result is not None:
            raise TypeError(f"__init__() should return None, not '{type(result).__name__}'")
    else:
        raise GraphBreak(f"constructing {cls.__qualname__}: its __init__ has no source")
    return instance


def _dataclass_init(runtime: Any, instance: "ObjectProxy", cls: type, args: tuple,
                    kwargs: dict) -> None:
    """What the generated ``__init__`` does: bind the arguments like its signature, call
    ``default_factory`` for missing ones, set every field, then call ``__post_init__``."""
    from .runtime.api import signature_of
    value = concrete(instance)
    bound = signature_of(cls.__init__).bind(instance, *args, **kwargs)
    bound.apply_defaults()
    arguments = bound.arguments
    init_vars = []
    for field in getattr(cls, "__dataclass_fields__").values():
        if field._field_type is dataclasses._FIELD_INITVAR:  # noqa: SLF001 - InitVar pseudo-fields
            init_vars.append(arguments[field.name])
            continue
        if field._field_type is not dataclasses._FIELD:  # noqa: SLF001 - ClassVar
            continue
        if field.init:
            item = arguments[field.name]
            if item is dataclasses._HAS_DEFAULT_FACTORY:  # noqa: SLF001
                item = runtime.call(field.default_factory)
        elif field.default_factory is not dataclasses.MISSING:
            item = runtime.call(field.default_factory)
        elif field.default is not dataclasses.MISSING:
            item = field.default
        else:
            continue
        object.__setattr__(value, field.name, item)
    post_init = getattr(cls, "__post_init__", None)
    if post_init is not None:
        runtime.call(getattr(instance, "__post_init__"), *init_vars)


def object_state(value: "ObjectProxy") -> tuple[type, dict, dict]:
    """``(class, instance dict, slots)`` of a ``LocalObject``: what the run code rebuilds."""
    obj = concrete(value)
    slots = {}
    for klass in type(obj).__mro__:
        names = klass.__dict__.get("__slots__", ())
        for name in ((names,) if isinstance(names, str) else names):
            if name in ("__dict__", "__weakref__") or name in slots:
                continue
            try:
                slots[name] = object.__getattribute__(obj, name)
            except AttributeError:  # a slot never set
                continue
    return type(obj), dict(getattr(obj, "__dict__", {})), slots


def new_object(cls: type, state: dict, slots: dict) -> Any:
    """Run time: a new instance of ``cls`` with the captured state (no ``__init__`` runs: the
    capture already did what it does)."""
    obj = object.__new__(cls) if cls.__new__ is object.__new__ else cls.__new__(cls)
    if state:
        object.__getattribute__(obj, "__dict__").update(state)
    for name, item in slots.items():
        object.__setattr__(obj, name, item)
    return obj


# ----- attributes of objects created by compiled code ---------------------------------------
def _in_region(proxy: "ObjectProxy", what: str) -> None:
    if object.__getattribute__(proxy, "_ac_tracer").in_region:
        raise GraphBreak(f"{what} an attribute of a {type(concrete(proxy)).__qualname__} inside a "
                         "compiled loop or branch on array data")


def local_getattr(proxy: "ObjectProxy", name: str) -> Any:
    """``obj.name`` as Python resolves it: data descriptors (properties: inlined), the
    instance's own attributes, methods (inlined when called), class attributes, then a
    ``__getattr__`` fallback (inlined)."""
    from .lifting import BoundMethod
    obj = concrete(proxy)
    cls = type(obj)
    owner, found = lookup_special(cls, name)
    if isinstance(found, property):
        if found.fget is None:
            raise AttributeError(f"property {name!r} of {cls.__name__!r} object has no getter")
        return _inline_user(proxy, found.fget, (proxy,), f"{cls.__qualname__}.{name}")
    data_descriptor = found is not _MISSING and hasattr(type(found), "__set__")
    if data_descriptor and not isinstance(found, (types.MemberDescriptorType,
                                                  types.GetSetDescriptorType)):
        raise GraphBreak(f"{cls.__qualname__}.{name} is a descriptor "
                         f"({type(found).__qualname__}) that compiled code does not model")
    if data_descriptor:  # a slot (or __dict__/__weakref__)
        return object.__getattribute__(obj, name)
    state = getattr(obj, "__dict__", None)
    if state is not None and name in state:
        return state[name]
    if isinstance(found, types.FunctionType):
        return BoundMethod(found, proxy)
    if isinstance(found, staticmethod):
        return found.__func__
    if isinstance(found, classmethod):
        return types.MethodType(found.__func__, cls)
    if found is not _MISSING:
        if hasattr(type(found), "__get__"):
            raise GraphBreak(f"{cls.__qualname__}.{name} is a descriptor "
                             f"({type(found).__qualname__}) that compiled code does not model")
        return found
    fallback = lookup_special(cls, "__getattr__")[1]
    if isinstance(fallback, types.FunctionType):
        return _inline_user(proxy, fallback, (proxy, name), f"{cls.__qualname__}.__getattr__")
    raise AttributeError(f"'{cls.__name__}' object has no attribute '{name}'")


def _inline_user(proxy: "ObjectProxy", fn: Any, args: tuple, what: str) -> Any:
    if not isinstance(fn, types.FunctionType) or not has_source(fn):
        raise GraphBreak(f"{what} has no source to rewrite")
    return _runtime(proxy).inline(fn, args, {})


def local_setattr(proxy: "ObjectProxy", name: str, value: Any) -> None:
    """``obj.name = value`` on an object created by the compiled code: done on the object."""
    obj = concrete(proxy)
    cls = type(obj)
    params = getattr(cls, "__dataclass_params__", None)
    if params is not None and params.frozen:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    _in_region(proxy, "setting")
    found = lookup_special(cls, name)[1]
    if isinstance(found, property):
        if found.fset is None:
            raise AttributeError(f"property {name!r} of {cls.__name__!r} object has no setter")
        _inline_user(proxy, found.fset, (proxy, value), f"{cls.__qualname__}.{name}")
        return
    if found is not _MISSING and hasattr(type(found), "__set__") \
            and not isinstance(found, types.MemberDescriptorType):
        raise GraphBreak(f"setting {cls.__qualname__}.{name}, a descriptor "
                         f"({type(found).__qualname__})")
    object.__setattr__(obj, name, value)


def local_delattr(proxy: "ObjectProxy", name: str) -> None:
    obj = concrete(proxy)
    params = getattr(type(obj), "__dataclass_params__", None)
    if params is not None and params.frozen:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    _in_region(proxy, "deleting")
    object.__delattr__(obj, name)
