"""``RemovableHandle``: what every ``register_*_hook`` returns (as ``torch.utils.hooks``)."""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, Callable, Iterable

__all__ = ["RemovableHandle", "backward_call_end", "backward_call_start",
           "observe_backward_calls"]

_next_id = itertools.count()  # one id space for every hook, module-level and global


class RemovableHandle:
    """Removes one hook from the dicts it was registered in; also a context manager.

    ``hooks_dict`` holds the hook under ``handle.id``; ``extra_dict`` (a dict or several) holds
    flags for it (``with_kwargs``, ``always_call``). The dicts are held by weak reference, so a
    handle does not keep a module alive. ``on_remove`` runs after a removal that removed something.
    """

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None,
                 on_remove: Callable[[], None] | None = None) -> None:
        self.id: int = next(_next_id)
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        extras: Iterable[Any] = () if extra_dict is None else (
            extra_dict if isinstance(extra_dict, (list, tuple)) else (extra_dict,))
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)
        self._on_remove = on_remove

    def remove(self) -> None:
        """Remove the hook (a no-op when it is already gone)."""
        hooks_dict = self.hooks_dict_ref()
        removed = hooks_dict is not None and hooks_dict.pop(self.id, None) is not None
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None:
                extra.pop(self.id, None)
        if removed and self._on_remove is not None:
            self._on_remove()

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle id={self.id}>"


_OBSERVER = threading.local()  # per thread: what a plain-Python backward_call_start reports to


def observe_backward_calls(observer: Callable[[Any, tuple], None] | None
                           ) -> Callable[[Any, tuple], None] | None:
    """Have ``backward_call_start`` run as plain Python call ``observer(module, args)`` (in this
    thread); returns the previous observer. ``ac.grad`` uses it while it captures a function:
    a hooked module called outside the inlined code cannot get its gradients."""
    previous = getattr(_OBSERVER, "fn", None)
    _OBSERVER.fn = observer
    return previous


def backward_call_start(module: Any, args: tuple) -> Any:
    """Where a module with backward hooks starts its call (``Module._call_impl``). Plain Python:
    nothing (no backward pass runs). Inside an ``ac.grad`` capture (``autodiff/module_hooks.py``)
    it records the call's inputs; the token goes to ``backward_call_end``."""
    observer = getattr(_OBSERVER, "fn", None)
    if observer is not None:
        observer(module, args)
    return None


def backward_call_end(token: Any, result: Any) -> None:
    """Where that call ends: under ``ac.grad`` its outputs are recorded, so the joint graph can
    hand the module's hooks the cotangents of its outputs and inputs after the backward pass."""
    return None
