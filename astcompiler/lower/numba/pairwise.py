"""NumPy's pairwise float sum, bit for bit, in a form LLVM vectorizes (imported by kernel modules).

NumPy adds a contiguous run of ``n`` floats (a row of a reduction over the last axis, or a whole
contiguous array) with ``pairwise_sum`` (``numpy/_core/src/umath/loops_utils.h.src``): ``n < 8``
sequentially from 0; ``n <= 128``: eight accumulators ``r[j] = a[j]``, ``r[j] += a[i + j]`` for
``i = 8, 16, ...``, combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the
tail of ``n % 8`` elements sequentially; above 128 the run splits at ``n2 = n // 2`` rounded down
to a multiple of 8 and both halves recurse; the reduction adds the result to its initial 0.

Each leaf is ``block_sum8``: an intrinsic whose eight accumulators are one ``<8 x double>``
(``zmm``) or ``<8 x float>`` vector, the same additions in the same order as NumPy's C loop;
``block_sums4`` runs four leaves as independent chains (the latency of one chain of adds is what
limits a leaf). ``pairwise_sum`` adds a run by a plan of its tree (``plan_tree``: the leaves and
the order of the additions, made once per run length and kept for two lengths) and walks longer
runs down to nodes of at most ``CHUNK`` elements. Kernels (``cpu.py``) sum an input row of unit
stride in place, or write the summands into a contiguous buffer of at most ``CHUNK`` elements (a
loop LLVM vectorizes, vecmath calls included) and add the buffer; for static rows they write the
tree out themselves. ``pairwise_level`` cuts the tree into equal-depth subtrees for ``prange``
twins: their sums, combined as a perfect binary tree, are NumPy's. ``flat_view`` gives the
flattened twins of ``flat_sums.py`` their collapsed views of N-d operands.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

CHUNK = 2048  # the largest run a kernel buffers before adding it here (a tree node's size)
STACK = 256  # int64 entries of a traversal stack (two per pending range: 2 * 62 levels + 1)
VALUES = 128  # float scratch: pending partial sums of a traversal, leaf sums of a run
LEAF = 128  # NumPy's PW_BLOCKSIZE
SLOT = 256  # int64 entries of one run's plan (see plan_tree)
PLAN = 3 * SLOT  # plans of two run lengths (the ones a tree's nodes alternate between), a stack
_STARTS, _BLOCKS, _PROGRAM, _NODES = 8, 48, 88, 168  # a plan's layout: offsets of its parts
_NEXT = 4  # in the first plan: the slot the next new length replaces

__all__ = ["block_sum8", "block_sums4", "pairwise_sum", "pairwise_level", "plan_tree", "flat_view",
           "sum_1d", "SUM_1D_IMPORT", "CHUNK", "STACK", "VALUES", "LEAF", "PLAN"]


def _tree8(builder, r):
    """``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))`` of an 8-lane vector."""
    def pick(v, lanes):
        mask = ir.Constant(ir.VectorType(ir.IntType(32), len(lanes)), lanes)
        return builder.shuffle_vector(v, v, mask)

    pairs = builder.fadd(pick(r, [0, 2, 4, 6]), pick(r, [1, 3, 5, 7]))
    quads = builder.fadd(pick(pairs, [0, 2]), pick(pairs, [1, 3]))
    i64 = ir.IntType(64)
    return builder.fadd(builder.extract_element(quads, i64(0)),
                        builder.extract_element(quads, i64(1)))


@intrinsic
def block_sum8(typingctx, arr, lo, blocks):
    """``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))`` of the eight accumulators
    ``r[j] = arr[lo + j] + arr[lo + 8 + j] + ...`` over ``blocks`` (>= 1) blocks of 8: NumPy's
    leaf before its tail. ``arr``: a 1-D float64/float32 array of unit stride (any numba
    layout: a row view of an 'A' array whose stride the caller has checked)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1
            and arr.dtype in (types.float64, types.float32)
            and isinstance(lo, types.Integer) and isinstance(blocks, types.Integer)):
        return None
    dtype = arr.dtype

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        start = context.cast(builder, args[1], signature.args[1], types.int64)
        count = context.cast(builder, args[2], signature.args[2], types.int64)
        vector = ir.VectorType(context.get_value_type(dtype), 8)

        def load(block):
            at = builder.gep(array.data, [builder.add(start, builder.mul(block, i64(8)))])
            return builder.load(builder.bitcast(at, vector.as_pointer()), align=dtype.bitwidth // 8)

        acc = cgutils.alloca_once(builder, vector)
        builder.store(load(i64(0)), acc)
        with cgutils.for_range(builder, builder.sub(count, i64(1))) as loop:
            step = builder.fadd(builder.load(acc), load(builder.add(loop.index, i64(1))))
            builder.store(step, acc)
        return _tree8(builder, builder.load(acc))
    return dtype(arr, lo, blocks), codegen


@intrinsic
def block_sums4(typingctx, arr, s0, b0, s1, b1, s2, b2, s3, b3):
    """``block_sum8`` of four leaves at once (starts ``s``, block counts ``b`` >= 1): four
    independent chains of vector adds in one loop. A leaf with fewer blocks than the longest
    adds +0.0 instead (its load is clamped to its last block): that can only turn a -0.0 lane
    into +0.0, which the reduction's final ``0 + sum`` does anyway."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1
            and arr.dtype in (types.float64, types.float32)):
        return None
    dtype = arr.dtype

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        ints = [context.cast(builder, v, t, types.int64)
                for v, t in zip(args[1:], signature.args[1:])]
        starts, blocks = ints[0::2], ints[1::2]
        vector = ir.VectorType(context.get_value_type(dtype), 8)
        zero = ir.Constant(vector, [0.0] * 8)

        def load(start, block):
            at = builder.gep(array.data, [builder.add(start, builder.mul(block, i64(8)))])
            return builder.load(builder.bitcast(at, vector.as_pointer()), align=dtype.bitwidth // 8)

        longest = blocks[0]
        for b in blocks[1:]:
            longest = builder.select(builder.icmp_signed(">", b, longest), b, longest)
        accs = []
        for start in starts:
            acc = cgutils.alloca_once(builder, vector)
            builder.store(load(start, i64(0)), acc)
            accs.append(acc)
        with cgutils.for_range(builder, builder.sub(longest, i64(1))) as loop:
            block = builder.add(loop.index, i64(1))
            for start, count, acc in zip(starts, blocks, accs):
                inside = builder.icmp_signed("<", block, count)
                value = load(start, builder.select(inside, block, builder.sub(count, i64(1))))
                value = builder.select(inside, value, zero)
                builder.store(builder.fadd(builder.load(acc), value), acc)
        sums = [_tree8(builder, builder.load(acc)) for acc in accs]
        return context.make_tuple(builder, signature.return_type, sums)
    return types.UniTuple(dtype, 4)(arr, s0, b0, s1, b1, s2, b2, s3, b3), codegen


@numba.njit(cache=True, error_model="numpy")
def leaf_sum(buf, lo, n, vals, at):
    """NumPy's sum of ``buf[lo:lo + n]`` for ``n <= 128`` (``vals[at]``: scratch of buf's dtype)."""
    vals[at] = 0
    res = vals[at]
    if n < 8:
        for i in range(lo, lo + n):
            res = res + buf[i]
        return res
    res = block_sum8(buf, lo, n // 8)
    for i in range(lo + n - n % 8, lo + n):
        res = res + buf[i]
    return res


@numba.njit(cache=True, error_model="numpy")
def plan_tree(n, plan, base):
    """The sum tree of ``LEAF < n <= CHUNK`` elements in ``plan[base + base:]``: ``n``, its leaves
    (start, blocks of 8) in order, and a program over the leaf sums (``k >= 0``: push leaf
    ``k``'s sum; ``-1``: add the top two), the recursion's order."""
    leaves = 0
    tokens = 0
    top = 0
    plan[base + _NODES] = 0
    plan[base + _NODES + 1] = n
    while top >= 0:
        start = plan[base + _NODES + 2 * top]
        size = plan[base + _NODES + 2 * top + 1]
        top -= 1
        if size < 0:
            plan[base + _PROGRAM + tokens] = -1
            tokens += 1
        elif size > LEAF:
            half = size // 2
            half -= half % 8
            plan[base + _NODES + 2 * top + 2] = 0
            plan[base + _NODES + 2 * top + 3] = -1
            plan[base + _NODES + 2 * top + 4] = start + half
            plan[base + _NODES + 2 * top + 5] = size - half
            plan[base + _NODES + 2 * top + 6] = start
            plan[base + _NODES + 2 * top + 7] = half
            top += 3
        else:
            plan[base + _STARTS + leaves] = start
            plan[base + _BLOCKS + leaves] = size // 8
            plan[base + _PROGRAM + tokens] = leaves
            leaves += 1
            tokens += 1
    plan[base + 0] = n
    plan[base + 1] = leaves
    plan[base + 2] = tokens


@numba.njit(cache=True, error_model="numpy")
def planned_sum(buf, lo, n, plan, vals, at):
    """NumPy's sum of ``buf[lo:lo + n]``, ``LEAF < n <= CHUNK``, by its plan (made when ``n``
    changes): the leaf sums four at a time (``block_sums4``), then the program."""
    if plan[0] == n:
        base = 0
    elif plan[SLOT] == n:
        base = SLOT
    else:
        base = SLOT * plan[_NEXT]
        plan[_NEXT] = 1 - plan[_NEXT]
        plan_tree(n, plan, base)
    leaves = plan[base + 1]
    k = 0
    while k + 4 <= leaves:
        s = base + _STARTS + k
        b = base + _BLOCKS + k
        v0, v1, v2, v3 = block_sums4(buf, lo + plan[s], plan[b], lo + plan[s + 1], plan[b + 1],
                                     lo + plan[s + 2], plan[b + 2], lo + plan[s + 3], plan[b + 3])
        vals[at + k] = v0
        vals[at + k + 1] = v1
        vals[at + k + 2] = v2
        vals[at + k + 3] = v3
        k += 4
    while k < leaves:
        vals[at + k] = block_sum8(buf, lo + plan[base + _STARTS + k], plan[base + _BLOCKS + k])
        k += 1
    last = leaves - 1  # only the last leaf has a tail (n % 8 elements)
    for i in range(lo + plan[base + _STARTS + last] + 8 * plan[base + _BLOCKS + last], lo + n):
        vals[at + last] = vals[at + last] + buf[i]
    top = at + leaves
    for t in range(plan[base + 2]):
        token = plan[base + _PROGRAM + t]
        if token >= 0:
            vals[top] = vals[at + token]
            top += 1
        else:
            top -= 1
            vals[top - 1] = vals[top - 1] + vals[top]
    return vals[top - 1]


@numba.njit(cache=True, error_model="numpy")
def pairwise_sum(buf, lo, n, stack, vals, at):
    """NumPy's pairwise sum of ``buf[lo:lo + n]``. Scratch: ``stack``, ``PLAN`` int64s that keep
    the plans of two run lengths between calls (all zeros before the first call), and
    ``vals[at:]``, of buf's dtype (``VALUES`` in all). Runs above ``CHUNK`` walk the tree down to
    nodes of at most ``CHUNK`` elements, each added by its plan."""
    if n <= LEAF:
        return leaf_sum(buf, lo, n, vals, at)
    if n <= CHUNK:
        return planned_sum(buf, lo, n, stack, vals, at)
    top = 0
    stack[2 * SLOT + 0] = lo
    stack[2 * SLOT + 1] = n
    count = at
    while top >= 0:
        start = stack[2 * SLOT + 2 * top]
        size = stack[2 * SLOT + 2 * top + 1]
        top -= 1
        if size < 0:  # both halves done: combine them
            count -= 1
            vals[count - 1] = vals[count - 1] + vals[count]
        elif size > CHUNK:  # left half first, then the right one, then their sum
            half = size // 2
            half -= half % 8
            stack[2 * SLOT + 2 * top + 2] = 0
            stack[2 * SLOT + 2 * top + 3] = -1
            stack[2 * SLOT + 2 * top + 4] = start + half
            stack[2 * SLOT + 2 * top + 5] = size - half
            stack[2 * SLOT + 2 * top + 6] = start
            stack[2 * SLOT + 2 * top + 7] = half
            top += 3
        else:
            vals[count] = planned_sum(buf, start, size, stack, vals, count + 1) \
                if size > LEAF else leaf_sum(buf, start, size, vals, count)
            count += 1
    return vals[at]


@numba.njit(cache=True, error_model="numpy")
def sum_1d(a):
    """NumPy's ``a.sum()`` of a 1-D float array of positive stride (a loop's ``data[lo:hi]``):
    NumPy adds its elements in order by ``pairwise_sum``, on a strided run as on a copy."""
    buf = a if a.strides[0] == a.itemsize else np.ascontiguousarray(a)
    stack = np.zeros(PLAN, np.int64)
    vals = np.empty(VALUES, a.dtype)
    total = pairwise_sum(buf, 0, buf.shape[0], stack, vals, 0)
    vals[0] = 0  # the reduction's initial 0, in a's dtype (-0.0 sums are 0.0, as in NumPy)
    return vals[0] + total


# loop code's import of it (``structured._Emitter.numpy_sum``)
SUM_1D_IMPORT = "\nfrom astcompiler.lower.numba.pairwise import sum_1d as _ac_sum_1d\n"


@numba.njit(cache=True, error_model="numpy")
def pairwise_level(n, starts, sizes, smallest):
    """Cut the pairwise tree of ``n`` elements into ``2**k`` subtrees of one depth (at most
    ``len(starts)``, each above ``smallest`` elements and above a leaf); their sums combined
    as a perfect binary tree, in order, give NumPy's sum. Returns their number (>= 1)."""
    starts[0] = 0
    sizes[0] = n
    count = 1
    while 2 * count <= starts.shape[0]:
        for c in range(count):
            if sizes[c] <= LEAF or sizes[c] // 2 < smallest:
                return count
        for c in range(count - 1, -1, -1):  # split in place, from the end
            half = sizes[c] // 2
            half -= half % 8
            starts[2 * c] = starts[c]
            starts[2 * c + 1] = starts[c] + half
            sizes[2 * c + 1] = sizes[c] - half
            sizes[2 * c] = half
        count *= 2
    return count




