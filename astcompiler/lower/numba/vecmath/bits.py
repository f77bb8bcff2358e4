"""Generic pieces of the vectorizable math functions: bit casts and fused multiply-add.

numba has no spelling for reinterpreting a float's bits as an integer (or back), which range
reduction needs (exponent extraction, scaling by ``2**k``, classification without float
compares), and no ``fma``. These intrinsics emit the LLVM instructions themselves (``bitcast``,
``llvm.fma``); LLVM vectorizes both. Integer compares on the bit patterns never raise a
floating-point flag, unlike float compares with a NaN operand (``vcmppd`` with an ordered
predicate signals *invalid*), so every classification in ``vecmath`` is done on bits.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["f64_bits", "bits_f64", "f32_bits", "bits_f32", "fma"]


def _bitcast(src: types.Type, dst: types.Type, width: int, to_int: bool):
    """An intrinsic reinterpreting ``src`` (float/int of ``width`` bits) as ``dst``."""
    target = ir.IntType(width) if to_int else (ir.DoubleType() if width == 64 else ir.FloatType())

    def typer(typingctx, value):
        if to_int and value != src:
            return None
        if not to_int and not isinstance(value, types.Integer):
            return None  # numba widens int32 arithmetic to int64: the low bits are taken

        def codegen(context, builder, signature, args):
            raw = args[0]
            if not to_int and raw.type.width != width:
                raw = builder.trunc(raw, ir.IntType(width))
            return builder.bitcast(raw, target)
        return dst(value), codegen
    return intrinsic(typer)


f64_bits = _bitcast(types.float64, types.int64, 64, True)
bits_f64 = _bitcast(types.int64, types.float64, 64, False)
f32_bits = _bitcast(types.float32, types.int32, 32, True)
bits_f32 = _bitcast(types.int32, types.float32, 32, False)


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (``llvm.fma``: one instruction on FMA hardware)."""
    if not (a == b == c and isinstance(a, types.Float)):
        return None

    def codegen(context, builder, signature, args):
        ty = args[0].type
        name = "llvm.fma.f64" if isinstance(ty, ir.DoubleType) else "llvm.fma.f32"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ty, [ty] * 3), name)
        return builder.call(fn, list(args))
    return a(a, a, a), codegen


_WIDE = '"prefer-vector-width"="512"'


@intrinsic
def prefer_wide_vectors(typingctx):
    """Mark the function being compiled (the kernel a vecmath function is inlined into) with
    LLVM's ``"prefer-vector-width"="512"``: on AVX-512 machines whose tuning prefers 256-bit
    vectors (Ice Lake, Rocket Lake...) the loop then runs on ``zmm`` registers, twice the lanes
    (measured 2-3x on exp/sin loops). Elsewhere the attribute changes nothing. A string
    attribute llvmlite does not list, so it is added to the set directly."""
    def codegen(context, builder, signature, args):
        attributes = builder.function.attributes
        if _WIDE not in attributes:
            set.add(attributes, _WIDE)
        return context.get_dummy_value()
    return types.none(), codegen


__all__ += ["prefer_wide_vectors"]
