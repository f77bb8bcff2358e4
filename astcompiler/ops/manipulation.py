"""Array manipulation: reshaping views, joining, flipping, tiling, diagonals, real/imag.

Kinds follow what NumPy returns: ``view`` when the result may alias the input (``ravel``,
``swapaxes``, ``squeeze``, ``broadcast_to``, ``flip``, ``diagonal``, ...), ``extern`` when
NumPy always returns a fresh array (``flatten``, ``concatenate``, ``tile``, ``triu``, ...). Both are
run by calling ``impl`` (NumPy itself), so view-or-copy and read-only-ness are exactly NumPy's.

Canonical forms: axes are non-negative ints (tuples where NumPy accepts several, sorted when order
does not matter), shapes and repetition counts are tuples, sequences of arrays are tuples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ..lazy import sympy  # imported at the first shape rule that needs it
from numpy.lib.array_utils import normalize_axis_tuple

from ..exc import Unsupported
from ..graph import Node
from ._args import (array_sequence, as_shape, axis_index, axis_tuple, check_casting,
                    check_order, contains_proxy, dtype_kw, freeze, is_proxy, ndim_of,
                    optional_axis, reject_out)
from .registry import register
from .sizes import as_size, product

# ---------------------------------------------------------------- ravel / flatten


def _ravel_normalize(a, order="C"):
    order = check_order(order)
    return (freeze(a),), ({} if order == "C" else {"order": order})


def _ravel(a: Any, order: str = "C") -> np.ndarray:
    return np.ravel(a, order=order)


def _flatten(a: np.ndarray, order: str = "C") -> np.ndarray:
    return a.flatten(order=order)


def _flat_shape(ctx, args: tuple, kwargs: dict) -> tuple:
    return (product(ctx.shape_of(args[0])),)


def _concatenate_shape(ctx, args: tuple, kwargs: dict) -> tuple | None:
    arrays = args[0]
    axis = kwargs.get("axis", args[1] if len(args) > 1 else 0)
    if axis is None or not isinstance(arrays, (tuple, list)) or not arrays:
        return None
    shapes = [ctx.shape_of(a) for a in arrays]
    axis = axis % len(shapes[0])
    out = list(shapes[0])
    out[axis] = as_size(sum((sympy.sympify(s[axis]) for s in shapes), sympy.Integer(0)))
    return tuple(out)


register("ravel", _ravel, kind="view", normalize=_ravel_normalize, aliases=(np.ravel,),
         shape_rule=_flat_shape,
         methods=("ravel",), doc="a 1-d view when the layout allows it, else a copy")
register("flatten", _flatten, kind="extern", normalize=_ravel_normalize, methods=("flatten",),
         shape_rule=_flat_shape,
         doc="a.flatten(order): always a copy")

# ---------------------------------------------------------------- axis permutations


def _swapaxes_normalize(a, axis1, axis2):
    ndim = ndim_of(a)
    return (freeze(a), axis_index(axis1, ndim, "axis1"), axis_index(axis2, ndim, "axis2")), {}


def _swapaxes(a: Any, axis1: int, axis2: int) -> np.ndarray:
    return np.swapaxes(a, axis1, axis2)


register("swapaxes", _swapaxes, kind="view", layout_free=True, normalize=_swapaxes_normalize,
         aliases=(np.swapaxes,), methods=("swapaxes",), doc="np.swapaxes(a, axis1, axis2)")


def _axes_arg(axes: Any, ndim: int, name: str) -> tuple[int, ...]:
    if isinstance(axes, list):
        axes = tuple(axes)
    return tuple(int(x) for x in normalize_axis_tuple(axes, ndim, name))


def _moveaxis_normalize(a, source, destination):
    ndim = ndim_of(a)
    src = _axes_arg(source, ndim, "source")
    dst = _axes_arg(destination, ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    return (freeze(a), src, dst), {}


def _moveaxis(a: Any, source: tuple, destination: tuple) -> np.ndarray:
    return np.moveaxis(a, source, destination)


register("moveaxis", _moveaxis, kind="view", layout_free=True, normalize=_moveaxis_normalize,
         aliases=(np.moveaxis,), doc="np.moveaxis(a, source, destination), both tuples")


def _expand_dims_normalize(a, axis):
    if contains_proxy(axis):
        raise Unsupported("np.expand_dims with an axis from array data is not supported")
    count = len(axis) if isinstance(axis, (tuple, list)) else 1
    return (freeze(a), axis_tuple(axis, ndim_of(a) + count, sort=True)), {}


def _expand_dims(a: Any, axis: tuple) -> np.ndarray:
    return np.expand_dims(a, axis)


register("expand_dims", _expand_dims, kind="view", layout_free=True,
         normalize=_expand_dims_normalize,
         aliases=(np.expand_dims,), doc="np.expand_dims(a, axes)")


def _check_squeezable(a: Any, axes: tuple[int, ...]) -> None:
    shape = getattr(a, "shape", None)
    if shape is None:
        return
    for ax in axes:
        size = shape[ax]
        if isinstance(size, (int, np.integer)) and size != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")


def _squeeze_normalize(a, axis=None):
    if axis is None:
        return (freeze(a),), {"axis": None}
    axes = axis_tuple(axis, ndim_of(a), sort=True)
    _check_squeezable(a, axes)
    return (freeze(a),), {"axis": axes}


def _squeeze(a: Any, axis: tuple | None = None) -> np.ndarray:
    return np.squeeze(a, axis=axis)


register("squeeze", _squeeze, kind="view", layout_free=True,
         normalize=_squeeze_normalize, aliases=(np.squeeze,),
         methods=("squeeze",), doc="np.squeeze(a, axis): axis None (every size-1 axis) or a tuple")


def _broadcast_to_normalize(array, shape, subok=False):
    if subok:
        raise Unsupported("np.broadcast_to(subok=True) is not supported")
    return (freeze(array), as_shape(shape)), {}


def _broadcast_to(array: Any, shape: tuple) -> np.ndarray:
    return np.broadcast_to(array, shape)


register("broadcast_to", _broadcast_to, kind="view", layout_free=True,
         normalize=_broadcast_to_normalize,
         aliases=(np.broadcast_to,), doc="a read-only broadcast view (as NumPy)")


def _sliding_window_view_normalize(x, window_shape, axis=None, *, subok=False,
                                   writeable=False):
    if subok or writeable:
        raise Unsupported("np.lib.stride_tricks.sliding_window_view with subok=True or "
                          "writeable=True is not supported")
    ndim = ndim_of(x)
    window = as_shape(window_shape)
    if axis is None:
        axes = tuple(range(ndim))
        if len(window) != ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window)} window_shape elements "
                             f"and `x.ndim` is {ndim}.")
    else:  # the same axis may be windowed repeatedly
        axes = tuple(int(a) for a in normalize_axis_tuple(axis, ndim, allow_duplicate=True))
        if len(window) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(window)} window_shape elements and {len(axes)} axes "
                             f"elements.")
    return (freeze(x), window, axes), {}


def _sliding_window_view(x: Any, window_shape: tuple, axis: tuple) -> np.ndarray:
    return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis)


def _sliding_window_shape(ctx, args: tuple, kwargs: dict) -> tuple | None:
    """``x.shape`` with each windowed axis shortened by its window less one, then the window."""
    window = [ctx.value_expr(w) for w in args[1]]
    if any(w is None for w in window):
        return None
    shape = [sympy.sympify(d) for d in ctx.shape_of(args[0])]
    for axis, w in zip(args[2], window):
        ctx.evaluate(sympy.Ge(shape[axis], w))  # NumPy's ValueError otherwise
        shape[axis] = shape[axis] - w + 1
    return tuple(as_size(d) for d in shape) + tuple(as_size(w) for w in window)


register("sliding_window_view", _sliding_window_view, kind="view",
         normalize=_sliding_window_view_normalize, shape_rule=_sliding_window_shape,
         aliases=(np.lib.stride_tricks.sliding_window_view,),
         doc="np.lib.stride_tricks.sliding_window_view(x, window_shape, axis): a read-only "
             "view with overlapping windows (writes to it raise NumPy's ValueError)")


def _broadcast_arrays_normalize(*args, subok=False):
    if subok:
        raise Unsupported("np.broadcast_arrays(subok=True) is not supported")
    return tuple(freeze(a) for a in args), {}


def _broadcast_arrays(*args: Any) -> tuple:
    return np.broadcast_arrays(*args)


register("broadcast_arrays", _broadcast_arrays, kind="view",
         normalize=_broadcast_arrays_normalize, aliases=(np.broadcast_arrays,),
         tuple_output=True,
         doc="TUPLE OUTPUT (one broadcast view per input); needs tuple-output support in capture")


def _atleast_normalizer(fname: str):
    def normalize(*arys):
        if len(arys) != 1:
            raise Unsupported(f"np.{fname} with {len(arys)} arguments returns a tuple; "
                              f"call it once per array")
        return (freeze(arys[0]),), {}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    register(_fn.__name__, _fn, kind="view", layout_free=True,
             normalize=_atleast_normalizer(_fn.__name__),
             aliases=(_fn,), doc=f"np.{_fn.__name__}(a) with one argument: a view")

# ---------------------------------------------------------------- flips and rotations


def _flip_normalize(m, axis=None):
    ndim = ndim_of(m)
    axes = tuple(range(ndim)) if axis is None else axis_tuple(axis, ndim, sort=True)
    return (freeze(m), axes), {}


def _flip(m: Any, axis: tuple[int, ...]) -> Any:
    return np.flip(m, axis)


register("flip", _flip, kind="view", layout_free=True,
         normalize=_flip_normalize, aliases=(np.flip,),
         doc="np.flip(m, axes): axis None becomes every axis")


def _min_ndim_normalizer(ndim: int):
    def normalize(m):
        if ndim_of(m) < ndim:
            raise ValueError(f"Input must be >= {ndim}-d.")
        return (freeze(m),), {}
    return normalize


register("fliplr", np.fliplr, kind="view", layout_free=True, normalize=_min_ndim_normalizer(2),
         aliases=(np.fliplr,), doc="np.fliplr(m): reverse axis 1")
register("flipud", np.flipud, kind="view", layout_free=True, normalize=_min_ndim_normalizer(1),
         aliases=(np.flipud,), doc="np.flipud(m): reverse axis 0")


def _int_arg(value: Any, what: str) -> int:
    if is_proxy(value):
        raise Unsupported(f"{what} computed from array data is not supported")
    if isinstance(value, (float, np.floating, complex, str)):
        raise TypeError(f"{type(value).__name__!r} object cannot be interpreted as an integer")
    return int(value)


def _rot90_normalize(m, k=1, axes=(0, 1)):
    axes = tuple(_int_arg(a, "np.rot90 axes") for a in axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if is_proxy(k):
        raise Unsupported("np.rot90 with k computed from array data is not supported")
    return (freeze(m), int(k) % 4 if isinstance(k, (int, np.integer)) else k, axes), {}


def _rot90(m: Any, k: int, axes: tuple) -> np.ndarray:
    return np.rot90(m, k, axes)


register("rot90", _rot90, kind="view", layout_free=True,
         normalize=_rot90_normalize, aliases=(np.rot90,),
         doc="np.rot90(m, k % 4, axes)")


def _roll_normalize(a, shift, axis=None):
    if axis is None:
        canon_axis = None
    elif isinstance(axis, (tuple, list)):
        canon_axis = tuple(axis_index(ax, ndim_of(a)) for ax in axis)
    else:
        canon_axis = axis_index(axis, ndim_of(a))
    return (freeze(a), freeze(shift)), {"axis": canon_axis}


def _roll(a: Any, shift: Any, axis: Any = None) -> np.ndarray:
    return np.roll(a, shift, axis=axis)


register("roll", _roll, kind="extern", normalize=_roll_normalize, aliases=(np.roll,),
         doc="np.roll(a, shift, axis): a copy; shift may be an array value")

# ---------------------------------------------------------------- triangles, repeat, tile, pad


def _tri_part_normalize(m, k=0):
    if is_proxy(k):
        raise Unsupported("np.triu/np.tril with an offset computed from array data")
    return (freeze(m), int(k) if isinstance(k, (int, np.integer)) else k), {}


def _triu(m: Any, k: int) -> np.ndarray:
    return np.triu(m, k)


def _tril(m: Any, k: int) -> np.ndarray:
    return np.tril(m, k)


register("triu", _triu, kind="extern", normalize=_tri_part_normalize, aliases=(np.triu,),
         doc="np.triu(m, k): a copy")
register("tril", _tril, kind="extern", normalize=_tri_part_normalize, aliases=(np.tril,),
         doc="np.tril(m, k): a copy")


def _counts(value: Any, fname: str) -> Any:
    """Repetition counts (an int or a tuple of ints); array data would make shapes dynamic."""
    if contains_proxy(value):
        raise Unsupported(f"np.{fname} with counts computed from array data "
                          f"(data-dependent shape) is not supported")
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return freeze(value)


def _repeat_normalize(a, repeats, axis=None):
    counts = repeats if is_proxy(repeats) else _counts(repeats, "repeat")  # counts from data
    return (freeze(a), counts), {"axis": optional_axis(axis, ndim_of(a))}


def _counts_from_data(args: tuple, kwargs: dict) -> bool:
    """Repetition counts computed in the graph: the result's length is their sum."""
    return isinstance(args[1], Node)


