"""Small ops that structured control flow needs: a scalar constant as a graph value."""

from __future__ import annotations

from typing import Any

from .registry import register


def _scalar(value: Any) -> Any:
    return value


register("scalar", _scalar, kind="creation",
         doc="a Python or NumPy scalar constant as a graph value (loop-carried state, flags)")
