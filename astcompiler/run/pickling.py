"""cloudpickle support: compiled functions that cloudpickle (Dask's serializer) sends by value.

Plain ``pickle`` saves a compiled function by reference (its module and name,
``compiled.reference_name``). cloudpickle pickles functions *by value* when a worker cannot import
them by name: functions defined in ``__main__`` (a script, a notebook), in a module registered with
``cloudpickle.register_pickle_by_value``, or locally. For those, a compiled function is saved as its
original function (which cloudpickle pickles by value), its file's name and text (cloudpickle
renames code files ``<dynamic-code>``; the rewriter needs the source), its compile settings and a
token naming this compiled object; unpickling makes one ``CompiledFunction`` per token and process, so a worker
that receives the function with every task compiles it once, and the process that pickled it gets
its own object back.
"""

from __future__ import annotations

import linecache
import pickle
import sys
import threading
import types
import uuid
import weakref
from typing import Any

_LOCK = threading.Lock()
_TOKENS: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()  # compiled -> token
_BY_TOKEN: dict[str, Any] = {}  # token -> the compiled function of this process (kept alive)


def pickled_by_cloudpickle() -> bool:
    """Whether the current pickling runs inside a ``cloudpickle.Pickler.dump``."""
    cloudpickle = sys.modules.get("cloudpickle")
    dump = getattr(getattr(cloudpickle, "Pickler", None), "dump", None)
    code = getattr(dump, "__code__", None)
    if code is None:
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def needs_value(fn: Any, by_reference: Any) -> bool:
    """Whether cloudpickle would pickle ``fn`` by value: defined in ``__main__``, in a module
    registered for pickling by value, or not found by name (``by_reference()`` fails)."""
    module = getattr(fn, "__module__", None)
    if module == "__main__" or module not in sys.modules:
        return True
    registered = getattr(sys.modules["cloudpickle"], "list_registry_pickle_by_value", lambda: ())
    if module in registered():
        return True
    try:
        by_reference()
    except pickle.PicklingError:
        return True
    return False


def by_value_reduction(compiled: Any, settings: dict[str, Any], by_reference: Any) -> Any:
    """``compiled.__reduce__`` under cloudpickle for a function it sends by value:
    ``(rebuild, (token, original function, settings))``; None otherwise (pickle by reference)."""
    fn = compiled.__wrapped__
    if not pickled_by_cloudpickle() or not needs_value(fn, by_reference):
        return None
    with _LOCK:
        token = _TOKENS.get(compiled)
        if token is None:
            token = uuid.uuid4().hex
            _TOKENS[compiled] = token
            _BY_TOKEN[token] = compiled
    filename = fn.__code__.co_filename
    text = "".join(linecache.getlines(filename, fn.__globals__))
    return rebuild, (token, fn, dict(settings), filename, text)


def rebuild(token: str, fn: Any, settings: dict[str, Any], filename: str = "",
            text: str = "") -> Any:
    """The compiled function a by-value pickle names: the one this process already holds for
    ``token`` (it pickled it, or unpickled it before), else ``fn`` compiled with ``settings``
    (its source file's name restored and its text put in ``linecache``)."""
    with _LOCK:
        compiled = _BY_TOKEN.get(token)
        if compiled is None:
            from .compiled import CompiledFunction
            if filename and text:
                restore_source(fn, filename, text)
            compiled = CompiledFunction(fn, **settings)
            _TOKENS[compiled] = token
            _BY_TOKEN[token] = compiled
    return compiled


DYNAMIC = "<dynamic-code>"  # the file name cloudpickle gives the code objects it rebuilds


def restore_source(fn: types.FunctionType, filename: str, text: str) -> None:
    """Give ``fn`` and the by-value functions of its module in its globals (helpers it calls)
    back their file name, and make ``linecache`` serve that file's text (as for a notebook cell)."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    for value in [fn, *fn.__globals__.values()]:
        if isinstance(value, types.FunctionType) and value.__code__.co_filename == DYNAMIC \
                and value.__module__ == fn.__module__:
            value.__code__ = renamed(value.__code__, filename)


def renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and the code objects nested in it with ``co_filename`` set to ``filename``."""
    consts = tuple(renamed(c, filename) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)
