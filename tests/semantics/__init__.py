"""Differential semantics tests: plain Python versus compiled, on every backend (issue 9)."""
