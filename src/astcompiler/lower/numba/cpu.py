"""CPU code generation: a ``KernelPlan`` becomes a numba module with explicit loop nests.

Each kernel module holds a serial function and, when the plan has a parallel loop, a
``parallel=True`` twin that runs that loop with ``numba.prange``; the wrapper picks one at
run time from the iteration-space size (``config.parallel_threshold``), so one module serves
every size. Loop bounds are read from the arguments' ``.shape``; broadcasting is an index
pattern (a size-1 input dim is indexed with 0, missing leading dims are dropped). Outputs are
allocated by the wrapper (NumPy's allocator is much faster than allocating inside njit) and
filled here; 0-d NumPy-scalar results are returned as values.
"""

from __future__ import annotations

import builtins
import keyword
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...graph import Node
from .plan import KernelPlan, Plan, ReductionRule, ScalarRule, operand_shape, operands
from .scalar import cast, constant, empty_message, helper_call, helper_source, type_name

# accumulator dtypes whose arithmetic numba may widen: results are cast back every step
_WIDE_OK = frozenset(np.dtype(t) for t in (np.float64, np.int64, np.uint64, np.bool_))


class Namer:
    """Unique, valid, readable identifiers."""

    def __init__(self, reserved: set[str] | None = None):
        self.used: set[str] = set(reserved or ())

    def __call__(self, hint: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in hint) or "v"
        if base[0].isdigit():
            base = "v_" + base
        name, count = base, 1
        while name in self.used or keyword.iskeyword(name):
            name = f"{base}_{count}"
            count += 1
        self.used.add(name)
        return name


_RESERVED = set(dir(builtins)) | {"np", "numba", "count", "max_nan", "min_nan"}


@dataclass
class KernelCode:
    """A generated kernel module and how the wrapper calls it."""

    name: str
    source: str
    parallel_name: str | None
    inputs: list[Node]
    buffers: list[Node]  # outputs the wrapper allocates and passes after the inputs
    returns: list[Node]  # 0-d outputs returned as values, in order
    plan: KernelPlan = field(repr=False, default=None)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def __call__(self, text: str, origin: str | None = None) -> None:
        suffix = f"  # {origin}" if origin else ""
        self.lines.append("    " * self.depth + text + suffix)

    def open(self, text: str) -> None:
        self(text)
        self.depth += 1

    def close(self, levels: int = 1) -> None:
        self.depth -= levels


