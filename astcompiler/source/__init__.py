"""Reading user source (inspect + linecache + libcst), origins, and loading generated modules."""

from .loader import FunctionSource, NoSourceError, function_source
from .loading import load_generated_module, write_generated_file
from .origins import SOURCE_MAPS, register_source_map, user_stack

__all__ = ["FunctionSource", "NoSourceError", "function_source", "load_generated_module",
           "write_generated_file", "SOURCE_MAPS", "register_source_map", "user_stack"]
