"""Vector-lane loops of float max/min row reductions, with the lanes held in registers.

The generated lane loop (``cpu.KernelEmitter.nest``) keeps a reduction's ``VECTOR_LANES``
accumulators in an array. For max/min, LLVM turns ``acc[u] = v if v >= acc[u] else acc[u]``
into a *masked* store, and the next block's load of the same lanes cannot take its value from
that store (no store forwarding from masked stores): about 8 cycles a vector instead of one.
``lanes_max``/``lanes_min`` run the same blocks of the same lanes (lane ``u`` takes elements
``lo + 64*k + u``), with the same comparison and NaN flag, in vector registers, and store the
lanes back: the accumulators end bit-for-bit as the array loop leaves them. The caller checks
that the row has unit stride and runs the tail (``hi - returned`` elements) itself.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

LANES = 64  # cpu.VECTOR_LANES: the lane arrays' length


def _signature(row, lo, hi, acc, nan):
    """The intrinsic's signature, or None where the arguments do not fit."""
    floats = (types.float32, types.float64)
    if not (isinstance(row, types.Array) and row.ndim == 1 and row.dtype in floats
            and isinstance(acc, types.Array) and acc.ndim == 1 and acc.dtype == row.dtype
            and isinstance(nan, types.Array) and nan.ndim == 1 and nan.dtype == types.boolean
            and isinstance(lo, types.Integer) and isinstance(hi, types.Integer)):
        return None
    return types.intp(row, lo, hi, acc, nan)


def _codegen(keep_new: str):
    """Code for the lane loop; ``keep_new``: the ordered comparison under which a lane takes
    the element (``>=`` max, ``<=`` min), as the reduction's ``combine`` template."""

    def codegen(context, builder, signature, args):
        row_t, lo_t, hi_t, acc_t, nan_t = signature.args
        row = context.make_array(row_t)(context, builder, args[0])
        acc = context.make_array(acc_t)(context, builder, args[3])
        nan = context.make_array(nan_t)(context, builder, args[4])
        i64 = ir.IntType(64)
        lo = context.cast(builder, args[1], lo_t, types.int64)
        hi = context.cast(builder, args[2], hi_t, types.int64)
        element = context.get_value_type(row_t.dtype)
        vector = ir.VectorType(element, LANES)
        flags = ir.VectorType(ir.IntType(8), LANES)
        align = row_t.dtype.bitwidth // 8

        def vec_ptr(data, vtype, at=None):
            pointer = data if at is None else builder.gep(data, [at])
            return builder.bitcast(pointer, vtype.as_pointer())

        lanes = cgutils.alloca_once(builder, vector)
        builder.store(builder.load(vec_ptr(acc.data, vector), align=align), lanes)
        seen = cgutils.alloca_once(builder, ir.VectorType(ir.IntType(1), LANES))
        stored = builder.load(vec_ptr(nan.data, flags), align=1)
        builder.store(builder.icmp_unsigned("!=", stored, ir.Constant(flags, [0] * LANES)), seen)
        extent = builder.sub(hi, lo)
        positive = builder.icmp_signed(">", extent, i64(0))
        blocks = builder.select(positive, builder.sdiv(extent, i64(LANES)), i64(0))
        with cgutils.for_range(builder, blocks) as loop:
            at = builder.add(lo, builder.mul(loop.index, i64(LANES)))
            value = builder.load(vec_ptr(row.data, vector, at), align=align)
            current = builder.load(lanes)
            take = builder.fcmp_ordered(keep_new, value, current)
            builder.store(builder.select(take, value, current), lanes)
            isnan = builder.fcmp_unordered("!=", value, value)
            builder.store(builder.or_(builder.load(seen), isnan), seen)
        builder.store(builder.load(lanes), vec_ptr(acc.data, vector), align=align)
        builder.store(builder.zext(builder.load(seen), flags), vec_ptr(nan.data, flags), align=1)
        end = builder.add(lo, builder.mul(blocks, i64(LANES)))
        return context.cast(builder, end, types.int64, signature.return_type)

    return codegen


@intrinsic
def lanes_max(typingctx, row, lo, hi, acc, nan):
    """``acc[u] = v if v >= acc[u] else acc[u]`` and ``nan[u] |= v != v`` for the elements
    ``v = row[lo + 64*k + u]`` of the whole blocks in ``[lo, hi)``; returns where they end.
    ``row`` must have unit stride (not checked); ``acc``/``nan`` have 64 lanes."""
    signature = _signature(row, lo, hi, acc, nan)
    return None if signature is None else (signature, _codegen(">="))


@intrinsic
def lanes_min(typingctx, row, lo, hi, acc, nan):
    """``lanes_max`` with ``v <= acc[u]``."""
    signature = _signature(row, lo, hi, acc, nan)
    return None if signature is None else (signature, _codegen("<="))


__all__ = ["lanes_max", "lanes_min", "LANES"]
