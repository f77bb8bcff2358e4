"""Running compiled functions: cache entries, dispatch, recompilation, inspection."""

from .compiled import CompiledFunction, all_compiled_functions, validate_function
from .explain import BreakReason, ExplainOutput, explain
from .show import format_entries, show

__all__ = ["CompiledFunction", "all_compiled_functions", "validate_function",
           "BreakReason", "ExplainOutput", "explain", "format_entries", "show"]
