"""Indexing, views and writes: getitem, setitem, copy_, reshape, transpose, take,
take_along_axis.

Views are made with NumPy itself (by the eager backend and by the numba backend's wrapper), so
view-or-copy semantics (basic vs advanced indexing, reshape of non-contiguous arrays) are NumPy's.
"""

from __future__ import annotations

import operator

import numpy as np
from ..lazy import sympy  # imported at the first shape rule that needs it

from ..graph import Node, map_nodes
from ._args import as_dim, freeze, ndim_of, optional_axis, reject_out
from .registry import Store, register
from .sizes import as_size, product, slice_length


def _getitem(a, index):
    return a[index]


def _setitem(a, index, value):
    a[index] = value


def _copy_into(dst, src):
    np.copyto(dst, src, casting="same_kind")


def _getitem_shape(ctx, args: tuple, kwargs: dict) -> tuple | None:
    """Basic indexing: ints drop a dimension, slices give their length, None adds one."""
    base, index = args
    shape = ctx.shape_of(base)
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (list, np.ndarray)) or len(ctx.shape_of(i)) > 0 for i in items
           if not isinstance(i, (slice, int, type(None), type(Ellipsis)))):
        return None  # advanced indexing
    explicit = sum(1 for i in items if i is not None and i is not Ellipsis)
    out: list = []
    dim = 0
    for item in items:
        if item is Ellipsis:
            out.extend(shape[dim:dim + len(shape) - explicit])
            dim += len(shape) - explicit
        elif item is None:
            out.append(1)
        elif isinstance(item, slice):
            if dim >= len(shape):
                return None
            length = slice_length(ctx, shape[dim], item)
            if length is None:
                return None
            out.append(length)
            dim += 1
        else:  # an integer, constant or computed at run time
            dim += 1
    return tuple(out) + tuple(shape[dim:])


def _masked(args: tuple, kwargs: dict) -> bool:
    """A boolean array in the index: how many elements the read selects depends on the data."""
    found: list[Node] = []
    map_nodes(args[1:], found.append)
    return any(n.meta is not None and n.meta.dtype == np.bool_ and n.meta.ndim > 0 for n in found)


def _index_may_raise(args: tuple, kwargs: dict) -> bool:
    """An IndexError on some run-time values: an integer not provably inside its static
    dimension, or an index array (slices, ``None`` and ``...`` never raise)."""
    base, index = args
    if isinstance(base, Node) and base.meta is None:  # a tuple the graph made (a region's results)
        return not isinstance(index, int)
    items = index if isinstance(index, tuple) else (index,)
    shape = base.meta.shape if isinstance(base, Node) else getattr(base, "shape", None)
    if shape is None:
        return True
    explicit = sum(1 for i in items if i is not None and i is not Ellipsis)
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += len(shape) - explicit
        elif isinstance(item, slice) or item is None:
            dim += isinstance(item, slice)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) \
                and dim < len(shape) and isinstance(shape[dim], (int, np.integer)):
            if not -shape[dim] <= item < shape[dim]:
                return True
            dim += 1
        else:  # computed at run time, an index array or a dynamic dimension
            return True
    return False


register("getitem", _getitem, kind="view", layout_free=True, aliases=(operator.getitem,),
         subscript=True, may_raise=_index_may_raise,
         shape_rule=_getitem_shape, data_dependent_shape=_masked,
         doc="a[index]: basic indexing is a view, integer/boolean arrays make a copy")
def _setitem_store(args: tuple, kwargs: dict) -> Store | None:
    return Store(*args, value_arg=2) if len(args) == 3 and not kwargs else None


def _copy_store(args: tuple, kwargs: dict) -> Store | None:
    return Store(args[0], Ellipsis, args[1], value_arg=1) if len(args) == 2 and not kwargs else None


register("setitem", _setitem, kind="mutation", side_effects=True, aliases=(operator.setitem,),
         store=_setitem_store, subscript=True,
         doc="a[index] = value (NumPy casting and overlap semantics)")
register("copy_", _copy_into, kind="mutation", side_effects=True, store=_copy_store,
         doc="dst[...] = src with same_kind casting: in-place operators and out=")


def _reshape_normalize(a, *shape, order="C", newshape=None, **kwargs):
    if "shape" in kwargs:
        shape = (kwargs.pop("shape"),)
    if newshape is not None:
        shape = (newshape,)
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword argument(s) {sorted(kwargs)}")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    elif len(shape) == 1 and shape[0] is not None:
        shape = (shape[0],)
    return (a, tuple(_reshape_dim(s) for s in shape)), ({"order": order} if order != "C" else {})


def _reshape_dim(size):
    """A concrete size (or -1) as an int; a symbolic size is kept (``int()`` would specialize
    it and recompile for every new size)."""
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return int(size)
    if isinstance(size, (float, str, bytes, bool, np.floating)) or size is None:
        raise TypeError(f"{type(size).__name__!r} object cannot be interpreted as an integer")
    return as_dim(size)


def _reshape(a, shape, order="C"):
    return np.reshape(a, shape, order=order)