def _repeat(a: Any, repeats: Any, axis: int | None = None) -> np.ndarray:
    return np.repeat(a, repeats, axis=axis)


register("repeat", _repeat, kind="extern", normalize=_repeat_normalize, aliases=(np.repeat,),
         methods=("repeat",), data_dependent_shape=_counts_from_data,
         doc="np.repeat(a, repeats, axis): a copy")


def _tile_normalize(A, reps):
    reps = _counts(reps, "tile")
    return (freeze(A), reps if isinstance(reps, tuple) else (reps,)), {}


def _tile(A: Any, reps: tuple) -> np.ndarray:
    return np.tile(A, reps)


register("tile", _tile, kind="extern", normalize=_tile_normalize, aliases=(np.tile,),
         doc="np.tile(A, reps): a copy")


def _pad_normalize(array, pad_width, mode="constant", **kwargs):
    if callable(mode):
        raise Unsupported("np.pad with a callable mode is not supported")
    if contains_proxy(kwargs.get("stat_length")):
        raise Unsupported("np.pad stat_length from array data is not supported")
    options = {k: freeze(v) for k, v in kwargs.items()}
    return (freeze(array), _counts(pad_width, "pad"), mode), options


def _pad(array: Any, pad_width: Any, mode: str, **kwargs: Any) -> np.ndarray:
    return np.pad(array, pad_width, mode, **kwargs)


