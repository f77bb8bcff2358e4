"""``RemovableHandle``: what every ``register_*_hook`` returns (as ``torch.utils.hooks``)."""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable, Iterable

__all__ = ["RemovableHandle"]

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
