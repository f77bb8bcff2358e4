"""NumPy steps inside structured loop code: a kernel whose float sums NumPy adds in another order.

At top level the wrapper sends a kernel whose operands' layouts make NumPy add its float sums in
another order than the kernel's (``flat_sums.exact_sum_test``: F-ordered or transposed row sums,
reversed views, views whose axes do not chain) to the kernel's NumPy twin. A structured function
is one njit function; there the same test chooses, at run time, between the kernel and a
``numba.objmode`` block that runs the kernel's nodes with NumPy (``numpy_step_source``: a plain
Python function in the structured module, writing the kernel's buffers and returning its 0-d
results). Only that kernel's step leaves numba; the rest of the loop stays compiled.

FP flags and warnings: NumPy clears the flags before each ufunc, so a flag raised earlier in the
structured function that warns ends the run first; the step itself runs with the caller's
FP modes turned into a recording handler (``np.errstate(call=...)``, modes cached while the
caller's errstate holds: ``runtime.recording_modes``), and with ``warnings`` recording only where
one of its ops may call ``warnings.warn`` (``OpDef.may_warn``: not ufuncs, views, sum, max...;
catching warnings costs about 6 us a trip). Either way, or when it warns otherwise ("Mean of
empty slice"), the step raises ``_AcNumpyStep`` (a ValueError): the structured runner reruns the
whole call with NumPy (``rebuild.structured_runner``), which warns as the plain call does, as
for any flag a kernel of the structured function raises.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...graph import Node
from ...ops import REGISTRY
from .cpu import KernelCode
from .oprules_common import number_source

__all__ = ["NUMPY_STEP", "float_sum", "layout_sensitive", "numpy_step_source", "numpy_sum_source",
           "whole_1d_sum",
           "step_source"]

NUMPY_STEP = '''
import warnings as _ac_warnings


class _AcNumpyStep(ValueError):
    """A NumPy step of loop code would warn: the call reruns with NumPy (its warnings)."""


_AC_OPS = {}  # op name: its NumPy reference, looked up once per module


def _ac_numpy_op(name):
    impl = _AC_OPS.get(name)
    if impl is None:
        from astcompiler.ops import REGISTRY
        impl = _AC_OPS[name] = REGISTRY[name].impl
    return impl


_AC_RT = []  # astcompiler's runtime module, imported on the first step


def _ac_runtime():
    if not _AC_RT:
        from astcompiler.lower.numba import runtime
        _AC_RT.append(runtime)
    return _AC_RT[0]


class _ac_numpy_step:
    # the caller's FP modes, and where the step's ops may call warnings.warn its warnings, as
    # a recording handler around one NumPy step (a class, not a generator context manager: this
    # runs once per trip)
    __slots__ = ("record", "seen", "errors", "warnings", "warned")

    def __init__(self, record=True):
        self.record = record

    def __enter__(self):
        # NumPy's ufuncs clear the FP flags: a flag raised before that warns ends the run now
        runtime = _ac_runtime()
        if runtime.fp_test(runtime.FP_ALL) and runtime.fp_raised():
            raise _AcNumpyStep("a floating-point flag that warns: the call reruns with NumPy")
        seen = self.seen = []
        self.warned = ()
        if self.record:
            self.warnings = _ac_warnings.catch_warnings(record=True)
            self.warned = self.warnings.__enter__()
            _ac_warnings.simplefilter("always")
        self.errors = np.errstate(call=lambda kind, flag: seen.append(kind),
                                  **runtime.recording_modes())
        self.errors.__enter__()

    def __exit__(self, kind, error, trace):
        self.errors.__exit__(kind, error, trace)
        if self.record:
            self.warnings.__exit__(kind, error, trace)
        if kind is None and (self.seen or self.warned):
            raise _AcNumpyStep("a NumPy step of loop code warns: the call reruns with NumPy")
        return False

'''


def _declared(node: Node, contiguous: bool) -> str:
    """``numba.objmode``'s type of a result: a scalar, or an array ('A' layout unless
    ``contiguous``: the step returns it C-contiguous)."""
    dtype = np.dtype(node.meta.dtype)
    name = "boolean" if dtype.kind == "b" else dtype.name
    ndim = node.meta.ndim
    if not ndim:
        return name
    return f"{name}[{', '.join([':'] * (ndim - 1) + ['::1' if contiguous else ':'])}]"


def float_sum(node: Node) -> bool:
    """A float or complex sum (``sum``, ``mean``, ``var``, ``std``: a ``+`` merge)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and op.reduction is not None and op.reduction.merge == "{a} + {b}" \
        and node.meta is not None and np.dtype(node.meta.dtype).kind in "fc"