register("pad", _pad, kind="extern", normalize=_pad_normalize, aliases=(np.pad,),
         doc="np.pad(array, pad_width, mode, **options): a copy")

# ---------------------------------------------------------------- joining


def _join_axis(arrays: tuple, axis: Any, extra_dims: int) -> int | None:
    if axis is None:
        return None
    ndim = ndim_of(arrays[0]) + extra_dims
    if ndim == 0:
        return axis  # NumPy's own error (0-d arrays cannot be concatenated)
    return axis_index(axis, ndim)


def _join_normalizer(fname: str, extra_dims: int):
    def normalize(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
        reject_out(out, fname)
        check_casting(casting, fname)
        arrays = array_sequence(arrays, fname)
        if not arrays:
            verb = "stack" if extra_dims else "concatenate"
            raise ValueError(f"need at least one array to {verb}")
        return (arrays,), {"axis": _join_axis(arrays, axis, extra_dims),
                           **dtype_kw(dtype)}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _concatenate(arrays: tuple, axis: int | None = 0, dtype: np.dtype | None = None):
    return np.concatenate(arrays, axis=axis, dtype=dtype)


def _stack(arrays: tuple, axis: int = 0, dtype: np.dtype | None = None) -> np.ndarray:
    return np.stack(arrays, axis=axis, dtype=dtype)


register("concatenate", _concatenate, kind="extern", shape_rule=_concatenate_shape,
         normalize=_join_normalizer("concatenate", 0), aliases=(np.concatenate,),
         doc="np.concatenate(arrays, axis, dtype); arrays is a tuple (capture maps proxies)")
register("stack", _stack, kind="extern", normalize=_join_normalizer("stack", 1),
         aliases=(np.stack,), doc="np.stack(arrays, axis, dtype)")


def _hvstack_normalizer(fname: str):
    def normalize(tup, *, dtype=None, casting="same_kind"):
        check_casting(casting, fname)
        arrays = array_sequence(tup, fname)
        if not arrays:
            raise ValueError("need at least one array to concatenate")
        return (arrays,), dtype_kw(dtype)
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


def _hstack(arrays: tuple, dtype: np.dtype | None = None) -> np.ndarray:
    return np.hstack(arrays, dtype=dtype)


def _vstack(arrays: tuple, dtype: np.dtype | None = None) -> np.ndarray:
    return np.vstack(arrays, dtype=dtype)


register("hstack", _hstack, kind="extern", normalize=_hvstack_normalizer("hstack"),
         aliases=(np.hstack,), doc="np.hstack(arrays, dtype)")
register("vstack", _vstack, kind="extern", normalize=_hvstack_normalizer("vstack"),
         aliases=(np.vstack,), doc="np.vstack(arrays, dtype)")


def _seq_normalizer(fname: str):
    def normalize(tup):
        arrays = array_sequence(tup, fname)
        if not arrays:
            raise ValueError("need at least one array to concatenate")
        return (arrays,), {}
    normalize.__name__ = f"_{fname}_normalize"
    return normalize


register("dstack", np.dstack, kind="extern", normalize=_seq_normalizer("dstack"),
         aliases=(np.dstack,), doc="np.dstack(arrays)")
register("column_stack", np.column_stack, kind="extern",
         normalize=_seq_normalizer("column_stack"), aliases=(np.column_stack,),
         doc="np.column_stack(arrays)")

# ---------------------------------------------------------------- real / imag


def _part_normalize(val):
    return (freeze(val),), {}


register("real", np.real, kind="view", layout_free=True,
         normalize=_part_normalize, aliases=(np.real,),
         attribute="real",
         doc="np.real(a) and the attribute a.real: a view (a itself for real input)")
register("imag", np.imag, kind="view", layout_free=True,
         normalize=_part_normalize, aliases=(np.imag,),
         attribute="imag",
         doc="np.imag(a) and the attribute a.imag: a view (read-only zeros for real input)")

# ---------------------------------------------------------------- diagonals


def _diag_axes(a: Any, axis1: Any, axis2: Any) -> tuple[int, int]:
    ndim = ndim_of(a)
    if ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = axis_index(axis1, ndim), axis_index(axis2, ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return ax1, ax2


def _diagonal_normalize(a, offset=0, axis1=0, axis2=1):
    ax1, ax2 = _diag_axes(a, axis1, axis2)
    return (freeze(a), _int_arg(offset, "the diagonal offset"), ax1, ax2), {}


def _diagonal(a: Any, offset: int, axis1: int, axis2: int) -> np.ndarray:
    return np.diagonal(a, offset, axis1, axis2)


register("diagonal", _diagonal, kind="view", layout_free=True, normalize=_diagonal_normalize,
         aliases=(np.diagonal,), methods=("diagonal",),
         doc="np.diagonal(a, offset, axis1, axis2): a read-only view")


def _diag_normalize(v, k=0):
    if ndim_of(v) not in (1, 2):
        raise ValueError("Input must be 1- or 2-d.")
    return (freeze(v), _int_arg(k, "the diagonal offset k")), {}


def _diag(v: Any, k: int) -> np.ndarray:
    return np.diag(v, k)


register("diag", _diag, kind="view", normalize=_diag_normalize, aliases=(np.diag,),
         doc="np.diag(v, k): a new 2-d array from 1-d v, a read-only view of a 2-d v's diagonal")


def _trace_normalize(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    reject_out(out, "trace")
    ax1, ax2 = _diag_axes(a, axis1, axis2)
    return (freeze(a), _int_arg(offset, "the diagonal offset"), ax1, ax2), dtype_kw(dtype)


def _trace(a: Any, offset: int, axis1: int, axis2: int, dtype: np.dtype | None = None):
    return np.trace(a, offset, axis1, axis2, dtype=dtype)


register("trace", _trace, kind="extern", normalize=_trace_normalize, aliases=(np.trace,),
         methods=("trace",), doc="np.trace(a, offset, axis1, axis2, dtype)")

# ---------------------------------------------------------------- meshgrid


def _meshgrid_normalize(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    return tuple(freeze(x) for x in xi), {"copy": bool(copy), "sparse": bool(sparse),
                                          "indexing": indexing}


def _meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)


register("meshgrid", _meshgrid, kind="view", normalize=_meshgrid_normalize,
         aliases=(np.meshgrid,), tuple_output=True,
         doc="TUPLE OUTPUT: np.meshgrid(*xi, copy, sparse, indexing); kind view since "
             "copy=False/sparse results are broadcast views of the inputs")

__all__: list[str] = []


# ---------------------------------------------------------------- derivatives (autodiff/)
def _define_manipulation_vjps() -> None:
    from .derivatives import sum_to
    from .registry import define_vjp

    def back_to_shape(ctx, g):
        return (np.reshape(g, ctx.args[0].shape),) + (None,) * (len(ctx.args) - 1)

    def concatenate_vjp(ctx, g):
        arrays, axis = ctx.args[0], ctx.kwargs.get("axis", 0)
        if axis is None:
            g = np.reshape(g, (-1,))
        pieces, start = [], 0
        for i, x in enumerate(arrays):
            size = x.shape[0 if axis is None else axis] if axis is not None else x.size
            stop = start + size
            if ctx.wants[0] is True or (isinstance(ctx.wants[0], tuple) and ctx.wants[0][i]):
                index = (slice(None),) * (0 if axis is None else axis) + (slice(start, stop),)
                piece = g[index]
                pieces.append(np.reshape(piece, x.shape) if axis is None else piece)
            else:
                pieces.append(None)
            start = stop
        return (tuple(pieces),)

    def stack_vjp(ctx, g):
        arrays, axis = ctx.args[0], ctx.kwargs.get("axis", 0)
        lead = (slice(None),) * axis
        return (tuple(g[lead + (i,)] for i in range(len(arrays))),)

    for name in ("ravel", "flatten", "squeeze", "expand_dims"):
        define_vjp(name, back_to_shape)
    define_vjp("swapaxes", lambda ctx, g: (np.swapaxes(g, ctx.args[1], ctx.args[2]), None, None))
    define_vjp("broadcast_to", lambda ctx, g: (sum_to(g, ctx.args[0]), None))
    define_vjp("concatenate", concatenate_vjp)
    define_vjp("stack", stack_vjp)


_define_manipulation_vjps()
