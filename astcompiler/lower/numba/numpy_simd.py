"""Ufuncs NumPy computes faster than a fused kernel can (issue 10 "never slower than NumPy").

NumPy's x86-64 wheels dispatch many transcendental ufuncs to SIMD loops (SVML and NumPy's own
AVX-512 code) on AVX512_SKX machines: 0.3-1.5 ns an element, faster than ``vecmath``'s
vectorized functions (and far faster than libm) even after the extra memory pass a separate
step costs (``docs/performance.md``, "NumPy's SIMD math"). On such a CPU those ufuncs are not
held by fused kernels at the top level or in host loops: ``keeps_numpy_loop`` vetoes their
kernel rule, so the planner leaves them as NumPy steps (NumPy's exact bits) and fuses their
neighbours around them. Structured loop code (one njit function) keeps its rule: a NumPy step
there would leave the compiled loop.

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
# (ufunc, loop dtype) where NumPy's loop on an AVX512_SKX CPU beats the kernel's function plus
# one memory pass (measured side by side by ``benchmarks/numpy_simd_speed.py``)
NUMPY_FASTER: frozenset[tuple[str, str]] = frozenset(
    (name, dtype)
    for name in ("sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "exp2", "expm1", "log",
                 "log2", "log10", "log1p", "arctan", "arctan2", "cbrt", "power")
    for dtype in ("float32", "float64"))


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


def dispatched(name: str, dtype: str) -> bool:
    """Does NumPy's build dispatch ufunc ``name``'s all-``dtype`` loop to a SIMD target (not its
    baseline)? True where NumPy does not say."""
    table = _dispatch_table()
    if table is None:
        return True
    ufunc = getattr(np, name)
    signature = np.dtype(dtype).char * (ufunc.nin + ufunc.nout)
    info = table.get(name, {}).get(signature)
    return info is not None and not info.get("current", "baseline").startswith("baseline")


def numpy_faster(name: str, dtype: str) -> bool:
    """Is NumPy's loop of ufunc ``name`` on ``dtype`` faster than a kernel's, on this CPU?"""
    return ((name, dtype) in NUMPY_FASTER and bool(cpu_features().get(FEATURE))
            and dispatched(name, dtype))


def keeps_numpy_loop(node: Node, rule: Any) -> bool:
    """Should pointwise ``node`` (kernel rule ``rule``) stay a NumPy step?"""
    if not config.numpy_simd_math or node.op != "call" or node.target not in REGISTRY:
        return False
    op = REGISTRY[node.target]
    if op.kind != "pointwise" or op.ufunc is None or node.kwargs:
        return False
    dtypes = getattr(rule, "operand_dtypes", None)
    if not dtypes or any(d is None or d != dtypes[0] for d in dtypes):
        return False
    if getattr(rule, "result_dtype", None) != dtypes[0]:
        return False
    return numpy_faster(op.ufunc.__name__, np.dtype(dtypes[0]).name)
