"""Symbolic sizes: ``SymInt``/``SymBool`` over a sympy ``ShapeEnv``, the shape rules the ops run
against, size expressions as graph values, and which sizes are dynamic."""
