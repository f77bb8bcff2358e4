"""Small ops that structured control flow needs: a scalar constant as a graph value."""

from __future__ import annotations

from typing import Any

from .registry import register


def _scalar(value: Any) -> Any:
    return value


register("scalar", _scalar, kind="creation", literal=True,
         doc="a Python or NumPy scalar constant as a graph value (loop-carried state, flags)")


def _dim_size(a: Any, dim: int) -> int:
    return int(a.shape[dim])


register("dim_size", _dim_size, kind="extern",
         doc="a.shape[dim] read at run time: the value of a dynamic size")


def _call_function(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


register("call_function", _call_function, kind="extern", side_effects=True,
         doc="allow_in_graph: the user's function called as is, one node in the graph")