def whole_1d_sum(node: Node) -> bool:
    """A plain float sum (no ``finalize``: not a mean) of all of a 1-D real array, in its own
    dtype: NumPy's ``pairwise_sum`` of the elements in order (``pairwise.sum_1d``)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    if not float_sum(node) or op.reduction.finalize != "{acc}" or op.reduction.two_pass \
            or not node.args or not isinstance(node.args[0], Node):
        return False
    operand, kwargs = node.args[0], node.kwargs
    if operand.meta is None or operand.meta.ndim != 1 or len(node.args) > 1 \
            or np.dtype(operand.meta.dtype).kind != "f" \
            or np.dtype(operand.meta.dtype) != np.dtype(node.meta.dtype):
        return False
    return set(kwargs) <= {"axis", "keepdims", "dtype"} and kwargs.get("axis") in (None, 0, -1) \
        and not kwargs.get("keepdims") and node.meta.ndim == 0


def layout_sensitive(node: Node) -> bool:
    """A float result whose bits depend on its operands' memory layout: a float sum (NumPy's
    pairwise runs follow memory order) or a BLAS call (``OpDef.threaded``: matmul, dot... pick
    their routine and order by the operands' strides)."""
    op = REGISTRY.ops.get(node.target) if node.op == "call" else None
    return op is not None and (float_sum(node) or op.threaded and node.meta is not None
                               and np.dtype(node.meta.dtype).kind in "fc")


def step_source(name: str, inputs: list[Node], nodes: list[Node], filled: list[Node],
                returned: list[Node], contiguous: bool, about: str) -> str | None:
    """Two functions: ``{name}_numpy``, Python, computing ``nodes`` with NumPy (each op's NumPy
    reference, as the eager interpreter calls it) from ``inputs`` and writing ``filled`` into
    buffers passed after them; and ``{name}``, njit, calling it in an ``objmode`` block (a
    function of its own: numba mislowers an objmode block in a branch whose results are used
    after it) and returning ``returned`` (a value, a tuple, or None; arrays C-contiguous when
    ``contiguous``, else as NumPy made them). None when a node reads a value not among
    ``inputs`` or an operand has no literal form."""
    local = {node: f"in{k}" for k, node in enumerate(inputs)}
    params = list(local.values()) + [f"buf{k}" for k in range(len(filled))]
    lines = []
    for node in inputs:  # structured code holds 0-d values as numbers: NumPy scalars again
        meta = node.meta
        if meta is not None and meta.ndim == 0:
            cast = meta.pytype.__name__ if meta.pytype is not None \
                else f"np.{np.dtype(meta.dtype).name}"
            lines.append(f"{local[node]} = {cast}({local[node]})")
    for k, node in enumerate(nodes):
        try:
            args = [_literal(a, local) for a in node.args]
            kwargs = [f"{key}={_literal(v, local)}" for key, v in node.kwargs.items()]
        except LookupError:
            return None
        local[node] = f"v{k}"
        lines.append(f"v{k} = _ac_numpy_op({node.target!r})({', '.join(args + kwargs)})"
                     + (f"  # {node.origin}" if node.origin else ""))
    if any(n not in local for n in filled + returned):
        return None
    body = "".join(f"        {line}\n" for line in lines)
    record = any(REGISTRY.ops[n.target].may_warn for n in nodes
                 if n.op == "call" and n.target in REGISTRY.ops)  # else FP flags only
    stores = "".join(f"    buf{k}[...] = {local[n]}\n" for k, n in enumerate(filled))
    values = [f"np.ascontiguousarray({local[n]})" if contiguous and n.meta.ndim else local[n]
              for n in returned]
    outs = [f"out{k}" for k in range(len(returned))]
    types = ", ".join(f"{o}={_declared(n, contiguous)!r}" for o, n in zip(outs, returned))
    target = f"{', '.join(outs)}, = " if outs else ""
    result = outs[0] if len(outs) == 1 else f"({', '.join(outs)})" if outs else "None"
    results = "".join(f"{v}, " for v in values)
    return (f"\n\ndef {name}_numpy({', '.join(params)}):\n    # {about} with NumPy\n"
            f"    with _ac_numpy_step({record}):\n{body}{stores}    return ({results})\n"
            f"\n\n@numba.njit(cache=True)\ndef {name}({', '.join(params)}):\n"
            f"    with numba.objmode({types}):\n"
            f"        {target}{name}_numpy({', '.join(params)})\n    return {result}\n")


def numpy_sum_source(name: str, node: Node) -> tuple[str, list[Node]] | None:
    """Float sum ``node`` with NumPy (numba's ``np.sum`` and the ``region_ops`` reduction
    helpers add in other orders than NumPy's pairwise one): ``step_source``'s functions and
    the operands ``name`` takes, or None for another node."""
    if not float_sum(node) or node.kwargs.get("out") is not None:
        return None
    inputs = list(dict.fromkeys(a for a in node.all_input_nodes()))
    source = step_source(name, inputs, [node], [], [node], True, f"{node.target} in NumPy's order")
    return None if source is None else (source, inputs)


def numpy_step_source(name: str, code: KernelCode, arrays: bool = False) -> str | None:
    """``step_source`` of a kernel: ``name(*inputs, *buffers)`` fills the buffers and returns
    the 0-d results; ``arrays``: ``name(*inputs)`` returns the buffers' values as NumPy made
    them (their layouts are NumPy's) before the 0-d results. None where a node reads a value
    the kernel is not given."""
    kernel = code.plan
    if kernel is None or kernel.masked is not None or kernel.store_into is not None:
        return None
    filled, returned = ([], code.buffers + code.returns) if arrays \
        else (code.buffers, code.returns)
    return step_source(name, code.inputs, kernel.nodes, filled, returned, False,
                       f"{kernel.name}'s nodes (float sums in NumPy's order)")


def _literal(value: Any, local: dict[Node, str]) -> str:
    """An operand as Python source (LookupError: a value the step is not given, or an
    operand without a literal form)."""
    if isinstance(value, Node):
        return local[value]
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, (int, float, complex)):
        return number_source(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return f"np.{value.dtype.name}({number_source(value.item())})"
    if isinstance(value, np.dtype) and value.kind in "biufc":
        return f"np.dtype({value.name!r})"
    if isinstance(value, tuple):
        inner = "".join(f"{_literal(v, local)}, " for v in value)
        return f"({inner})"
    if isinstance(value, list):
        return f"[{', '.join(_literal(v, local) for v in value)}]"
    raise LookupError(f"no literal form for {type(value).__name__}")
