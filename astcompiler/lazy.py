"""Modules imported on first use: ``from ..lazy import sympy`` binds a stand-in whose first
attribute access imports sympy. For modules that only need sympy inside functions (shape rules)
but are imported where nothing symbolic happens: a warm start from the persistent entry cache
runs wrappers that call ops' NumPy implementations, and must not pay for importing sympy."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name`` and imports it at the first attribute access."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


sympy: Any = LazyModule("sympy")
