"""``Parameter``: an ``np.ndarray`` subclass that a ``Module`` registers as one of its parameters.

Like ``torch.nn.Parameter``, only the parameter itself is a ``Parameter``: everything computed
from it (``p + 1``, ``x @ p.T``, ``p[0]``, ``np.concatenate([p, p])``, ``p.reshape(...)``) is a
plain ``np.ndarray``. In-place updates (``p += 1``, ``p[...] = v``, ``np.copyto(p, v)``) write the
parameter's memory and keep it a ``Parameter``. Parameters hash by identity (as torch tensors do),
so they can key dicts and sets. ``copy.deepcopy`` and pickling keep the class.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["Parameter"]


def _plain(value: Any) -> Any:
    """``value`` as a plain ndarray view when it is a Parameter; containers are unwrapped too."""
    if isinstance(value, Parameter):
        return np.ndarray.view(value, np.ndarray)
    if type(value) in (tuple, list):
        return type(value)(_plain(item) for item in value)
    return value


def _returns_plain(name: str) -> Callable[..., Any]:
    """An ndarray method that runs on a plain view, so its result is never a Parameter."""
    base = getattr(np.ndarray, name)

    def method(self: "Parameter", *args: Any, **kwargs: Any) -> Any:
        return base(np.ndarray.view(self, np.ndarray), *args, **kwargs)

    method.__name__ = name
    method.__doc__ = base.__doc__
    return method


# ndarray methods that would otherwise build their result with the caller's subclass.
_PLAIN_METHODS = (
    "__getitem__", "__iter__", "argpartition", "argsort", "astype", "choose", "clip", "compress",
    "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot", "flatten", "nonzero",
    "ravel", "repeat", "reshape", "round", "searchsorted", "squeeze", "swapaxes", "take",
    "transpose",
)


class Parameter(np.ndarray):
    """A module parameter: ``Parameter(np.zeros(3))`` shares memory with the array it wraps."""

    __hash__ = object.__hash__  # identity, like torch tensors (== stays element-wise)

    def __new__(cls, data: Any = None) -> "Parameter":
        array = np.empty(0) if data is None else np.asarray(data)
        return array.view(cls)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + repr(np.ndarray.view(self, np.ndarray))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = _plain(out)
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if out is None or method == "at":
            return result
        return out[0] if len(out) == 1 else out  # in place: the caller's own arrays

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        plain_kwargs = {key: _plain(value) for key, value in kwargs.items()}
        result = super().__array_function__(func, types, _plain(args), plain_kwargs)
        out = kwargs.get("out")
        return out if isinstance(out, Parameter) else result

    def view(self, *args: Any, **kwargs: Any) -> Any:
        """As ``ndarray.view``; the result is a plain ndarray unless a subclass is asked for."""
        result = np.ndarray.view(self, *args, **kwargs)
        asked = kwargs.get("type", args[-1] if args else None)
        if isinstance(asked, type) and issubclass(asked, np.ndarray):
            return result
        return np.ndarray.view(result, np.ndarray)

    @property
    def T(self) -> np.ndarray:  # noqa: N802 (ndarray's name)
        return np.ndarray.view(self, np.ndarray).T

    @property
    def mT(self) -> np.ndarray:  # noqa: N802
        return np.ndarray.view(self, np.ndarray).mT


for _name in _PLAIN_METHODS:
    setattr(Parameter, _name, _returns_plain(_name))
del _name