class KernelEmitter:
    """Emits one kernel function (serial or parallel) for a ``KernelPlan``."""

    def __init__(self, kernel: KernelPlan, plan: Plan):
        self.k = kernel
        self.plan = plan
        self.names = Namer(_RESERVED | {f"i{d}" for d in range(8)} | {f"n{d}" for d in range(8)})
        self.ndim = len(kernel.shape)
        self.param: dict[Node, str] = {}
        self.out: dict[Node, str] = {}
        self.local: dict[Node, str] = {}
        self.helpers: list[str] = []
        self.returns = [n for n in kernel.outputs if n.meta.shape == () and n.meta.scalar]
        self.buffers = [n for n in kernel.outputs if n not in self.returns]
        for node in kernel.inputs:
            self.param[node] = self.names(node.name)
        for node in self.buffers:
            self.out[node] = self.names(f"out_{node.name}")
        for node in kernel.nodes:
            self.local[node] = self.names(node.name)
        self.acc = {n: self.names(f"acc_{n.name}") for n in kernel.nodes
                    if isinstance(kernel.rules[n], ReductionRule)}
        self.elem = {n: self.names(f"e_{n.name}") for n in self.acc}
        self.temp = {n: self.names(f"tmp_{n.name}") for n, buf in kernel.stash.items() if buf is None}
        self.scalar_input: dict[Node, str] = {}
        for node in kernel.inputs:
            if node.meta.shape == () and not (node.meta.scalar or node in plan.weak):
                self.scalar_input[node] = self.names(f"{node.name}_v")
        for node in kernel.nodes:
            rule = kernel.rules[node]
            for key in rule.helpers:
                if key not in self.helpers:
                    self.helpers.append(key)

    # -- names and index expressions --------------------------------------------------------

    def var(self, d: int) -> str:
        return "0" if self.k.shape[d] == 1 else f"i{d}"

    def bound(self, d: int) -> str:
        return "1" if self.k.shape[d] == 1 else f"n{d}"

    def index(self, exprs: list[str]) -> str:
        return ", ".join(exprs) if exprs else "()"

    def leaf(self, node: Node, consumer_ndim: int) -> str:
        """Read an input in the context of a consumer of ``consumer_ndim`` dims."""
        if node.meta.shape == ():
            return self.scalar_input.get(node, self.param[node])
        shape = node.meta.shape
        idx = []
        for j, size in enumerate(shape):
            d = j + consumer_ndim - len(shape)
            idx.append("0" if size == 1 else self.var(d))
        return f"{self.param[node]}[{self.index(idx)}]"

    def out_index(self, node: Node) -> str:
        """Index of a member's own element in its output buffer (or stash)."""
        shape = node.meta.shape
        if isinstance(self.k.rules[node], ReductionRule) and self.k.style == "columns":
            kept = [d for d in range(self.ndim) if d not in self.k.reduce_axes]
            if len(shape) == self.ndim:
                return self.index([self.var(d) if d in kept else "0" for d in range(self.ndim)])
            return self.index([self.var(d) for d in kept])
        if node in self.k.inner or len(shape) == self.ndim:
            inner = node in self.k.inner or self.k.style == "pointwise"
            return self.index([self.var(d) if (d < self.k.outer or inner) and shape[d] != 1
                               else "0" for d in range(len(shape))])
        return self.index([self.var(d) if shape[d] != 1 else "0" for d in range(len(shape))])

    def inner_index(self) -> str:
        return self.index([self.var(d) for d in range(self.k.outer, self.ndim)])

    def dtype_of(self, value: Any) -> np.dtype | None:
        if isinstance(value, Node):
            if value in self.plan.weak:
                return np.dtype(np.float64 if self.plan.weak[value] is float else np.int64)
            return np.dtype(value.meta.dtype)
        return None

    # -- expressions ----------------------------------------------------------------------

    def operand(self, value: Any, consumer: Node, dtype: np.dtype | None, ndim: int) -> str:
        if isinstance(value, Node):
            text = self.local[value] if value in self.k.rules else self.leaf(value, ndim)
            return cast(text, self.dtype_of(value), dtype) if dtype is not None else text
        if dtype is None:
            return repr(value.item() if isinstance(value, np.generic) else value)
        if isinstance(value, np.generic):
            value = value.item()
        return constant(value, dtype)

    def pointwise(self, node: Node) -> str:
        rule: ScalarRule = self.k.rules[node]
        ndim = len(node.meta.shape)
        picks = rule.operands if rule.operands is not None else range(len(node.args))
        texts = ["None"] * len(node.args)
        for i in picks:
            dtype = rule.operand_dtypes[i] if i < len(rule.operand_dtypes) else None
            texts[i] = self.operand(node.args[i], node, dtype, ndim)
        expr = rule.template.format(*texts)
        result = rule.result_dtype
        if result is None and rule.template == "{0}":
            result = self.dtype_of(node.args[0])
        return cast(expr, result, np.dtype(node.meta.dtype))

    def element(self, node: Node, dtype: np.dtype) -> str:
        """A reduction's element, cast to ``dtype``."""
        source = node.args[0]
        text = self.local[source] if source in self.k.rules else self.leaf(source, self.ndim)
        return cast(text, self.dtype_of(source), dtype)

    # -- statements -----------------------------------------------------------------------

    def compute(self, w: _Writer, node: Node) -> None:
        w(f"{self.local[node]} = {self.pointwise(node)}", node.origin)

    def store(self, w: _Writer, node: Node) -> None:
        if node in self.returns:
            return
        w(f"{self.out[node]}[{self.out_index(node)}] = {self.local[node]}")

    def stash_ref(self, node: Node) -> str:
        buffer = self.k.stash[node]
        if buffer is None:
            return f"{self.temp[node]}[{self.inner_index()}]"
        return f"{self.out[buffer]}[{self.out_index(buffer)}]"

    def outer_nodes(self, w: _Writer, nodes: list[Node]) -> None:
        for node in nodes:
            if not isinstance(self.k.rules[node], ReductionRule):
                self.compute(w, node)
            if node in self.k.outputs:
                self.store(w, node)

    # -- reductions -----------------------------------------------------------------------

    def init_acc(self, w: _Writer, node: Node, phase: int, at: str = "") -> None:
        rule: ReductionRule = self.k.rules[node]
        acc = self.acc[node] + at
        if rule.arg:
            w(f"{acc} = {rule.init}")
            w(f"{self._idx(node)}{at} = np.int64(0)")
        elif rule.two_pass and phase == 1:
            w(f"{acc} = {constant(0, rule.acc_dtype)}")
        else:
            w(f"{acc} = {rule.init}")

    def _idx(self, node: Node) -> str:
        return f"idx_{self.acc[node]}"

    def combine(self, w: _Writer, node: Node, phase: int, at: str = "") -> None:
        rule: ReductionRule = self.k.rules[node]
        acc = self.acc[node] + at
        elem = self.elem[node]
        if rule.arg:
            w(f"{elem} = {self.element(node, rule.input_dtype)}")
            test = rule.combine.format(acc=acc, v=elem)
            if rule.input_dtype.kind == "f":
                test = f"{acc} == {acc} and ({test} or {elem} != {elem})"
            w.open(f"if {test}:")
            w(f"{acc} = {elem}")
            w(f"{self._idx(node)}{at} = {self.arg_position(node)}")
            w.close()
            return
        w(f"{elem} = {self.element(node, rule.acc_dtype)}")
        if rule.two_pass and phase == 1:
            text = f"{acc} + {elem}"
        else:
            mean = self.mean_ref(node)
            text = rule.combine.format(acc=acc, v=elem, mean=mean, n="count", ddof=repr(rule.ddof))
        if rule.acc_dtype not in _WIDE_OK:
            text = cast(text, None, rule.acc_dtype)
        w(f"{acc} = {text}")

    def mean_ref(self, node: Node) -> str:
        name = f"mean_{self.acc[node]}"
        if self.k.style == "columns":
            return f"{name}[{self.kept_index()}]"
        return name

    def arg_position(self, node: Node) -> str:
        axes = self.k.reduce_axes
        if len(axes) == 1:
            return self.var(axes[0])
        text = self.var(axes[0])
        for d in axes[1:]:
            text = f"({text}) * {self.bound(d)} + {self.var(d)}"
        return text

    def finalize(self, node: Node, acc: str) -> str:
        rule: ReductionRule = self.k.rules[node]
        if rule.arg:
            return cast(acc, np.dtype(np.int64), rule.result_dtype)
        text = rule.finalize.format(acc=acc, n="count", ddof=repr(rule.ddof))
        same = text == acc and rule.acc_dtype == rule.result_dtype
        return text if same else cast(text, None, rule.result_dtype)

    # -- the function ---------------------------------------------------------------------

    def emit(self, name: str, parallel: bool) -> str:
        self.parallel = parallel
        w = _Writer()
        self.prelude(w)
        if self.k.style == "pointwise":
            self.pointwise_body(w)
        elif self.k.style == "rows":
            self.rows_body(w)
        else:
            self.columns_body(w)
        if self.returns:
            w("return " + ", ".join(self.local[n] for n in self.returns))
        params = [self.param[n] for n in self.k.inputs] + [self.out[n] for n in self.buffers]
        flags = 'cache={cache}, error_model="numpy"' + (", parallel=True" if parallel else "")
        head = [f"@numba.njit({flags})", f"def {name}({', '.join(params)}):"]
        return "\n".join(head + w.lines) + "\n"

    def prelude(self, w: _Writer) -> None:
        for d, source in enumerate(self.k.dims):
            if self.k.shape[d] == 1:
                continue
            if isinstance(source, tuple):
                node, axis = source
                w(f"n{d} = {self.param[node]}.shape[{axis}]")
            else:
                w(f"n{d} = {int(source)}")
        reducing = [n for n in self.k.nodes if isinstance(self.k.rules[n], ReductionRule)]
        if reducing:
            dims = [self.bound(d) for d in self.k.reduce_axes if self.k.shape[d] != 1]
            w(f"count = {' * '.join(dims) if dims else '1'}")
            raised: set[str] = set()
            for node in reducing:
                rule = self.k.rules[node]
                if rule.needs_elements and rule.name not in raised:
                    raised.add(rule.name)
                    w(f"if count == 0:")
                    w(f"    raise ValueError({empty_message(rule.name)!r})")
        for node, name in self.scalar_input.items():
            w(f"{name} = {self.param[node]}[()]")

    def loop(self, w: _Writer, d: int) -> bool:
        if self.k.shape[d] == 1:
            return False
        loop = "numba.prange" if self.parallel and d == self.k.parallel_dim else "range"
        w.open(f"for i{d} in {loop}(n{d}):")
        return True

    def loops(self, w: _Writer, dims: range | list[int]) -> int:
        return sum(self.loop(w, d) for d in dims)

    def pointwise_body(self, w: _Writer) -> None:
        opened = self.loops(w, range(self.ndim))
        for node in self.k.nodes:
            self.compute(w, node)
        for node in self.buffers:
            self.store(w, node)
        w.close(opened)

    def rows_body(self, w: _Writer) -> None:
        k = self.k
        opened = self.loops(w, range(k.outer))
        inner_shape = [self.bound(d) for d in range(k.outer, self.ndim)]
        for node, name in self.temp.items():
            w(f"{name} = np.empty(({', '.join(inner_shape)},), {type_name(node.meta.dtype)})")
        self.outer_nodes(w, k.prologue)
        for sweep in k.sweeps:
            for node in sweep.reductions:
                self.init_acc(w, node, sweep.phase[node])
            inner = self.loops(w, range(k.outer, self.ndim))
            for node in sweep.load:
                w(f"{self.local[node]} = {self.load_ref(node)}")
            for node in sweep.compute:
                self.compute(w, node)
            for node in sweep.store:
                self.store(w, node)
            for node in sweep.stash:
                w(f"{self.stash_ref(node)} = {self.local[node]}")
            for node in sweep.reductions:
                self.combine(w, node, sweep.phase[node])
            w.close(inner)
            for node in sweep.reductions:
                rule = k.rules[node]
                acc = self.acc[node]
                if rule.two_pass and sweep.phase[node] == 1:
                    w(f"mean_{acc} = {acc} / count")
                    continue
                if rule.arg:
                    acc = self._idx(node)
                w(f"{self.local[node]} = {self.finalize(node, acc)}", node.origin)
            self.outer_nodes(w, [n for n in sweep.after])
        w.close(opened)

    def load_ref(self, node: Node) -> str:
        if node in self.k.stash:
            return self.stash_ref(node)
        return f"{self.out[node]}[{self.out_index(node)}]"

    def kept_index(self) -> str:
        return self.index([self.var(d) for d in self.k.kept_axes])

    def kept_shape(self) -> str:
        dims = [self.bound(d) for d in self.k.kept_axes]
        return f"({', '.join(dims)},)"

    def columns_body(self, w: _Writer) -> None:
        k = self.k
        reductions = [n for n in k.nodes if isinstance(k.rules[n], ReductionRule)]
        kept = list(k.kept_axes)
        at = f"[{self.kept_index()}]"
        for node in reductions:
            rule = k.rules[node]
            w(f"{self.acc[node]} = np.empty({self.kept_shape()}, {type_name(rule.acc_dtype)})")
            if rule.arg:
                w(f"{self._idx(node)} = np.empty({self.kept_shape()}, np.int64)")
            if rule.two_pass:
                w(f"mean_{self.acc[node]} = np.empty({self.kept_shape()}, np.float64)")
        for sweep in k.sweeps:
            opened = self.loops(w, kept)
            for node in sweep.reductions:
                self.init_acc(w, node, sweep.phase[node], at)
            w.close(opened)
            opened = self.loops(w, range(self.ndim))
            for node in sweep.load:
                w(f"{self.local[node]} = {self.load_ref(node)}")
            for node in sweep.compute:
                self.compute(w, node)
            for node in sweep.store:
                self.store(w, node)
            for node in sweep.reductions:
                self.combine(w, node, sweep.phase[node], at)
            w.close(opened)
            opened = self.loops(w, kept)
            for node in sweep.reductions:
                rule = k.rules[node]
                acc = self.acc[node] + at
                if rule.two_pass and sweep.phase[node] == 1:
                    w(f"mean_{self.acc[node]}{at} = {acc} / count")
                    continue
                if rule.arg:
                    acc = self._idx(node) + at
                w(f"{self.local[node]} = {self.finalize(node, acc)}", node.origin)
                if node in k.outputs:
                    self.store(w, node)
            w.close(opened)


