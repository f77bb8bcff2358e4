"""Capture: run graph-building code on proxies to record a Graph, guard facts and outputs."""

from .capture import Capture, capture_function, has_side_effects, is_pure
from .calls import HANDLERS
from .proxy import ArrayProxy
from .tracer import Tracer, compiling_scope, is_compiling

__all__ = ["Capture", "capture_function", "has_side_effects", "is_pure", "HANDLERS",
           "ArrayProxy", "Tracer", "compiling_scope", "is_compiling"]
