"""``fma(a, b, c)``: a fused multiply-add for numba kernels (one rounding of ``a * b + c``).

NumPy's SIMD loops compute complex ``multiply``/``square`` and complex ``absolute`` with fused
multiply-adds (``complex_ops.py``); a kernel that computes them with ``fma`` gives NumPy's bits.
Kernel modules import it from here; this module imports numba, so only generated code uses it.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import intrinsic


@intrinsic
def fma(typingctx, a, b, c):  # noqa: ARG001 (numba's intrinsic signature)
    """LLVM's ``llvm.fma`` on three floats of one type."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


__all__ = ["fma"]