def kernel_code(kernel: KernelPlan, plan: Plan, cache: bool) -> KernelCode:
    """The source of a kernel module (helpers, serial kernel, parallel twin) and its calling shape."""
    emitter = KernelEmitter(kernel, plan)
    serial = emitter.emit(kernel.name, parallel=False)
    parallel_name = None
    parts = [serial]
    if kernel.parallel_dim is not None:
        parallel_name = f"{kernel.name}_parallel"
        parts.append(emitter.emit(parallel_name, parallel=True))
    origins = []
    for node in kernel.nodes:
        if node.origin and node.origin not in origins:
            origins.append(node.origin)
    header = [f'"""{kernel.name}: {kernel.style} kernel over {_shape_text(kernel)} '
              f'(generated by astcompiler\'s numba backend).',
              "",
              "Nodes: " + ", ".join(n.name for n in kernel.nodes) + ".",
              *(["Source lines: " + ", ".join(origins) + "."] if origins else []),
              '"""', "", "import numpy as np", "import numba", ""]
    helpers = []
    for key in emitter.helpers:
        text = helper_source(key)
        helpers.append(f"\n@numba.njit(cache={{cache}}, error_model=\"numpy\")\n{text}")
    body = "\n".join(header) + "".join(helpers) + "\n\n" + "\n\n".join(parts)
    source = body.replace("{cache}", "True" if cache else "False")
    return KernelCode(kernel.name, source, parallel_name, list(kernel.inputs),
                      list(emitter.buffers), list(emitter.returns), kernel)


def _shape_text(kernel: KernelPlan) -> str:
    dims = ", ".join(str(d) for d in kernel.shape)
    text = f"[{dims}]"
    if kernel.style == "rows":
        text += f", reducing axes {tuple(range(kernel.outer, len(kernel.shape)))} per row"
    elif kernel.style == "columns":
        text += f", reducing axes {kernel.reduce_axes}"
    return text


__all__ = ["KernelCode", "KernelEmitter", "Namer", "kernel_code", "helper_call"]
