"""The op registry and every op family (importing this package registers them all)."""

from .registry import REGISTRY, OpDef, ReductionDef, Store, get_op, register
from . import control, pointwise, reductions, shape  # noqa: F401  (registration side effects)
from . import (creation, manipulation, sorting, scans, contractions, linalg,  # noqa: F401
               ufunc_methods, numeric, python_scalars)
from .ufunc_methods import lookup_bound_method, lookup_ufunc_method

__all__ = ["REGISTRY", "OpDef", "ReductionDef", "Store", "get_op", "register",
           "lookup_ufunc_method", "lookup_bound_method"]
