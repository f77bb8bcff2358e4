"""What a call site becomes at capture time (``__ac.call(fn, *args, **kwargs)``).

In order: a method read through an object proxy (inlined), a function already rewritten (called
as is), a NumPy op from the registry (graph nodes, or folded when every argument is constant), a
builtin with a handler, a NumPy scalar type (a cast), a user function with source (rewritten and
inlined), a pure function on constants (evaluated). Anything else is a graph break that names
what was called.
"""

from __future__ import annotations

import enum
import functools
import types
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...exc import GraphBreak
from ...ops import REGISTRY
from ...ops.ufunc_methods import lookup_bound_method
from .. import objects
from .conversions import CONVERSION_HANDLERS
from ..lifting import BoundMethod, Deferring, GuardedDict, GuardedList, NamespaceProxy, ObjectProxy
from ..proxy import ArrayProxy
from ..sizes.symbolic import SymInt
from .regions import SymRange
from ..state import HANDLERS
from ..tracer import contains_proxy

if TYPE_CHECKING:  # pragma: no cover
    from .api import Runtime

_IO_BUILTINS = {print: "print()", input: "input()", open: "open()", exec: "exec()",
                eval: "eval()", compile: "compile()", globals: "globals()", locals: "locals()",
                vars: "vars()", breakpoint: "breakpoint()", setattr: "setattr()",
                delattr: "delattr()", help: "help()"}
_PURE_MODULES = {"math", "cmath", "operator", "builtins", "_operator", "itertools", "functools"}
_PURE_BUILTINS = {abs, all, any, bool, callable, chr, complex, dict, divmod, enumerate, filter,
                  float, format, frozenset, getattr, hasattr, hash, int, isinstance, issubclass,
                  iter, len, list, map, max, min, next, ord, pow, range, repr, reversed, round,
                  set, slice, sorted, str, sum, tuple, zip, id}


def _describe(fn: Any) -> str:
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if module and module != "builtins" else name


def _isinstance(runtime: "Runtime", obj: Any, classinfo: Any) -> bool:
    from ..sizes.symbolic import is_symbolic, python_stand_in
    if is_symbolic(obj):  # a dynamic int (or a decision on one) is an int (a bool) to Python
        return isinstance(python_stand_in(obj), classinfo)
    if isinstance(obj, ArrayProxy):
        runtime.tracer.refuse_ambiguous(obj)
        return isinstance(obj.example, classinfo)
    if isinstance(obj, ObjectProxy):
        return isinstance(obj._ac_value, classinfo)
    return isinstance(obj, classinfo)


def _type(runtime: "Runtime", obj: Any, *rest: Any) -> Any:
    if rest:
        raise GraphBreak("type() with three arguments (class creation)")
    from ..sizes.symbolic import is_symbolic, python_stand_in
    if is_symbolic(obj):
        return type(python_stand_in(obj))
    if isinstance(obj, ArrayProxy):
        runtime.tracer.refuse_ambiguous(obj)
        return type(obj.example)
    if isinstance(obj, Deferring):  # a lifted list, dict or set: the user's own class
        return obj.__class__
    if isinstance(obj, ObjectProxy):
        source = object.__getattribute__(obj, "_ac_source")
        if source is None:  # made inside the compiled code
            return type(obj._ac_value)
        from ..lifting import lift  # the class read from the object: its attributes guarded
        from ..sources import Source
        return lift(runtime.tracer, type(obj._ac_value),
                    Source(f"type({source.name})", f"type({source.expr})"))
    return type(obj)


def _len(runtime: "Runtime", obj: Any) -> Any:
    """``len(x)``; of an array whose first size only the run knows (a slice with bounds read
    from data), that size as a traced int (``len(data[lo:hi])`` in a loop)."""
    if isinstance(obj, ArrayProxy) and obj.ndim:
        first = obj.shape[0]
        if isinstance(first, SymInt) and runtime.tracer.run_time_length(first.expr):
            return first
    return len(obj)


