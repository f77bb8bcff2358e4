"""Backends: lower a captured Graph to something runnable."""

from .base import CompiledGraph, check_backend, lookup_backend, list_backends, register_backend


def _eager():
    from .eager import eager_backend
    return eager_backend


def _aot_eager():
    from .eager import aot_eager_backend
    return aot_eager_backend


def _numba():
    from .numba import numba_backend
    return numba_backend


register_backend("eager", _eager)
register_backend("aot_eager", _aot_eager)
register_backend("numba", _numba)

__all__ = ["CompiledGraph", "check_backend", "lookup_backend", "list_backends", "register_backend"]