def _view(layout: str):
    """The typing of a view intrinsic whose result has numba ``layout`` (``flat_view``: "A")."""
    def typer(typingctx, arr, shape, strides):
        if not (isinstance(arr, types.Array) and isinstance(shape, types.BaseTuple)
                and isinstance(strides, types.BaseTuple) and len(shape) == len(strides)
                and all(isinstance(t, types.Integer) for t in (*shape, *strides))):
            return None
        result = arr.copy(ndim=len(shape), layout=layout)

        def codegen(context, builder, signature, args):
            from numba.core.imputils import impl_ret_borrowed
            from numba.np.arrayobj import populate_array

            src = context.make_array(signature.args[0])(context, builder, args[0])
            dst = context.make_array(signature.return_type)(context, builder)
            i64 = ir.IntType(64)

            def ints(value, tuple_type):
                return cgutils.pack_array(builder, [
                    context.cast(builder, v, t, types.int64)
                    for v, t in zip(cgutils.unpack_tuple(builder, value), tuple_type)], i64)
            populate_array(dst, data=src.data, shape=ints(args[1], signature.args[1]),
                           strides=ints(args[2], signature.args[2]), itemsize=src.itemsize,
                           meminfo=src.meminfo, parent=src.parent)
            return impl_ret_borrowed(context, builder, signature.return_type, dst._getvalue())
        return result(arr, shape, strides), codegen
    typer.__name__ = typer.__qualname__ = "flat_view"
    return typer


flat_view = intrinsic(_view("A"))
flat_view.__doc__ = """``flat_view(arr, shape, strides)``: a view of ``arr``'s buffer with ``shape``
and byte ``strides`` (tuples of ints, one length), which the caller has checked address ``arr``'s
elements (its reduced axes chain into one run: ``flat_sums.py``). numba's ``reshape`` does not
type 'A' layouts."""