def _range(runtime: "Runtime", *args: Any) -> Any:
    """``range`` with traced bounds (or dynamic sizes) is a SymRange (a loop region), else a plain
    range."""
    from ..sizes.symbolic import SymInt
    if any(isinstance(a, SymInt) for a in args):  # a dynamic size: read at run time
        args = tuple(runtime.tracer.sym_value(a.expr) if isinstance(a, SymInt) else a for a in args)
    if any(isinstance(a, ArrayProxy) for a in args):
        for a in args:
            if isinstance(a, ArrayProxy) and (a.ndim != 0 or a.dtype.kind not in "iub"):
                raise TypeError(f"'{a.dtype}' object cannot be interpreted as an integer")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        # a run-time step of 0 raises Python's ValueError where the loop runs (eager, numba)
        if not isinstance(step, ArrayProxy) and step == 0:
            raise ValueError("range() arg 3 must not be zero")
        return SymRange(start, stop, step)
    return range(*args)


def _id(runtime: "Runtime", obj: Any) -> int:
    """``id()`` of the real object (its identity is then guarded); a traced array has none yet."""
    if isinstance(obj, ArrayProxy):
        raise GraphBreak("id() of a traced array (a new array at run time)")
    if isinstance(obj, ObjectProxy):
        return objects.identity(obj)
    return id(obj)


def _repr(runtime: "Runtime", obj: Any) -> str:
    if contains_proxy(obj):
        raise GraphBreak("repr() of a traced array's value needs the array's data in Python "
                         "(data-dependent)")
    return repr(obj)


def _ascii(runtime: "Runtime", obj: Any) -> str:
    _repr(runtime, obj)
    return ascii(obj)


HANDLERS.update({isinstance: _isinstance, type: _type, len: _len, range: _range, id: _id,
                 repr: _repr, ascii: _ascii})
HANDLERS.update(CONVERSION_HANDLERS)  # int/float/complex/bool/max/min of traced numbers


def _is_pure_callable(fn: Any) -> bool:
    if _hashable(fn) and fn in _PURE_BUILTINS:
        return True
    module = getattr(fn, "__module__", None)
    if module in _PURE_MODULES and not (module == "builtins" and fn in _IO_BUILTINS):
        return True
    owner = getattr(fn, "__self__", None)
    # methods of immutable constants: "x".join, (1, 2).index, 3.0.is_integer
    return isinstance(owner, (str, bytes, tuple, int, float, complex, frozenset, np.dtype))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _numpy_scalar_type(runtime: "Runtime", kind: type, args: tuple, kwargs: dict) -> Any:
    from ..sizes.symbolic import SymInt
    args = tuple(a.value() if isinstance(a, SymInt) else a for a in args)  # read at run time
    if len(args) == 1 and not kwargs and isinstance(args[0], ArrayProxy):
        value = runtime.tracer.call_op("astype", (args[0], np.dtype(kind)), {})
        return value if value.ndim else value[()]
    if contains_proxy((args, kwargs)):
        raise GraphBreak(f"np.{kind.__name__}(...) of traced values")
    return kind(*args, **kwargs)


_WARNED_EAGER: set[str] = set()


def _check_eager_only(fn: Any) -> None:
    """Methods such as Module.state_dict run eagerly (their hooks fire): a graph break, with one
    warning per method pointing to the docs."""
    reason = getattr(fn, "__ac_eager__", None)
    if not reason:
        return
    if fn.__qualname__ not in _WARNED_EAGER:
        _WARNED_EAGER.add(fn.__qualname__)
        import warnings
        from ...source.loading import user_stacklevel
        warnings.warn(f"astcompiler: {reason}; the compiled function breaks its graph there",
                      RuntimeWarning, stacklevel=user_stacklevel())
    raise GraphBreak(f"{fn.__qualname__} runs eagerly: {reason}")


_MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
             "update", "setdefault", "popitem", "add", "discard"}


def _is_pytree_class(cls: type) -> bool:
    from ...pytree import DEFAULT as pytrees
    return cls in pytrees._nodes and cls not in (tuple, list, dict, type(None))


def _construct_pytree(runtime: "Runtime", cls: type, args: tuple, kwargs: dict) -> Any:
    """A registered pytree class (a container of arrays) is built like any user class (or as is,
    if it is not one); a registered constant must come from outside (it is compared by equality
    in guards)."""
    from ...pytree import DEFAULT as pytrees
    if pytrees._nodes[cls].constant:
        raise GraphBreak(f"constructing {cls.__qualname__} (registered with register_constant) "
                         "inside the compiled region; create it outside and pass it in")
    if objects.is_constructible(cls):
        return objects.construct(runtime, cls, args, kwargs)
    return cls(*args, **kwargs)


def _call_object(runtime: "Runtime", fn: ObjectProxy, args: tuple, kwargs: dict) -> Any:
    """A callable object read from outside. A compiled function is inlined (its original,
    guarded at ``<source>._ac_original``); a ``functools.partial`` calls its function with its
    stored arguments (each read from the partial, with guards); others call ``__call__``."""
    from ..lifting import lift
    value, source, tracer = fn._ac_value, fn._ac_source, runtime.tracer
    original = vars(value).get("_ac_original") if hasattr(value, "__dict__") else None
    if isinstance(original, types.FunctionType):
        inner = lift(tracer, original, source.attr("_ac_original"))
        return runtime.inline(inner, args, kwargs)
    if type(value) is functools.partial:
        inner = lift(tracer, value.func, source.attr("func"))
        stored = lift(tracer, value.args, source.attr("args"))
        keywords = lift(tracer, value.keywords, source.attr("keywords"))
        return dispatch_call(runtime, inner, (*stored, *args), {**keywords, **kwargs})
    return dispatch_call(runtime, getattr(fn, "__call__"), args, kwargs)


def _transform_of(fn: Any) -> Any:
    """A call captured by its own rule, ``(runtime, args, kwargs) -> result``: the function
    ``ac.grad`` returns (``__ac_transform__``) or an object whose class has ``__ac_capture__``."""
    target = fn._ac_value if isinstance(fn, ObjectProxy) else fn
    if isinstance(target, types.FunctionType):
        return target.__dict__.get("__ac_transform__")
    capture = getattr(type(target), "__ac_capture__", None)
    return None if capture is None else functools.partial(capture, target)


