"""Ufuncs NumPy computes faster than a fused kernel can (issue 10 "never slower than NumPy").

NumPy's x86-64 wheels dispatch many transcendental ufuncs to SIMD loops (SVML and NumPy's own
AVX-512 code) on AVX512_SKX machines: 0.3-1.5 ns an element, faster than ``vecmath``'s
vectorized functions (and far faster than libm) even after the extra memory pass a separate
step costs (``docs/performance.md``, "NumPy's SIMD math"). On such a CPU those ufuncs are not
held by fused kernels at the top level or in host loops: ``keeps_numpy_loop`` vetoes their
kernel rule, so the planner leaves them as NumPy steps (NumPy's exact bits) and fuses their
neighbours around them. Structured loop code (one njit function) keeps its rule: a NumPy step
there would leave the compiled loop; so do arrays of a static size under ``MIN_ELEMENTS``.

The decision is NumPy's own: its CPU features (``__cpu_features__``) and, where NumPy reports
it (``numpy.lib.introspect.opt_func_info``, NumPy >= 2), the loop its build dispatches the
signature to (not its baseline). It is never a timing taken at run time. ``config.numpy_simd_math``
(default on) switches the policy off.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...config import config
from ...graph import Node
from ...ops.registry import REGISTRY

# the CPU feature the table was measured with (NumPy's SVML/AVX-512 loops need it); on other
# CPUs NumPy's loops of most of these functions are scalar libm and the kernels keep theirs
FEATURE = "AVX512_SKX"
# (ufunc, loop dtype) where NumPy's loop on an AVX512_SKX CPU plus one memory pass (about 0.4 ns
# an element for float32, 0.8 for float64) beats the kernel's function alone; measured side by
# side by ``benchmarks/numpy_simd_speed.py`` (docs/performance.md). Left to kernels: float32 exp
# (vecmath is as fast), float64 sin and cos (NumPy's loops take 10-20 ns an element there) and
# the float64 exp family, arctan and cosh (within the extra pass).
# (keyed by the NumPy ufunc: the speed is a property of NumPy's loop, not of an op)
_FLOAT32 = (np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh, np.exp2, np.expm1, np.log,
            np.log2, np.log10, np.log1p, np.arctan, np.arctan2, np.cbrt, np.power)
_FLOAT64 = (np.tan, np.tanh, np.sinh, np.log, np.log2, np.log10, np.log1p, np.arctan2, np.cbrt,
            np.power)
NUMPY_FASTER: frozenset[tuple[np.ufunc, str]] = frozenset(
    [(ufunc, "float32") for ufunc in _FLOAT32] + [(ufunc, "float64") for ufunc in _FLOAT64])
# a static size below this keeps the kernel: a NumPy step and the kernel it splits cost about
# 1 us more, which libm's 10-40 ns an element win back only from about this many elements
MIN_ELEMENTS = 64


def cpu_features() -> dict[str, bool]:
    """NumPy's view of this CPU (feature name -> available)."""
    from numpy._core import _multiarray_umath  # NumPy's own record; no public spelling

    return _multiarray_umath.__cpu_features__


@lru_cache(maxsize=1)
def _dispatch_table() -> dict[str, dict[str, dict[str, str]]] | None:
    try:
        from numpy.lib.introspect import opt_func_info
    except ImportError:  # NumPy < 2: the CPU features decide alone
        return None
    return opt_func_info()


def dispatched(ufunc: np.ufunc, dtype: str) -> bool:
    """Does NumPy's build dispatch ``ufunc``'s all-``dtype`` loop to a SIMD target (not its
    baseline)? True where NumPy does not say."""
    table = _dispatch_table()
    if table is None:
        return True
    signature = np.dtype(dtype).char * (ufunc.nin + ufunc.nout)
    info = table.get(ufunc.__name__, {}).get(signature)
    return info is not None and not info.get("current", "baseline").startswith("baseline")


def numpy_faster(ufunc: np.ufunc, dtype: str) -> bool:
    """Is NumPy's loop of ``ufunc`` on ``dtype`` faster than a kernel's, on this CPU?"""
    return ((ufunc, dtype) in NUMPY_FASTER and bool(cpu_features().get(FEATURE))
            and dispatched(ufunc, dtype))


def keeps_numpy_loop(node: Node, rule: Any) -> bool:
    """Should pointwise ``node`` (kernel rule ``rule``) stay a NumPy step?"""
    if not config.numpy_simd_math or node.op != "call" or node.target not in REGISTRY:
        return False
    op = REGISTRY[node.target]
    if op.kind != "pointwise" or not isinstance(op.ufunc, np.ufunc) or node.kwargs:
        return False
    dtypes = getattr(rule, "operand_dtypes", None)
    if not dtypes or any(d is None or d != dtypes[0] for d in dtypes):
        return False
    if getattr(rule, "result_dtype", None) != dtypes[0] or _small(node):
        return False
    return numpy_faster(op.ufunc, np.dtype(dtypes[0]).name)


def _small(node: Node) -> bool:
    """A static size under ``MIN_ELEMENTS`` (a dynamic size is not small)."""
    shape = node.meta.shape if node.meta is not None else ()
    if not all(isinstance(d, (int, np.integer)) for d in shape):
        return False
    return int(np.prod(shape, dtype=np.int64)) < MIN_ELEMENTS
