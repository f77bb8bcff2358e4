"""Reading user source (inspect + linecache + libcst), origins, and loading generated modules.

``loader`` (libcst) is imported on first use of its names: loading generated modules, which a
warm start from the persistent entry cache does, must not import libcst.
"""

from typing import Any

from .loading import load_generated_module, write_generated_file
from .origins import SOURCE_MAPS, register_source_map, user_stack

__all__ = ["FunctionSource", "NoSourceError", "function_source", "load_generated_module",
           "write_generated_file", "SOURCE_MAPS", "register_source_map", "user_stack"]

_FROM_LOADER = ("FunctionSource", "NoSourceError", "function_source")


def __getattr__(name: str) -> Any:
    if name in _FROM_LOADER:
        from . import loader
        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