def dispatch_call(runtime: "Runtime", fn: Any, args: tuple, kwargs: dict) -> Any:
    """Capture one call; see the module docstring for the order of the cases."""
    if isinstance(fn, BoundMethod):
        _check_eager_only(fn.func)
        return runtime.inline(fn.func, (fn.self_, *args), kwargs)
    if isinstance(fn, ArrayProxy):
        raise TypeError("'numpy.ndarray' object is not callable")
    if isinstance(fn, NamespaceProxy):  # a class read from outside: call the class itself
        if isinstance(fn._ac_value, types.ModuleType):
            raise TypeError("'module' object is not callable")
        return dispatch_call(runtime, fn._ac_value, args, kwargs)
    transform = _transform_of(fn)
    if transform is not None:  # ac.grad and friends (autodiff/): capture fn and its backward
        return transform(runtime, args, kwargs)
    if isinstance(fn, ObjectProxy):
        return _call_object(runtime, fn, args, kwargs)
    if getattr(fn, "__ac_traced_method__", False) or runtime.is_generated(fn):
        return fn(*args, **kwargs)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (GuardedList, GuardedDict)):
        return fn(*args, **kwargs)  # recorded as a side effect, replayed after the graph
    if type(owner) in (list, dict, set) and not isinstance(fn, type):
        if runtime.tracer.in_region and getattr(fn, "__name__", "") in _MUTATING:
            raise GraphBreak(f"{type(owner).__name__}.{fn.__name__} inside a compiled loop or "
                             "branch on array data")
        return fn(*args, **kwargs)  # a container made inside the function: plain Python
    nonstrict = getattr(fn, "__ac_nonstrict__", None)
    if nonstrict is not None:
        from ..nonstrict import trace_nonstrict
        return trace_nonstrict(runtime, fn, nonstrict, args, kwargs)
    allowed = getattr(fn, "__ac_allow_in_graph__", None)
    if allowed is not None:
        from ..nonstrict import call_allowed
        return call_allowed(runtime, allowed, args, kwargs)
    if _hashable(fn):
        op = REGISTRY.lookup_callable(fn)
        if op is not None:
            return runtime.tracer.trace_op(op, args, kwargs)
        handler = HANDLERS.get(fn)
        if handler is not None:
            return handler(runtime, *args, **kwargs)
        if fn in _IO_BUILTINS:
            raise GraphBreak(f"{_IO_BUILTINS[fn]} is a side effect (I/O) that compiled code "
                             "cannot replay; move it out of the compiled function")
    bound_ufunc_method = lookup_bound_method(fn)
    if bound_ufunc_method is not None:  # np.add.outer, np.maximum.reduce, ...
        op, ufunc = bound_ufunc_method
        return runtime.tracer.trace_op(op, (ufunc, *args), kwargs)
    if isinstance(fn, type) and issubclass(fn, np.generic):
        return _numpy_scalar_type(runtime, fn, args, kwargs)
    if isinstance(fn, type) and _is_pytree_class(fn):
        return _construct_pytree(runtime, fn, args, kwargs)
    if isinstance(fn, enum.EnumMeta):  # Mode(1), Mode["ADD"]: a lookup of an existing member
        if contains_proxy((args, kwargs)):
            raise GraphBreak(f"{fn.__qualname__}(...) of a traced value")
        return fn(*args, **kwargs)
    if isinstance(fn, type) and objects.is_constructible(fn):  # a user class: capture __init__
        return objects.construct(runtime, fn, args, kwargs)
    unwrapped = getattr(fn, "_ac_original", None)  # another compiled function: inline it
    if unwrapped is not None:
        return runtime.inline(unwrapped, args, kwargs)
    if isinstance(fn, functools.partial):
        return dispatch_call(runtime, fn.func, (*fn.args, *args), {**fn.keywords, **kwargs})
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        return runtime.inline(fn.__func__, (fn.__self__, *args), kwargs)
    if isinstance(fn, types.FunctionType):
        module = fn.__module__ or ""
        if getattr(fn, "__ac_disabled__", False):
            raise GraphBreak(f"{fn.__qualname__} is marked astcompiler.disable: it runs eagerly")
        _check_eager_only(fn)
        if (module == "astcompiler" or module.startswith("astcompiler.")) \
                and not module.startswith("astcompiler.nn"):
            raise GraphBreak(f"astcompiler.{fn.__name__} cannot be called inside compiled code")
        if module == "numpy" or module.startswith("numpy."):
            raise GraphBreak(f"np.{fn.__name__} is not supported by astcompiler yet")
        return runtime.inline(fn, args, kwargs)
    if not contains_proxy((args, kwargs)) and _is_pure_callable(fn):
        return fn(*args, **kwargs)
    if isinstance(fn, np.ufunc):
        raise GraphBreak(f"np.{fn.__name__} is not supported by astcompiler yet")
    if contains_proxy((args, kwargs)) and _is_pure_callable(fn):
        return fn(*args, **kwargs)  # builtins such as sum/max/abs use the proxies' operators
    raise GraphBreak(f"call to {_describe(fn)} is not supported inside compiled code "
                     "(no source to rewrite and not a known NumPy op)")

