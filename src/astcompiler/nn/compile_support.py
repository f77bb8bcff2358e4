"""The bridge from ``Module.compile(**kwargs)`` to the compiler.

``Module.__call__`` calls ``_compiled_module_call`` once ``module.compile(...)`` has stored its
keyword arguments in ``module._compile_kwargs``. The compiler support for modules replaces the
body below; until then a compiled module call says so plainly.
"""

from __future__ import annotations

from typing import Any

__all__ = ["_compiled_module_call"]


def _compiled_module_call(module: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``module`` through the compiler with ``module._compile_kwargs`` (not yet available)."""
    import astcompiler  # noqa: F401  (lazy: ``import astcompiler.nn`` must stay cheap)

    raise NotImplementedError("module compilation lands with the compiler support")
