"""A kernel numba cannot compile when it first runs: its nodes run with NumPy, the rest stays.

numba types a kernel at its first call. When that fails (``RunFallback.recover`` tells compiler
errors from the program's own), ``KernelTwins`` finds which kernel failed, builds its *NumPy
twin* (the kernel's nodes as NumPy steps, generated like any wrapper, writing into the same
buffers and returning the same scalars) and puts it in place of the kernel (and of its ``prange``
twin) in the wrapper's namespace; the call then runs again from the start, as exactly as the
eager re-run it replaces (``RunFallback`` restores the inputs first, or re-runs only before the
first write to one). Other kernels stay numba code.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ...graph import Graph, Node, map_nodes
from ...logs import get_logger
from ...source.loading import user_stacklevel
from ..base import error_summary
from .cpu import KernelCode
from .transposed import SUFFIX, transposed_twin

# (graph, name) -> a NumPy-only lowering's callable (``lower_graph(..., numpy_only=True)``)
LowerNumpy = Callable[[Graph, str], Callable[..., tuple]]


class KernelTwins:
    """``RunFallback.localize`` for one wrapper: swap a failed kernel for its NumPy twin."""

    def __init__(self, namespace: dict, codes: list[KernelCode], lower: LowerNumpy,
                 lower_kernels: LowerNumpy | None = None):
        self.namespace = namespace
        self.lower = lower
        self.lower_kernels = lower_kernels  # (graph, name) -> a numba lowering's callable
        self.transposed: dict[str, Callable[..., tuple]] = {}  # transposed twins, on first use
        self.by_name: dict[str, KernelCode] = {}
        self.codes = {code.name: code for code in codes}
        self.numpy: dict[str, Callable[..., tuple]] = {}  # numpy_kernel's, built on first use
        for code in codes:
            self.by_name[code.name] = code
            if code.parallel_name:
                self.by_name[code.parallel_name] = code

    def numpy_kernel(self, name: str) -> Callable[..., tuple]:
        """Kernel ``name``'s nodes with NumPy, returning its outputs: a loop body's wrapper calls
        it on a trip whose operand shapes differ from the traced trip's."""
        forward = self.numpy.get(name)
        if forward is None:
            code = self.codes[name]
            forward = numpy_outputs(code, self.lower) if code.plan is not None else None
            if forward is None:
                raise RuntimeError(f"astcompiler: {name} cannot run with NumPy on shapes unlike "
                                   "the traced ones; run this function eagerly (ac.disable)")
            self.numpy[name] = forward
        return forward

    def transposed_kernel(self, name: str) -> Callable[..., tuple]:
        """Kernel ``name``'s transposed twin (``transposed.py``), lowered on its first call: the
        wrapper calls it on F-ordered operands, viewed transposed, and gets its outputs."""
        forward = self.transposed.get(name)
        if forward is None:
            twin = transposed_twin(self.codes[name])
            if twin is None or self.lower_kernels is None:
                raise RuntimeError(f"astcompiler: {name} has no transposed twin; run this "
                                   "function eagerly (ac.disable)")
            forward = self.transposed[name] = self.lower_kernels(twin.graph, name + SUFFIX)
        return forward

    def __call__(self, error: BaseException) -> bool:
        code = self.by_name.get(failed_function(error) or "")
        if code is None or code.plan is None:
            return False
        twin = numpy_twin(code, self.lower)
        if twin is None:
            return False
        for name in (code.name, code.parallel_name):
            if name:
                self.namespace[name] = twin
                self.by_name.pop(name, None)  # a second failure of it is not ours to fix
        message = (f"astcompiler: numba could not compile {code.name} when it first ran "
                   f"({type(error).__name__}: {error_summary(error)}); its nodes run with NumPy "
                   "from now on, the other kernels stay compiled")
        get_logger("graph_breaks").info("%s\n%s", message, error)
        warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())
        return True


def failed_function(error: BaseException) -> str | None:
    """The name of the numba function whose compilation raised ``error`` (from its dispatcher's
    frame in the traceback), or None."""
    tb = error.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "_compile_for_args":  # the outermost: called by the wrapper
            dispatcher = frame.f_locals.get("self")
            return getattr(getattr(dispatcher, "py_func", None), "__name__", None)
        tb = tb.tb_next
    return None


def numpy_twin(code: KernelCode, lower: LowerNumpy) -> Callable[..., Any] | None:
    """A Python callable with the kernel's signature (inputs, then output buffers) that computes
    its nodes with NumPy, fills the buffers and returns the 0-d results; None when a node reads
    a value the kernel is not given."""
    forward = numpy_outputs(code, lower)
    if forward is None:
        return None
    n_inputs, n_buffers = len(code.inputs), len(code.buffers)

    def twin(*args: Any) -> Any:
        results = forward(*args[:n_inputs])
        for buffer, value in zip(args[n_inputs:], results[:n_buffers]):
            buffer[...] = value
        returns = results[n_buffers:]
        if not returns:
            return None
        return returns[0] if len(returns) == 1 else tuple(returns)

    twin.__name__ = f"{code.name}_numpy"
    return twin


def numpy_outputs(code: KernelCode, lower: LowerNumpy) -> Callable[..., tuple] | None:
    """The kernel's nodes as a NumPy function of its inputs returning its buffers' values, then
    its 0-d results (NumPy's broadcasting and errors); None when a node reads a value the kernel
    is not given."""
    graph = Graph()
    env: dict[Node, Node] = {n: graph.placeholder(f"input:{n.name}", n.meta, n.name)
                             for n in code.inputs}
    masked = code.plan.masked  # a masked store's twin gathers, computes and stores with NumPy
    for node in masked.in_order if masked is not None else code.plan.nodes:
        if any(value not in env for value in node.all_input_nodes()):
            return None
        env[node] = graph.call(node.target, map_nodes(node.args, env.__getitem__),
                               map_nodes(node.kwargs, env.__getitem__), node.meta, node.origin)
        env[node].operator, env[node].place = node.operator, node.place  # NumPy's warnings
    graph.output(tuple(env[n] for n in code.buffers + code.returns))
    return lower(graph, f"{code.name}_numpy")