def _reshape_shape(ctx, args: tuple, kwargs: dict) -> tuple | None:
    wanted = [ctx.value_expr(d) for d in args[1]]
    if any(w is None for w in wanted):
        return None
    if any(w == -1 for w in wanted):
        known = product([w for w in wanted if w != -1])
        total = product(ctx.shape_of(args[0]))
        wanted = [ctx.simplify(sympy.sympify(total) / known) if w == -1 else w for w in wanted]
    return tuple(as_size(w) for w in wanted)


register("reshape", _reshape, kind="view", normalize=_reshape_normalize, shape_rule=_reshape_shape,
         aliases=(np.reshape,), methods=("reshape",),
         doc="a view when the layout allows it, else a copy (as NumPy)")


def _transpose_normalize(a, *axes, **kwargs):
    if "axes" in kwargs:
        axes = (kwargs.pop("axes"),)
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    ndim = a.ndim
    axes = tuple(range(ndim))[::-1] if not axes else tuple(int(x) % max(ndim, 1) for x in axes)
    return (a, axes), {}


def _transpose(a, axes):
    return np.transpose(a, axes)


def _transpose_shape(ctx, args: tuple, kwargs: dict) -> tuple:
    shape = ctx.shape_of(args[0])
    return tuple(shape[a] for a in args[1])


register("transpose", _transpose, kind="view", layout_free=True, normalize=_transpose_normalize,
         shape_rule=_transpose_shape,
         aliases=(np.transpose,), methods=("transpose",), doc="a.T, np.transpose(a, axes)")


# ---------------------------------------------------------------- take / take_along_axis
# A boolean-mask read ``a[mask]`` is ``getitem`` with a boolean array index: its impl is
# NumPy's indexing, so the result (a copy with a data-dependent length) is NumPy's.

_TAKE_MODES = ("raise", "wrap", "clip")


def _take_normalize(a, indices, axis=None, out=None, mode="raise"):
    reject_out(out, "take")
    if mode not in _TAKE_MODES:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return (freeze(a), freeze(indices)), {"axis": optional_axis(axis, ndim_of(a)), "mode": mode}


def _take(a, indices, axis=None, mode="raise"):
    return np.take(a, indices, axis=axis, mode=mode)


def _take_may_raise(args: tuple, kwargs: dict) -> bool:
    return kwargs.get("mode", "raise") == "raise"  # an index out of bounds: IndexError


register("take", _take, kind="extern", normalize=_take_normalize, aliases=(np.take,),
         methods=("take",), may_raise=_take_may_raise,
         doc="np.take(a, indices, axis, mode): a copy; axis None flattens")


def _take_along_axis_normalize(arr, indices, axis=-1):
    return (freeze(arr), freeze(indices)), {"axis": optional_axis(axis, ndim_of(arr))}


def _take_along_axis(arr, indices, axis=-1):
    return np.take_along_axis(arr, indices, axis=axis)


register("take_along_axis", _take_along_axis, kind="extern",
         normalize=_take_along_axis_normalize, aliases=(np.take_along_axis,),
         may_raise=lambda args, kwargs: True,  # an index out of bounds: IndexError
         doc="np.take_along_axis(arr, indices, axis): indices usually from argsort/argmax")


# ---------------------------------------------------------------- derivatives (autodiff/)
def _define_shape_vjps() -> None:
    from .registry import define_vjp

    def is_array_index(item) -> bool:
        return isinstance(item, (list, np.ndarray)) or getattr(item, "ndim", 0) > 0

    def getitem_vjp(ctx, g):
        """Basic indexing and one boolean mask: the cotangent written into zeros of the input's
        shape; one integer array on the first axis: a scatter-add (a one-hot product, so
        repeated indices add up)."""
        a, index = ctx.args
        items = index if isinstance(index, tuple) else (index,)
        arrays = [i for i in items if is_array_index(i)]
        if not arrays or (len(items) == 1 and np.dtype(arrays[0].dtype) == np.bool_):
            whole = np.zeros_like(a, dtype=g.dtype)
            whole[index] = g
            return whole, None
        if len(items) == 1 and np.dtype(arrays[0].dtype).kind in "iu":
            n = a.shape[0]
            flat = np.reshape(items[0], (-1,)) % n
            onehot = (flat[:, None] == np.arange(n)[None, :]).astype(g.dtype)
            rows = np.reshape(g, (flat.shape[0], -1))
            return np.reshape(np.matmul(np.transpose(onehot), rows), a.shape), None
        raise NotImplementedError("the gradient of this advanced index is not implemented "
                                  "(supported: basic indexing, one boolean mask, one integer "
                                  "array on the first axis); index in steps: x[rows][:, cols]")

    define_vjp("getitem", getitem_vjp)
    define_vjp("reshape", lambda ctx, g: (np.reshape(g, ctx.args[0].shape), None))
    define_vjp("transpose", lambda ctx, g: (np.transpose(g, tuple(np.argsort(ctx.args[1]))),
                                            None))


_define_shape_vjps()
