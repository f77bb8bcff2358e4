"""Source rewriting: user functions -> graph-building code (libcst), one construct per module."""

from .function import (RULES, RewrittenFunction, is_generated, rewrite_definition,
                       rewrite_function, rewrite_module_source)

__all__ = ["RULES", "RewrittenFunction", "is_generated", "rewrite_definition",
           "rewrite_function", "rewrite_module_source"]
