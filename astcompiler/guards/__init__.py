"""Guards: what a cache entry relied on, as a generated Python function with explanations."""

from .codegen import GuardFunction, build_guard, copy_defaults, explain_fact, parameter_list

__all__ = ["GuardFunction", "build_guard", "copy_defaults", "explain_fact", "parameter_list"]
