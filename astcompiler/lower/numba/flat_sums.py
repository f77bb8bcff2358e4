"""Flattened twins of rows kernels: NumPy's order for float sums over several trailing axes.

NumPy's reduction iterator coalesces axes whose strides chain, so a whole sum of a C-contiguous
N-d array is one pairwise run over its buffer, ``x.sum(axis=(1, 2))`` one run per ``x[i]``,
and a whole sum of an F-contiguous array one run over its memory order. A rows kernel reducing
its trailing axes ``outer..ndim-1`` whose array operands all have the kernel's full shape
(``flat_twin``) gets a second kernel over ``shape[:outer] + (prod(shape[outer:]),)``: the same
nodes read through collapsed shapes, which ``cpu.py`` lowers with its 1-D pairwise sums. The
kernel's entries call it on reshaped views when every operand is C-contiguous (for whole sums
also when all are F-contiguous: their memory order), or when the reduced axes of every operand
chain into one strided run; ``pairwise.flat_view`` makes the views (numba does not reshape 'A'
layouts). Other layouts keep the nested loops (``dispatch_lines``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...config import config
from ...graph import Node
from .plan import KernelPlan, ReductionRule

__all__ = ["FlatTwin", "flat_twin", "dispatch_lines", "exact_sum_test", "c_ordered",
           "c_temporaries_test"]

FLAT = "m"  # the collapsed extent when some reduced extent is dynamic (read at run time)


@dataclass
class FlatTwin:
    """A rows kernel over collapsed trailing axes, and the shapes its members are read with."""

    kernel: KernelPlan
    shapes: dict[Node, tuple]
    fortran: bool  # whole sums: all-F-contiguous operands also take the twin (memory order)
    computed: bool  # every float sum adds computed summands (NumPy sums a fresh temporary)


def _float_sum(rule: object) -> bool:
    return isinstance(rule, ReductionRule) and rule.merge == "{a} + {b}" \
        and rule.combine.startswith("{acc} + ") and not (rule.arg or rule.nan_flag) \
        and rule.input_dtype in (np.dtype(np.float32), np.dtype(np.float64)) \
        and rule.result_dtype == rule.input_dtype


def flat_twin(kernel: KernelPlan) -> FlatTwin | None:
    """The flattened twin of a rows kernel reducing two or more trailing axes whose float sums
    NumPy adds over coalesced axes, or None (another style, broadcast operands, row temporaries,
    fused stores, or no float sum to gain)."""
    shape, outer = tuple(kernel.shape), kernel.outer
    ndim = len(shape)
    if not config.pairwise_sums or kernel.style != "rows" or ndim < 2 or outer > ndim - 2 \
            or kernel.masked is not None or kernel.store_into is not None or kernel.stash \
            or not any(_float_sum(kernel.rules[n]) for n in kernel.nodes):
        return None
    kept = shape[:outer]
    reduced = shape[outer:]
    static = all(isinstance(s, (int, np.integer)) for s in reduced)
    last = int(np.prod([int(s) for s in reduced])) if static else FLAT
    ones = tuple(s == 1 for s in shape)

    def collapsed(own: tuple) -> tuple | None:
        """Full shapes (the same size-1 axes: the wrapper checks the others are equal), kept
        dims with or without the reduced ones as 1s, 0-d."""
        if own == ():
            return ()
        if len(own) == ndim and tuple(s == 1 for s in own) == ones:
            return kept + (last,)
        if len(own) == ndim and own[outer:] == (1,) * (ndim - outer):
            return kept + (1,)
        return kept if len(own) == outer and outer > 0 else None

    shapes: dict[Node, tuple] = {}
    for node in [*kernel.inputs, *kernel.nodes]:
        own = tuple(node.meta.shape)
        shapes[node] = collapsed(own)
        if shapes[node] is None or (node in kernel.inputs and own != () and len(own) != ndim) \
                or (node in kernel.inputs and shapes[node] != kept + (last,) and own != ()):
            return None
    full = [n for n in kernel.inputs if shapes[n] == kept + (last,)]
    if not full:
        return None
    dims = list(kernel.dims[:outer]) + [last if static else (full[0], outer)]
    parallel = kernel.parallel_dim if kernel.parallel_dim is not None \
        and kernel.parallel_dim < max(outer, 1) else None
    flat = dataclasses.replace(kernel, shape=kept + (last,), reduce_axes=(outer,), dims=dims,
                               parallel_dim=parallel, name=f"{kernel.name}_flat",
                               sweeps=list(kernel.sweeps))
    sums = [n for n in kernel.nodes if _float_sum(kernel.rules[n])]
    computed = all(isinstance(n.args[0], Node) and n.args[0] in kernel.rules
                   and not kernel.rules[n].two_pass for n in sums) \
        and all(shapes[n] != kept + (last,) for n in kernel.outputs)
    return FlatTwin(flat, shapes, outer == 0, computed)


def dispatch_lines(twin: FlatTwin, ndim: int, arrays: list[tuple[str, tuple]], call: str,
                   returns: bool, write: Callable[[str], None], open_: Callable[[str], None],
                   close: Callable[[], None]) -> None:
    """The entry's branches to the twin ``call``; ``arrays``: its parameters (name, own shape)
    in order. C-contiguous operands, operands whose reduced axes chain into one strided run
    (``x[:, ::2]``), and for whole sums F-contiguous ones (their memory order) are viewed with
    the collapsed shape (``pairwise.flat_view``: one numba type for all three). ``returns``:
    the twin's results are the entry's."""
    outer = twin.kernel.outer
    wide = [name for name, shape in arrays if len(shape) == ndim]

    def viewed(name: str, shape: tuple, last: str) -> str:
        if len(shape) != ndim:
            return name
        kept = [f"{name}.shape[{d}]" for d in range(outer)]
        size = " * ".join(f"{name}.shape[{d}]" for d in range(outer, ndim))
        steps = [f"{name}.strides[{d}]" for d in range(outer)]
        return (f"flat_view({name}, ({', '.join(kept + [size])},), "
                f"({', '.join(steps + [last.format(name)])},))")

    def step(name: str, d: int, relation: str) -> str:
        return f"{name}.strides[{d}] {relation} {name}.shape[{d + 1}] * {name}.strides[{d + 1}]"

    def chained(name: str) -> str:  # (a negative run: NumPy flips it and adds memory order)
        return " and ".join([step(name, d, "==") for d in range(outer, ndim - 1)]
                            + [f"{name}.strides[{ndim - 1}] > 0"])

    def ordered(name: str) -> str:
        return c_ordered(name, ndim)

    cases = [(" and ".join(f"{n}.flags.c_contiguous" for n in wide), "{}.itemsize",
              "C-contiguous: one pairwise run per row, as NumPy")]
    if twin.fortran:
        cases.append((" and ".join(f"{n}.flags.f_contiguous" for n in wide), "{}.itemsize",
                      "F-contiguous: NumPy sums the memory order"))
    cases.append((" and ".join(f"({chained(n)})" for n in wide), "{}.strides[%d]" % (ndim - 1),
                  "the reduced axes chain: NumPy coalesces them into one strided run"))
    if twin.computed:  # NumPy's temporary is C-ordered when every operand's axes are
        cases.append((" and ".join(f"({ordered(n)})" for n in wide), "{}.itemsize",
                      "C-ordered operands: NumPy sums a C-contiguous temporary"))
    for test, last, why in cases:
        open_(f"if {test}:  # {why}")
        names = {name: name for name, _ in arrays}
        if why.startswith("C-ordered"):  # the fused producer reads C copies of its operands
            for name in wide:
                names[name] = f"flatcopy_{name}"
                write(f"{names[name]} = np.ascontiguousarray({name})")
        args = ", ".join(viewed(names[name], shape, last) for name, shape in arrays)
        write(f"return {call}({args})" if returns else f"{call}({args})")
        if not returns:
            write("return")
        close()


def _sums_in(kernel: KernelPlan) -> bool:
    """Does ``kernel`` add floats (sum, mean, var, std: a ``+`` merge into a float result)?"""
    return any(isinstance(r, ReductionRule) and r.merge == "{a} + {b}"
               and np.dtype(r.result_dtype).kind in "fc" for r in kernel.rules.values())


def _numpy_twin_possible(kernel: KernelPlan, inputs: list[Node]) -> bool:
    """Whether the kernel's nodes can run with NumPy on ``inputs`` (``numpy_twins.numpy_outputs``:
    every value a node reads is an input or a member)."""
    known = set(inputs) | set(kernel.nodes)
    return kernel.masked is None and all(
        value in known for node in kernel.nodes for value in node.all_input_nodes())


def _wide(kernel: KernelPlan, inputs: list[Node], name: Callable[[Node], str]) -> list[str]:
    """The names of the kernel's array operands of its full rank that order NumPy's iteration
    (not a column ``w[:, None]`` broadcast along every axis but one: it has no say)."""
    ndim = len(kernel.shape)
    return [name(n) for n in inputs if n.meta is not None and not n.meta.scalar
            and len(n.meta.shape) == ndim and ndim > 0 and _orders(kernel, n.meta.shape)]


def _orders(kernel: KernelPlan, shape: tuple) -> bool:
    """NumPy's iterator orders two axes by the strides of the operands that are not broadcast
    along either: an operand broadcast (a static 1 where the kernel is not) along all axes but
    one never takes part."""
    broadcast = [d for d, size in enumerate(shape) if size == 1 and kernel.shape[d] != 1]
    return not broadcast or len(shape) - len(broadcast) >= 2


def c_ordered(x: str, ndim: int) -> str:
    """A run-time test that array ``x``'s strides are C-ordered (each at least the next axis's
    extent) with a positive last one."""
    steps = [f"{x}.strides[{d}] >= {x}.shape[{d + 1}] * {x}.strides[{d + 1}]"
             for d in range(ndim - 1)]
    return " and ".join(steps + [f"{x}.strides[{ndim - 1}] > 0"])


def c_temporaries_test(kernel: KernelPlan, inputs: list[Node],
                       name: Callable[[Node], str]) -> str | None:
    """A run-time test that NumPy's temporaries of the kernel's nodes (ufunc and cast results:
    order "K") would be C-contiguous, as loop code's buffers are: every full-rank operand is
    C-ordered. None: no such operand (they are C-contiguous)."""
    wide = _wide(kernel, inputs, name)
    ndim = len(kernel.shape)
    return " and ".join(f"({c_ordered(x, ndim)})" for x in wide) if wide else None


def exact_sum_test(kernel: KernelPlan, inputs: list[Node], name: Callable[[Node], str]
                   ) -> str | None:
    """A run-time test (source) that the kernel's float sums add in NumPy's order on the
    operands' layouts, or None where no test is needed (no float sum, sums off, no NumPy twin).
    Where it fails the wrapper runs the kernel's nodes with NumPy (a local step: NumPy's bits).

    The kernel's order is NumPy's when (``tests/lower/test_sum_layouts.py``): a row sum (the
    last axis) reads operands whose last axis is innermost and positive and whose strides
    are C-ordered (NumPy then adds each row pairwise, a computed row from its C temporary); a
    column sum (one other axis) reads C-ordered operands whose last axis is longer than 1
    (NumPy adds row after row); a sum over several trailing axes meets one of its flattened
    twin's cases (``dispatch_lines``). Anything else (F-ordered, transposed, reversed, mixed,
    views whose axes do not chain: NumPy's buffered chunks) takes NumPy."""
    if not config.pairwise_sums or not _sums_in(kernel) or kernel.store_into is not None \
            or not _numpy_twin_possible(kernel, inputs):
        return None
    ndim = len(kernel.shape)
    wide = _wide(kernel, inputs, name)
    if not wide:
        return None

    def step(x: str, d: int, relation: str) -> str:
        return f"{x}.strides[{d}] {relation} {x}.shape[{d + 1}] * {x}.strides[{d + 1}]"

    def ordered(x: str) -> str:
        return c_ordered(x, ndim)

    def every(test: Callable[[str], str]) -> str:
        return "(" + " and ".join(f"({test(x)})" for x in wide) + ")"

    if kernel.style == "rows" and kernel.outer == ndim - 1:
        return every(ordered)
    if kernel.style == "columns" and len(kernel.reduce_axes) == 1:
        return every(lambda x: f"{ordered(x)} and {x}.shape[{ndim - 1}] > 1")
    twin = flat_twin(kernel)
    if kernel.style != "rows" or twin is None:
        return "False"  # nested loops: never NumPy's order
    outer = kernel.outer
    wide_buffers = any(len(n.meta.shape) == ndim for n in kernel.outputs
                       if n.meta is not None and n not in inputs)
    cases = [every(lambda x: f"{x}.flags.c_contiguous")]
    if twin.fortran and not wide_buffers:  # (fresh buffers are C: the twin's F case fails)
        cases.append(every(lambda x: f"{x}.flags.f_contiguous"))
    cases.append(every(lambda x: " and ".join([step(x, d, "==") for d in range(outer, ndim - 1)]
                                              + [f"{x}.strides[{ndim - 1}] > 0"])))
    if twin.computed:
        cases.append(every(ordered))
    return " or ".join(cases)
