"""The op registry and every op family (importing this package registers them all)."""

from .registry import REGISTRY, OpDef, ReductionDef, get_op, register
from . import pointwise, reductions, shape  # noqa: F401  (registration side effects)

__all__ = ["REGISTRY", "OpDef", "ReductionDef", "get_op", "register"]
