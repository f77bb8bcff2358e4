"""CPU code generation: a ``KernelPlan`` becomes a numba module with explicit loop nests.

Each kernel module holds a serial function and, when the plan has a parallel loop, a
``parallel=True`` twin that runs that loop with ``numba.prange``; the wrapper picks one at
run time from the iteration-space size (``config.parallel_threshold``), so one module serves
every size. Loop bounds are read from the arguments' ``.shape``; broadcasting is an index
pattern (a size-1 input dim is indexed with 0, missing leading dims are dropped). Outputs are
allocated by the wrapper (NumPy's allocator is much faster than allocating inside njit) and
filled here; 0-d NumPy-scalar results are returned as values.

Float sums (sum, mean, var, std of float32/float64 into the same dtype) give NumPy's bits where
NumPy's order is known (``exact_rules``): over the last axis alone and over whole 1-D arrays they
add in NumPy's pairwise order (``pairwise.py``: static rows of 8 to 128 unroll its eight
accumulators, static rows up to ``PAIRWISE_STATIC`` write its tree out, others use a plan made at
run time; an input row of unit stride is summed in place, other summands go through a buffer of
``PAIRWISE_CHUNK`` elements that the sweep's vectorized loop fills), in the input's float; columns
kernels add rows in order in the input's float, as NumPy does for C arrays. Rows kernels reducing
several trailing axes (whole N-d arrays included) also hold a flattened twin over the collapsed
axes (``flat_sums.py``), which their entries call when the operands' layouts let NumPy coalesce
those axes into one run.

Other reductions over the innermost axis accumulate in ``VECTOR_LANES`` independent lanes when
their ``merge`` allows it (or they are ``argmax``/``argmin``) and the sweep's element work is cheap
or vectorizable (``vecmath``): the accumulators are small arrays and the innermost loop runs over
the lanes of one block, a loop without a loop-carried chain that LLVM's loop vectorizer turns
into packed instructions (numba leaves the SLP vectorizer off, so unrolled scalar lanes would
stay scalar). The lanes are merged as a tree. Lane ``u`` takes the elements ``u, u + 64, ...``
(the tail after the last full block goes to lane 0). Float sums that keep these lanes (several
reduced axes, whole arrays of 2 or more dims, ``ac.config.pairwise_sums = False``) accumulate in
float64 with a rounding error of at most ``(n / 64 + 70) * eps * sum(|x|)`` (rows shorter than 128
use one accumulator or four unrolled lanes, within ``n * eps``). ``argmax``/``argmin`` keep a
value lane and an index lane (strict comparison: the first occurrence in a lane; the first NaN
wins, as in NumPy) and the tree picks the better value, then the smaller index. A reduction over
all axes (no outer loop to parallelize) runs its sweeps over ``CHUNKS`` slices of the first axis
in the parallel twin, merging the partial results in slice order (pairwise sums: over subtrees of
NumPy's tree, combined as the tree does); a rows kernel's parallel twin runs ``CHUNKS`` slices of
rows, each with its own row temporaries and lane arrays (allocated once per slice).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import keyword
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from ...config import config
from ...graph import Node
from .flat_sums import FlatTwin, dispatch_lines, flat_twin
from .masked import OVERLAP_SOURCE, snapshots
from .optable import empty_rerun, zero_rerun
from .plan import GatherRule, KernelPlan, Plan, ReductionRule, ScalarRule, Sweep
from .unit_strides import unit_stride_test
from .scalar import (cast, cheap, constant, empty_message, helper_imports, helper_source,
                     raises_flags, type_name)
from .vecmath import (FAST_BLOCK, big_call, call_name, fast_call, fast_import_line,
                      libm_call)
from ...source.python_ast import parse as parse_python

LANES = 4  # independent accumulators in an unrolled reduction loop (kept for callers)
VECTOR_LANES = 64  # lanes of a vectorized reduction (array accumulators, a power of two)
SHORT_ROW = 8  # static innermost extents below this reduce with one accumulator (as NumPy's)
# a columns kernel reducing axis 0, in parallel: blocks of this many columns (a multiple of the
# SIMD width; narrower blocks read a row in runs too short for the prefetcher: slower)
COLUMN_BLOCK = 256
COLUMN_PARALLEL_MIN = 1 << 19  # elements below which those blocks run serially (measured: 2 cores)
CHUNKS = 64  # slices of a whole-array reduction in the parallel twin (fixed: same result on any machine)
# NumPy's pairwise sums (``pairwise.py``; these mirror its constants, which import numba)
PAIRWISE_LANES = 8  # NumPy's accumulators in a block of <= 128 (static rows: unrolled lanes)
PAIRWISE_LEAF = 128  # NumPy's PW_BLOCKSIZE
PAIRWISE_CHUNK = 2048  # pairwise.CHUNK: summands buffered per node of the sum tree
PAIRWISE_STACK = 256  # pairwise.STACK
PAIRWISE_PLAN = 768  # pairwise.PLAN
PAIRWISE_VALUES = 128  # pairwise.VALUES
PAIRWISE_SMALLEST = 8192  # elements at least in a prange twin's subtree of the sum tree
PAIRWISE_STATIC = 4096  # static rows up to this length: their sum tree is written out
PAIRWISE_IMPORT = ("from astcompiler.lower.numba.pairwise import block_sum8, block_sums4, "
                   "flat_view, pairwise_level, pairwise_sum  # NumPy's pairwise float sums")
_SUM_TERM = "{acc} + "
# float max/min whose whole blocks of lanes run in registers (lane_loops.py), by combine template
LANE_LOOPS = {"({v} if {v} >= {acc} else {acc})": "lanes_max",
              "({v} if {v} <= {acc} else {acc})": "lanes_min"}
LANE_LOOPS_IMPORT = ("from astcompiler.lower.numba.lane_loops import lanes_max, lanes_min  "
                     "# max/min lanes in registers {}")


def lane_loops_import() -> str:
    """The import of ``lane_loops``, tagged with a hash of its source: numba's disk cache of a
    kernel tracks only the kernel's module, so a changed intrinsic must change the kernel's
    source (as ``vecmath.import_line``)."""
    import hashlib
    import pathlib

    text = (pathlib.Path(__file__).parent / "lane_loops.py").read_bytes()
    return LANE_LOOPS_IMPORT.format(hashlib.sha256(text).hexdigest()[:12])
_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))

# accumulator dtypes whose arithmetic numba does not widen: no cast back after each step
_STABLE = frozenset(np.dtype(t) for t in (np.float64, np.int64, np.uint64, np.bool_))


class Namer:
    """Unique, valid, readable identifiers."""

    def __init__(self, reserved: set[str] | None = None):
        self.used: set[str] = set(reserved or ())

    def __call__(self, hint: str, prefixes: tuple[str, ...] = ("",),
                 suffixes: tuple[str, ...] = ("",)) -> str:
        """A fresh name; every ``prefix + name + suffix`` variant is free and reserved too."""
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in hint) or "v"
        if base[0].isdigit():
            base = "v_" + base
        name, count = base, 1
        while any(f"{p}{name}{x}" in self.used or keyword.iskeyword(f"{p}{name}{x}")
                  for p in prefixes for x in suffixes):
            name = f"{base}_{count}"
            count += 1
        self.used.update(f"{p}{name}{x}" for p in prefixes for x in suffixes)
        return name


_RESERVED = set(dir(builtins)) | {"np", "numba", "count", "chunks", "lo", "hi", "c", "u"}
_ACC_PREFIXES = ("", "nan_", "idx_", "mean_", "part_", "partnan_")  # an accumulator's companions


@dataclass
class KernelCode:
    """A generated kernel module and how the wrapper calls it."""

    name: str
    source: str
    parallel_name: str | None
    inputs: list[Node]
    buffers: list[Node]  # outputs the wrapper allocates and passes after the inputs
    returns: list[Node]  # 0-d outputs returned as values, in order
    plan: KernelPlan | None = field(repr=False, default=None)


@dataclass(frozen=True)
class _Lane:
    suffix: str = ""  # appended to per-element locals and accumulators
    dim: int | None = None  # the unrolled dim
    shift: int = 0  # added to its loop variable
    slot: str = ""  # appended to accumulators only: a vector lane (``_v[u]``)


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


def _arithmetic(template: str) -> bool:
    """Whether a combine/merge template does arithmetic numba may widen (not a select)."""
    return any(op in template for op in ("+", "-", "*", "/", "np."))


class KernelEmitter:
    watches_zeros = True  # float max/min results report zeros (the CPU wrapper checks; not CUDA)
    """Emits one kernel function (serial or parallel) for a ``KernelPlan``."""

    def __init__(self, kernel: KernelPlan, plan: Plan, nested: bool = False,
                 shapes: dict[Node, tuple] | None = None):
        """``nested``: called from numba code (a structured function), which holds 0-d values
        as numbers: every 0-d input and output is a scalar value, never a 0-d array.
        ``shapes``: the members' shapes in a flattened twin (``flat_sums.py``)."""
        self.k = kernel
        self.shapes = shapes or {}
        self.twin: KernelEmitter | None = None  # the flattened twin the entries may call
        self.twin_spec: FlatTwin | None = None
        self.plan = plan
        self.ndim = len(kernel.shape)
        self.names = Namer(_RESERVED | {f"i{d}" for d in range(self.ndim)}
                           | {f"n{d}" for d in range(self.ndim)}
                           | {f"end{d}" for d in range(self.ndim)}
                           | {f"b{d}" for d in range(self.ndim)})
        self.returns = [n for n in kernel.outputs
                        if n.meta.shape == () and (n.meta.scalar or nested)]
        self.buffers = [n for n in kernel.outputs if n not in self.returns]
        self.param = {n: self.names(n.name) for n in kernel.inputs}
        self.out = {n: self.names(f"out_{n.name}") for n in self.buffers}
        lanes = ("",) + tuple(f"_l{u}" for u in range(PAIRWISE_LANES)) + ("_c", "_v")
        self.local = {n: self.names(n.name, suffixes=lanes) for n in kernel.nodes}
        self.reductions = [n for n in kernel.nodes if isinstance(kernel.rules[n], ReductionRule)]
        self.exact = exact_rules(kernel, self.reductions)  # NumPy's float-sum dtypes and order
        self.uses_pairwise = False
        self.uses_lane_loops = False  # max/min lanes in registers (lane_loops.py)
        self.uses_zero_watch = False  # a float max/min result reports zeros (runtime.zero_watch)
        self.uses_empty_check = False  # a mean/var/std reports empty slices (runtime.empty_check)
        self.fast_keys: dict[Node, str] = {}  # sin/cos members with a fast variant (fast_blocks)
        self.fast_on = False  # emitting a block's body with the fast variants
        self.fast_select = False  # ... per element: the fast variant, libm past it (fast_blocks)
        self.fast_big = self.names("trig_big")
        self.nonnegative: set[int] = set()  # dims looped over a run-time range (column_blocks)
        self.acc = {n: self.names(f"acc_{n.name}", _ACC_PREFIXES, lanes) for n in self.reductions}
        self.elem = {n: self.names(f"e_{n.name}", suffixes=lanes) for n in self.reductions}
        self.temp = {n: self.names(f"tmp_{n.name}") for n, buf in kernel.stash.items()
                     if buf is None}
        self.scalar_input = {n: self.names(f"{n.name}_v") for n in kernel.inputs
                             if n.meta.shape == () and not (nested or n.meta.scalar
                                                             or n in plan.weak)}
        self.helpers: list[str] = []
        for node in kernel.nodes:
            for key in kernel.rules[node].helpers:
                if key not in self.helpers:
                    self.helpers.append(key)
        self.lane = _Lane()
        self.parallel = False
        self.unit_test: str | None = None  # pointwise loops over views: unit_strides.py
        self.scratch: dict[str, tuple[int, str]] = {}  # arrays a row function is handed: size, dtype
        self.pairwise_scratch: set[str] = set()  # of those, the ones every row function takes
        self.zeroed: set[str] = set()  # of those, the ones that start as zeros
        self.scratch_param = False  # lane arrays are parameters (row function), else allocated
        self.row_mode: str | None = None  # row functions: "long" (vector lanes) or "short" rows
        self.row_scratch = False  # generating a row function: pairwise scratch are parameters
        self.row_bodies: dict[str, list[str]] = {}  # row functions' lines, by mode (row_body)
        self.buffered: set[Node] = set()  # pairwise sums whose summands go to their buffers now
        self.pw = {key: self.names(f"pw_{key}") for key in
                   ("top", "start", "size", "half", "count", "stack", "subtree", "starts", "sizes")}

    # -- names and index expressions --------------------------------------------------------

    @contextmanager
    def in_lane(self, lane: _Lane) -> Iterator[None]:
        saved, self.lane = self.lane, lane
        try:
            yield
        finally:
            self.lane = saved

    def var(self, d: int) -> str:
        if self.k.shape[d] == 1:
            return "0"
        if self.lane.dim == d and self.lane.shift:
            return f"i{d} + {self.lane.shift}"
        return f"i{d}"

    def bound(self, d: int) -> str:
        return "1" if self.k.shape[d] == 1 else f"n{d}"

    @staticmethod
    def index(exprs: list[str]) -> str:
        return ", ".join(exprs) if exprs else "()"

    def value(self, node: Node) -> str:
        """The local holding a member's value (per lane for per-element members)."""
        return self.local[node] + (self.lane.suffix if node in self.k.inner else "")

    def acc_name(self, node: Node, kind: str = "acc") -> str:
        base = self.acc[node]
        name = {"acc": base, "nan": f"nan_{base}", "idx": f"idx_{base}", "mean": f"mean_{base}",
                "part": f"part_{base}", "partnan": f"partnan_{base}"}[kind]
        return name + (self.lane.suffix + self.lane.slot if kind in ("acc", "nan", "idx")
                       else "")

    def leaf(self, node: Node, consumer_ndim: int) -> str:
        """Read an input in the context of a consumer of ``consumer_ndim`` dims."""
        masked = self.k.masked
        if masked is not None and node in masked.gathers:  # x[mask]: x's element at the index
            return f"{self.param[masked.gathers[node]]}[{self.full_index()}]"
        if node.meta.shape == ():
            return self.scalar_input.get(node, self.param[node])
        shape = self.shape_of(node)
        idx = []
        for j, size in enumerate(shape):
            d = j + consumer_ndim - len(shape)
            idx.append("0" if size == 1 else self.var(d))
        return f"{self.param[node]}[{self.index(idx)}]"

    def out_index(self, node: Node) -> str:
        """Index of a member's own element in its output buffer (or stash)."""
        shape = self.shape_of(node)
        if isinstance(self.k.rules[node], ReductionRule) and self.k.style == "columns":
            kept = self.k.kept_axes
            if len(shape) == self.ndim:
                return self.index([self.var(d) if d in kept else "0" for d in range(self.ndim)])
            return self.index([self.var(d) for d in kept])
        per_element = node in self.k.inner or self.k.style == "pointwise"
        return self.index([self.var(d) if shape[d] != 1 and (per_element or d < self.k.outer)
                           else "0" for d in range(len(shape))])

    def shape_of(self, node: Node) -> tuple:
        """A node's shape as this kernel reads it (collapsed in a flattened twin)."""
        return self.shapes.get(node, tuple(node.meta.shape))

    def dtype_of(self, value: Any) -> np.dtype | None:
        if isinstance(value, Node):
            if value in self.plan.weak:
                return np.dtype(np.float64 if self.plan.weak[value] is float else np.int64)
            return np.dtype(value.meta.dtype)
        return None

    # -- expressions ----------------------------------------------------------------------

    def operand(self, value: Any, dtype: np.dtype | None, ndim: int) -> str:
        """An operand's source, cast to ``dtype`` (None: as it is)."""
        if isinstance(value, Node):
            text = self.value(value) if value in self.k.rules else self.leaf(value, ndim)
            if dtype is None:
                return text
            src = self.dtype_of(value)
            if self.plan.weak.get(value) is int and np.dtype(dtype).kind == "f":
                # NumPy makes a Python int a float through float64 (rounding twice for float32)
                src, text = np.dtype(np.float64), cast(text, src, np.dtype(np.float64))
            return cast(text, src, dtype)
        if isinstance(value, np.generic):
            value = value.item()
        return repr(value) if dtype is None else constant(value, dtype)

    def pointwise(self, node: Node) -> str:
        rule: ScalarRule = self.k.rules[node]
        ndim = len(self.shape_of(node))
        picks = rule.operands if rule.operands is not None else range(len(node.args))
        texts = ["None"] * len(node.args)
        for i in picks:
            dtype = rule.operand_dtypes[i] if i < len(rule.operand_dtypes) else None
            texts[i] = self.operand(node.args[i], dtype, ndim)
        if isinstance(rule, GatherRule):  # the gathered array, whole (plan.KernelPlan.gathered)
            texts[rule.table] = self.param[node.args[rule.table]]
        expr = rule.template.format(*texts)
        result = rule.result_dtype
        if result is None and rule.template == "{0}":
            result = self.dtype_of(node.args[0])
        return cast(expr, result, np.dtype(node.meta.dtype))

    def element(self, node: Node, dtype: np.dtype) -> str:
        """A reduction's element, cast to ``dtype``."""
        source = node.args[0]
        text = self.value(source) if source in self.k.rules else self.leaf(source, self.ndim)
        return cast(text, self.dtype_of(source), dtype)

    # -- statements -----------------------------------------------------------------------

    def compute(self, w: _Writer, node: Node) -> None:
        text = self.pointwise(node)
        key = self.fast_keys.get(node) if self.fast_on or self.fast_select else None
        if key is not None:  # the small-argument variant; the block reruns past it
            dtypes = self.k.rules[node].operand_dtypes
            arg = self.operand(node.args[0], dtypes[0] if dtypes else None, len(node.meta.shape))
            fast = text.replace(f"{call_name(key)}(", f"{fast_call(key)}(", 1)
            if self.fast_select:  # an element's bits do not depend on its block's others
                libm = text.replace(f"{call_name(key)}(", f"{libm_call(key)}(", 1)
                text = f"({fast} if not {big_call(key)}({arg}) else {libm})"
            else:
                text = fast
                w(f"{self.fast_big} = {self.fast_big} | {big_call(key)}({arg})")
        w(f"{self.value(node)} = {text}", node.origin)

    def store(self, w: _Writer, node: Node) -> None:
        if node not in self.returns:
            w(f"{self.out[node]}[{self.out_index(node)}] = {self.value(node)}")

    def stash_ref(self, node: Node) -> str:
        buffer = self.k.stash[node]
        if buffer is None:
            inner = [self.var(d) for d in range(self.k.outer, self.ndim)]
            return f"{self.temp[node]}[{self.index(inner)}]"
        return f"{self.out[buffer]}[{self.out_index(buffer)}]"

    def load_ref(self, node: Node) -> str:
        if node in self.k.stash:
            return self.stash_ref(node)
        return f"{self.out[node]}[{self.out_index(node)}]"

    def outer_nodes(self, w: _Writer, nodes: list[Node]) -> None:
        for node in nodes:
            if not isinstance(self.k.rules[node], ReductionRule):
                self.compute(w, node)
            if node in self.k.outputs:
                self.store(w, node)

    def sweep_body(self, w: _Writer, sweep: Sweep, at: str = "") -> None:
        """One element of a sweep: loads, members, stores, stashes, accumulation."""
        for node in sweep.load:
            w(f"{self.value(node)} = {self.load_ref(node)}")
        for node in sweep.compute:
            self.compute(w, node)
        for node in sweep.store:
            self.store(w, node)
        for node in sweep.stash:
            w(f"{self.stash_ref(node)} = {self.value(node)}")
        for node in sweep.reductions:
            self.combine(w, node, sweep.phase[node], at)

    # -- reductions -----------------------------------------------------------------------

    def rule(self, node: Node) -> ReductionRule:
        return self.exact.get(node) or self.k.rules[node]

    def init_acc(self, w: _Writer, node: Node, phase: int, at: str = "") -> None:
        rule = self.rule(node)
        init = constant(0, rule.acc_dtype) if rule.two_pass and phase == 1 else rule.init
        w(f"{self.acc_name(node)}{at} = {init}")
        if rule.arg:
            w(f"{self.acc_name(node, 'idx')}{at} = np.int64(0)")
        if rule.nan_flag:
            w(f"{self.acc_name(node, 'nan')}{at} = False")

    def combine(self, w: _Writer, node: Node, phase: int, at: str = "") -> None:
        rule = self.rule(node)
        acc = self.acc_name(node) + at
        elem = self.elem[node] + self.lane.suffix
        if node in self.buffered:  # a pairwise sum's summand, into its buffer
            w(f"{elem} = {self.element(node, rule.acc_dtype)}")
            term = elem
            if not (rule.two_pass and phase == 1):
                term = rule.combine[len(_SUM_TERM):].format(
                    v=elem, mean=self.mean_ref(node) if rule.two_pass else "", n="count",
                    ddof=repr(rule.ddof))
                term = cast(term, None, rule.acc_dtype) if _arithmetic(term) else term
            position = f"{self.var(self.ndim - 1)} - {self.pw['start']}"
            w(f"{self.pw_name(node, 'buf')}[{position}] = {term}")
            return
        if rule.arg:
            w(f"{elem} = {self.element(node, rule.input_dtype)}")
            test = rule.combine.format(acc=acc, v=elem)
            if self.lane.slot:  # a vector lane: selects, no branch (the first NaN stays)
                if rule.input_dtype.kind == "f":
                    test = f"({test}) | (({elem} != {elem}) & ({acc} == {acc}))"
                idx = self.acc_name(node, "idx") + at
                w(f"{idx} = {self.arg_position()} if {test} else {idx}")
                w(f"{acc} = {elem} if {test} else {acc}")
                return
            if rule.input_dtype.kind == "f":
                test = f"{acc} == {acc} and ({test} or {elem} != {elem})"
            w.open(f"if {test}:")
            w(f"{acc} = {elem}")
            w(f"{self.acc_name(node, 'idx')}{at} = {self.arg_position()}")
            w.close()
            return
        w(f"{elem} = {self.element(node, rule.acc_dtype)}")
        if rule.two_pass and phase == 1:
            text = f"{acc} + {elem}"
        else:
            mean = self.mean_ref(node) if rule.two_pass else ""
            text = rule.combine.format(acc=acc, v=elem, mean=mean, n="count", ddof=repr(rule.ddof))
        if _arithmetic(rule.combine) and rule.acc_dtype not in _STABLE:
            text = cast(text, None, rule.acc_dtype)
        w(f"{acc} = {text}")
        if rule.nan_flag:
            flag = self.acc_name(node, "nan") + at
            w(f"{flag} = {flag} | ({elem} != {elem})")

    def mean_ref(self, node: Node) -> str:
        name = self.acc_name(node, "mean")
        return f"{name}[{self.kept_index()}]" if self.k.style == "columns" else name

    def arg_position(self) -> str:
        axes = self.k.reduce_axes
        text = self.var(axes[0])
        for d in axes[1:]:
            text = f"({text}) * {self.bound(d)} + {self.var(d)}"
        return text

    def finalize(self, node: Node, at: str = "") -> str:
        rule = self.rule(node)
        if rule.arg:
            return cast(self.acc_name(node, "idx") + at, np.dtype(np.int64), rule.result_dtype)
        acc = self.acc_name(node) + at
        text = rule.finalize.format(acc=acc, n="count", ddof=repr(rule.ddof))
        if node in self.exact and rule.acc_dtype != np.float64 and text.startswith("np.sqrt(") \
                and text.endswith(")"):  # NumPy's std: the square root of the rounded variance
            text = f"np.sqrt({cast(text[len('np.sqrt('):-1], None, rule.acc_dtype)})"
        if not (text == acc and rule.acc_dtype == rule.result_dtype):
            text = cast(text, None, rule.result_dtype)
        if rule.nan_flag:
            nan = constant(float("nan"), rule.result_dtype)
            text = f"{nan} if {self.acc_name(node, 'nan')}{at} else {text}"
        if self.watches_zeros and zero_rerun(node):  # a zero's sign: the CPU wrapper reruns
            self.uses_zero_watch = True
            text = f"zero_watch({text})"
        return text

    def finish_sweep(self, w: _Writer, sweep: Sweep, at: str = "") -> None:
        """After a sweep: means of two-pass reductions, results of the others."""
        for node in sweep.reductions:
            rule = self.rule(node)
            if rule.two_pass and sweep.phase[node] == 1:
                mean = f"{self.acc_name(node)}{at} / count"
                if node in self.exact and rule.acc_dtype != np.float64:
                    mean = cast(mean, None, rule.acc_dtype)  # NumPy's mean, in the input's float
                w(f"{self.mean_ref(node)} = {mean}")
                continue
            w(f"{self.local[node]} = {self.finalize(node, at)}", node.origin)

    # -- lanes and chunks -------------------------------------------------------------------

    def lanes_for(self, sweep: Sweep) -> int:
        """Vector lanes for a sweep whose element work vectorizes (cheap ops, ``vecmath``
        functions) and whose reductions merge partial results (or are argmax/argmin)."""
        if not sweep.reductions or self.k.shape[-1] == 1 or self.k.outer == self.ndim:
            return 1
        last = self.k.shape[-1]
        if isinstance(last, (int, np.integer)) and last < SHORT_ROW:  # (x ** 2).sum(axis=-1)
            return 1  # of n x 3 points: lanes would cost more than the row itself
        if not all(cheap(n) or _vectorizable(self.k.rules[n]) for n in sweep.compute):
            return 1
        return VECTOR_LANES if all(self.rule(n).merge or self.rule(n).arg
                                   for n in sweep.reductions) else 1

    def lane_arrays(self, sweep: Sweep) -> list[tuple[str, str]]:
        """(name, dtype) of the lane arrays of a vectorized sweep's accumulators."""
        arrays = []
        for node in sweep.reductions:
            rule = self.rule(node)
            arrays.append((self.acc[node] + "_v", type_name(rule.acc_dtype)))
            if rule.nan_flag:
                arrays.append((f"nan_{self.acc[node]}_v", "np.bool_"))
            if rule.arg:
                arrays.append((f"idx_{self.acc[node]}_v", "np.int64"))
        return arrays

    def init_lanes(self, w: _Writer, sweep: Sweep, lanes: int) -> None:
        """The accumulators' initial values, in every lane (lane arrays: allocated here unless
        they are the row function's parameters)."""
        if lanes != VECTOR_LANES:  # one accumulator, or unrolled scalar lanes
            for lane in self.lane_list(lanes, self.ndim - 1):
                with self.in_lane(lane):
                    for node in sweep.reductions:
                        self.init_acc(w, node, sweep.phase[node])
            return
        for name, dtype in self.lane_arrays(sweep):
            if self.scratch_param:
                self.scratch[name] = (VECTOR_LANES, dtype)
            else:
                w(f"{name} = np.empty({VECTOR_LANES}, {dtype})")
        w.open(f"for u in range({VECTOR_LANES}):")
        with self.in_lane(_Lane(slot="_v[u]")):
            for node in sweep.reductions:
                self.init_acc(w, node, sweep.phase[node])
        w.close()

    def lane_list(self, lanes: int, dim: int) -> list[_Lane]:
        if lanes == 1:
            return [_Lane()]
        return [_Lane(f"_l{u}", dim, u) for u in range(lanes)]

    def merge_lanes(self, w: _Writer, sweep: Sweep, lanes: int, into: str = "") -> None:
        """Combine the lanes' accumulators pairwise, in lane order, into ``acc<into>``."""
        if lanes == 1:
            return
        if lanes == VECTOR_LANES:
            self.merge_vector_lanes(w, sweep, into)
            return
        for node in sweep.reductions:
            rule = self.rule(node)
            names = [self.acc[node] + f"_l{u}" for u in range(lanes)]
            self.pairwise(w, names, lambda a, b: self.merged(rule, a, b))
            w(f"{self.acc[node]}{into} = {names[0]}")
            if rule.nan_flag:
                flags = [f"nan_{self.acc[node]}_l{u}" for u in range(lanes)]
                self.pairwise(w, flags, lambda a, b: f"{a} | {b}")
                w(f"nan_{self.acc[node]}{into} = {flags[0]}")

    def merge_vector_lanes(self, w: _Writer, sweep: Sweep, into: str = "") -> None:
        """Lane arrays as a tree: lane ``u`` takes lane ``u + s`` for s = 32, 16, ..., 1."""
        step = VECTOR_LANES // 2
        while step:
            w.open(f"for u in range({step}):")
            for node in sweep.reductions:
                rule = self.rule(node)
                a, b = f"{self.acc[node]}_v[u]", f"{self.acc[node]}_v[u + {step}]"
                if rule.arg:
                    ia, ib = f"idx_{self.acc[node]}_v[u]", f"idx_{self.acc[node]}_v[u + {step}]"
                    better = rule.combine.format(acc=a, v=b)
                    test = f"{better} or ({b} == {a} and {ib} < {ia})"
                    if rule.input_dtype.kind == "f":
                        test = f"({b} != {b} and ({a} == {a} or {ib} < {ia})) or ({a} == {a} and ({test}))"
                    w.open(f"if {test}:")
                    w(f"{a} = {b}")
                    w(f"{ia} = {ib}")
                    w.close()
                    continue
                w(f"{a} = {self.merged(rule, a, b)}")
                if rule.nan_flag:
                    flag = f"nan_{self.acc[node]}_v"
                    w(f"{flag}[u] = {flag}[u] | {flag}[u + {step}]")
            w.close()
            step //= 2
        for node in sweep.reductions:
            rule = self.rule(node)
            w(f"{self.acc[node]}{into} = {self.acc[node]}_v[0]")
            if rule.nan_flag:
                w(f"nan_{self.acc[node]}{into} = nan_{self.acc[node]}_v[0]")
            if rule.arg:
                w(f"idx_{self.acc[node]}{into} = idx_{self.acc[node]}_v[0]")

    @staticmethod
    def pairwise(w: _Writer, names: list[str], pair: Callable[[str, str], str]) -> None:
        """names[0] = ((n0 . n1) . (n2 . n3)) ..., as statements."""
        step = 1
        while step < len(names):
            for i in range(0, len(names) - step, 2 * step):
                w(f"{names[i]} = {pair(names[i], names[i + step])}")
            step *= 2

    @staticmethod
    def merged(rule: ReductionRule, a: str, b: str) -> str:
        text = rule.merge.format(a=a, b=b)
        return cast(text, None, rule.acc_dtype) if _arithmetic(rule.merge) and \
            rule.acc_dtype not in _STABLE else text

    def nest(self, w: _Writer, dims: list[int], body: Callable[[], None], lanes: int,
             ranges: dict[int, tuple[str, str]] | None = None, prange: int | None = None) -> None:
        """Loops over ``dims`` (the last one unrolled into ``lanes``) around ``body``;
        ``prange``: the dim looped with ``numba.prange``."""
        ranges = ranges or {}
        if not dims:
            body()
            return
        d, rest = dims[0], dims[1:]
        if self.k.shape[d] == 1:
            self.nest(w, rest, body, lanes, ranges, prange)
            return
        lo, hi = ranges.get(d, ("0", f"n{d}"))
        if not rest and lanes == 1 and self.unit_test and d != prange:
            test, self.unit_test = self.unit_test, None  # the same loop twice: LLVM vectorizes
            w.open(f"if {test}:  # unit strides (unit_strides.py)")  # the first one
            self.nest(w, dims, body, lanes, ranges, prange)
            w.close()
            w.open("else:")
            self.nest(w, dims, body, lanes, ranges, prange)
            w.close()
            self.unit_test = test
            return
        if not rest and lanes == 1 and self.fast_keys and not self.fast_on \
                and not self.fast_select:
            self.fast_blocks(w, d, lo, hi, body, "numba.prange" if d == prange else "range")
            return
        if rest or lanes == 1:
            loop = "numba.prange" if d == prange else "range"
            w.open(f"for i{d} in {loop}({hi if lo == '0' else f'{lo}, {hi}'}):")
            if lo != "0" and d in self.nonnegative:
                w.open(f"if i{d} < 0:  # never: LLVM drops numba's wraparound test, vectorizes")
                w("continue")
                w.close()
            self.nest(w, rest, body, lanes, ranges, prange)
            w.close()
            return
        w(f"end{d} = {hi} - {hi} % {lanes}" if lo == "0" else f"end{d} = {hi} - ({hi} - {lo}) % {lanes}")
        if lanes == VECTOR_LANES:  # blocks of lanes; the lane loop is the one LLVM vectorizes
            w.open(f"for b{d} in range({lo}, end{d}, {lanes}):")
            w.open(f"for u in range({lanes}):")
            w(f"i{d} = b{d} + u")
            with self.in_lane(_Lane(slot="_v[u]")):
                body()
            w.close(2)
            w.open(f"for i{d} in range(end{d}, {hi}):")
            with self.in_lane(_Lane(slot="_v[0]")):
                body()
            w.close()
            return
        w.open(f"for i{d} in range({lo}, end{d}, {lanes}):")
        for lane in self.lane_list(lanes, d):
            with self.in_lane(lane):
                body()
        w.close()
        w.open(f"for i{d} in range(end{d}, {hi}):")
        with self.in_lane(_Lane("_l0", d, 0)):
            body()
        w.close()

    def fast_blocks(self, w: _Writer, d: int, lo: str, hi: str, body: Callable[[], None],
                    loop: str) -> None:
        """The innermost loop of a pointwise kernel calling sin/cos: blocks of ``FAST_BLOCK``
        elements with their small-argument variants (``VecFunction.fast_float64``); a block
        with an argument past them runs again element by element, each sin/cos with the fast
        variant or, past it, libm's (``vecmath.libm_call``), and so does the tail (one more
        block). An element's bits do not depend on its neighbours, and the kernel holds two
        loops of element code, not four (about half the compile time). Only the inputs are
        read and the outputs are fresh, so a block may be computed twice."""
        blocks, start = self.names(f"blocks{d}"), self.names(f"block{d}")
        w(f"{blocks} = ({hi} - {lo}) // {FAST_BLOCK}" if lo != "0" else
          f"{blocks} = {hi} // {FAST_BLOCK}")
        w.open(f"for {start} in {loop}({blocks} + 1):  # the last one: the tail")
        w(f"b{d} = {lo} + {start} * {FAST_BLOCK}" if lo != "0" else f"b{d} = {start} * {FAST_BLOCK}")
        w(f"{self.fast_big} = {start} == {blocks}")
        w.open(f"if not {self.fast_big}:")
        w.open(f"for u in range({FAST_BLOCK}):")
        w(f"i{d} = b{d} + u")
        self.fast_on = True
        body()
        self.fast_on = False
        w.close(2)
        w.open(f"if {self.fast_big}:  # an argument past the fast reduction, or the tail")
        w.open(f"for i{d} in range(b{d}, min(b{d} + {FAST_BLOCK}, {hi})):")
        self.fast_select = True
        body()
        self.fast_select = False
        w.close(2)
        w.close()

    def fast_variants(self) -> dict[Node, str]:
        """Members calling a vecmath function with a small-argument variant, in a pointwise
        kernel whose outputs are fresh arrays (a block may be computed twice)."""
        k = self.k
        if not config.fast_trig_blocks or k.style != "pointwise" or k.masked is not None \
                or k.store_into is not None or k.stored is not None or self.returns:
            return {}
        found = {}
        for node in k.nodes:
            rule = k.rules[node]
            keys = getattr(rule, "helpers", ())
            if isinstance(rule, ScalarRule) and len(keys) == 1 and fast_call(keys[0]) \
                    and rule.template == f"{call_name(keys[0])}({{0}})" and node.args:
                found[node] = keys[0]
        return found

    # -- functions ----------------------------------------------------------------------

    def params(self) -> list[str]:
        return [self.param[n] for n in self.k.inputs] + [self.out[n] for n in self.buffers]

    def context(self) -> list[str]:
        """What an entry computes once and hands to the body functions it calls."""
        names = list(self.scalar_input.values())
        names += [f"n{d}" for d in range(self.ndim) if self.k.shape[d] != 1]
        return names + (["count"] if self.reductions else [])

    @staticmethod
    def function(name: str, args: list[str], w: _Writer, parallel: bool = False) -> str:
        flags = 'cache={cache}, error_model="numpy"' + (", parallel=True" if parallel else "")
        head = [f"@numba.njit({flags})", f"def {name}({', '.join(args)}):"]
        return "\n".join(head + (w.lines or ["    pass"])) + "\n"

    def functions(self) -> list[str]:
        """Every function of the module: body functions first, then the entry points."""
        k = self.k
        if k.masked is not None:
            return self.masked_functions()
        if k.style == "rows" and k.outer > 0:
            modes = self.row_modes()
            sources = [self.row_function(mode) for mode in modes]
            entry = self.row_entry
        elif k.style == "rows":
            sources = self.sweep_functions()
            entry = self.whole_entry
        else:
            sources = []
            entry = self.loop_entry
        if self.twin is not None:  # its serial entry only runs inside this one's: numba inlines it
            sources = inline_entry(self.twin.functions(), self.twin.k.name) + sources
        sources.append(entry(k.name, False))
        if k.parallel_dim is not None:
            sources.append(entry(f"{k.name}_parallel", True))
        return sources

    def prelude(self, w: _Writer) -> None:
        for d, source in enumerate(self.k.dims):
            if self.k.shape[d] == 1:
                continue
            if isinstance(source, tuple):
                node, axis = source
                w(f"n{d} = {self.param[node]}.shape[{axis}]")
            else:
                w(f"n{d} = {int(source)}")
        if self.reductions:
            dims = [self.bound(d) for d in self.k.reduce_axes if self.k.shape[d] != 1]
            w(f"count = {' * '.join(dims) if dims else '1'}")
            self.opaque_empty_count(w)
            raised: set[str] = set()
            for node in self.reductions:
                rule = self.rule(node)
                if rule.needs_elements and rule.name not in raised:
                    raised.add(rule.name)
                    w.open("if count == 0:")
                    w(f"raise ValueError({empty_message(rule.name)!r})")
                    w.close()
            self.empty_checks(w)
        for node, name in self.scalar_input.items():
            w(f"{name} = {self.param[node]}[()]")

    def empty_checks(self, w: _Writer) -> None:
        """Means and variances: no degrees of freedom (an empty slice) is reported
        (``runtime.empty_check``), as NumPy then warns in Python, which no FP flag tells.
        (Not on CUDA, which has no such counter.)"""
        if not self.watches_zeros:
            return
        for ddof in dict.fromkeys(self.rule(n).ddof for n in self.reductions if empty_rerun(n)):
            self.uses_empty_check = True
            w(f"empty_check(count - {ddof!r})  # NumPy warns on an empty slice: reruns with NumPy")

    def opaque_empty_count(self, w: _Writer) -> None:
        """A reduced axis of static size 0: the count (0) read from an empty operand's size at
        run time, so a finalize's 0/0 is the FPU's NaN, as NumPy's (x86: sign bit set); LLVM
        folds a literal 0.0/0 (or one it can bound to 0) to +nan."""
        if not any(_is_zero(self.k.shape[d]) for d in self.k.reduce_axes):
            return
        empty = [self.param[n] for n in self.k.inputs if n.meta is not None and not n.meta.scalar
                 and any(_is_zero(size) for size in n.meta.shape)]
        if empty:
            w(f"count = {empty[0]}.size  # 0, read at run time: 0/0 is NumPy's NaN")

    def flat_dispatch(self, w: _Writer, parallel: bool) -> None:
        """Contiguous operands: the flattened twin (NumPy's order over coalesced axes)."""
        if self.twin is None or self.twin_spec is None:
            return
        twin = self.twin.k
        call = twin.name + ("_parallel" if parallel and twin.parallel_dim is not None else "")
        arrays = [(self.param[n], tuple(n.meta.shape)) for n in self.k.inputs] \
            + [(self.out[n], tuple(n.meta.shape)) for n in self.buffers]
        dispatch_lines(self.twin_spec, self.ndim, arrays, call, bool(self.returns), w, w.open,
                       w.close)

    def finish_entry(self, w: _Writer) -> None:
        if self.returns:
            w("return " + ", ".join(self.local[n] for n in self.returns))

    # pointwise and columns kernels: one loop nest in the entry itself

    def loop_entry(self, name: str, parallel: bool) -> str:
        if parallel and self.spans_pointwise():
            return self.span_function(f"{name}_span") + "\n\n" + self.span_entry(name)
        if parallel and self.column_blocks():
            return self.column_blocks_entry(name)
        if parallel and self.k.style == "columns" and 0 in self.k.reduce_axes:
            parallel = False  # a columns kernel that returns values: its twin runs serially
        self.parallel = parallel
        w = _Writer()
        self.prelude(w)
        if self.k.style == "pointwise":
            prange = self.k.parallel_dim if parallel else None
            self.fast_keys = self.fast_variants()
            self.unit_test = unit_stride_test(self.k, {**self.param, **self.out})
            self.nest(w, list(range(self.ndim)), lambda: self.pointwise_element(w), 1,
                      prange=prange)
            self.unit_test = None
        else:
            self.columns_body(w)
        self.finish_entry(w)
        return self.function(name, self.params(), w, parallel)

    def spans_pointwise(self) -> bool:
        """The parallel twin of a pointwise kernel with fast sin/cos blocks runs its serial
        span function on ``CHUNKS`` spans of the parallel dim: numba's parfor passes then see
        one call, not the (large) loop body, which compiled 2-3x slower as a parfor. Not for
        other kernels: a plain ``range(lo, hi)`` loop keeps its negative-index checks (numba
        adds no ``nsw``), which stopped LLVM vectorizing an axpy chain (3.5x slower)."""
        k = self.k
        return k.parallel_dim is not None and k.shape[k.parallel_dim] != 1 \
            and bool(self.fast_variants())

    def span_function(self, name: str) -> str:
        """The serial loop nest over elements ``lo:hi`` of the parallel dim."""
        d = self.k.parallel_dim
        lo, hi = self.names("span_lo"), self.names("span_hi")
        self.parallel = False
        w = _Writer()
        self.prelude(w)
        self.fast_keys = self.fast_variants()
        self.unit_test = unit_stride_test(self.k, {**self.param, **self.out})
        self.nest(w, list(range(self.ndim)), lambda: self.pointwise_element(w), 1,
                  ranges={d: (lo, hi)})
        self.unit_test = None
        return self.function(name, self.params() + [lo, hi], w)

    def span_entry(self, name: str) -> str:
        """``prange`` over spans of the parallel dim, each a whole number of ``FAST_BLOCK``
        elements (the last one ends at the dim's end), each run by the span function."""
        d = self.k.parallel_dim
        blocks, chunks, c = self.names("span_blocks"), "chunks", "c"  # (reserved names)
        w = _Writer()
        self.prelude(w)
        w(f"{blocks} = (n{d} + {FAST_BLOCK - 1}) // {FAST_BLOCK}")
        w(f"{chunks} = min({blocks}, {CHUNKS})")
        w.open(f"for {c} in numba.prange({chunks}):")
        bounds = [f"{c} * {blocks} // {chunks} * {FAST_BLOCK}",
                  f"min(n{d}, ({c} + 1) * {blocks} // {chunks} * {FAST_BLOCK})"]
        w(f"{name}_span({', '.join(self.params() + bounds)})")
        w.close()
        return self.function(name, self.params(), w, True)

    def pointwise_element(self, w: _Writer) -> None:
        if self.k.masked is not None:
            self.masked_element(w)
            return
        for node in self.k.nodes:
            self.compute(w, node)
        for node in self.buffers:
            self.store(w, node)

    # masked stores (``masked.py``): the members run, and dst is written, where the mask holds

    def full_index(self) -> str:
        return self.index([self.var(d) for d in range(self.ndim)])

    def masked_functions(self) -> list[str]:
        """A masked store's loops (``<name>_loop``, serial and prange) and its entry points, which
        hand the loop copies of the operands that share memory with dst at run time."""
        k = self.k
        risky = [self.param[n] for n in snapshots(k.inputs, k.masked.dst, self.plan.roots)]
        dst = self.param[k.masked.dst]
        sources = [OVERLAP_SOURCE.strip("\n") + "\n"] if risky else []
        variants = [(k.name, False)]
        if k.parallel_dim is not None:
            variants.append((f"{k.name}_parallel", True))
        for name, parallel in variants:
            loop = f"{name}_loop"
            sources.append(self.loop_entry(loop, parallel))
            w = _Writer()
            args = self.params()
            if risky:
                w.open("if " + " or ".join(f"_ac_may_share_memory({r}, {dst})" for r in risky) + ":")
                w(f"{loop}({', '.join(f'{a}.copy()' if a in risky else a for a in args)})")
                w("return")
                w.close()
            w(f"{loop}({', '.join(args)})")
            sources.append(self.function(name, args, w))
        return sources

    def masked_element(self, w: _Writer) -> None:
        masked = self.k.masked
        index = self.full_index()
        w.open(f"if {self.param[masked.mask]}[{index}]:")
        for node in self.k.nodes:
            self.compute(w, node)
        value = self.operand(masked.value, np.dtype(masked.dst.meta.dtype), self.ndim)
        w(f"{self.param[masked.dst]}[{index}] = {value}", masked.store.origin)
        w.close()

    # rows kernels with outer axes: a row function, called by serial and parallel loops

    def row_args(self, long: bool = False) -> list[str]:
        outer = [f"i{d}" for d in range(self.k.outer) if self.k.shape[d] != 1]
        scratch = [n for n in self.scratch if long or n in self.pairwise_scratch]
        return self.params() + self.context() + list(self.temp.values()) + scratch + outer

    def row_modes(self) -> list[str]:
        """The row functions a rows kernel needs: "short" (scalar accumulators) and "long"
        (vector lanes), or only the one a static row length selects (half the code to compile)."""
        if not self.vector_rows():
            return ["short"]
        last = self.k.shape[-1]
        if isinstance(last, (int, np.integer)):
            return ["long"] if last >= 2 * VECTOR_LANES else ["short"]
        return ["short", "long"]

    def vector_rows(self) -> bool:
        """Whether some sweep of this rows kernel accumulates in vector lanes (on long rows)."""
        return any(self.lanes_for(sweep) == VECTOR_LANES for sweep in self.k.sweeps)

    def row_function(self, mode: str = "short") -> str:
        """Everything one outer index needs: its sweeps and its per-row values (row temporaries
        and lane arrays are its parameters: allocated once per call, or per slice of rows).
        ``mode``: "long" rows accumulate in vector lanes (``<name>_row_long``), "short" ones
        with scalar accumulators (``<name>_row``); the entry picks one per call."""
        w = _Writer()
        self.parallel = False
        self.scratch_param = mode == "long"
        self.row_scratch = True
        self.row_mode = mode
        self.outer_nodes(w, self.k.prologue)
        for sweep in self.k.sweeps:
            self.serial_sweep(w, sweep)
            self.finish_sweep(w, sweep)
            self.outer_nodes(w, sweep.after)
        self.row_mode = None
        self.row_scratch = False
        self.row_bodies[mode] = list(w.lines)
        suffix = "_row_long" if mode == "long" else "_row"
        return self.function(f"{self.k.name}{suffix}", self.row_args(mode == "long"), w)

    def temp_allocations(self, w: _Writer) -> None:
        inner = [self.bound(d) for d in range(self.k.outer, self.ndim)]
        for node, name in self.temp.items():
            w(f"{name} = np.empty(({', '.join(inner)},), {type_name(node.meta.dtype)})")
        for name, (size, dtype) in self.scratch.items():
            w(f"{name} = np.{'zeros' if name in self.zeroed else 'empty'}({size}, {dtype})")

    def row_entry(self, name: str, parallel: bool) -> str:
        k = self.k
        self.parallel = parallel
        w = _Writer()
        self.flat_dispatch(w, parallel)
        self.prelude(w)
        if not parallel:  # one row temporary for all rows; per slice of rows in parallel
            self.temp_allocations(w)
        modes = self.row_modes()
        if len(modes) == 1:
            self.row_loops(w, parallel, modes[0] == "long")
            return self.function(name, self.params(), w, parallel)
        last = self.ndim - 1
        w.open(f"if n{last} >= {2 * VECTOR_LANES}:  # long rows: vector lanes")
        self.row_loops(w, parallel, True)
        w.close()
        w.open("else:")
        self.row_loops(w, parallel, False)
        w.close()
        return self.function(name, self.params(), w, parallel)

    def row_loops(self, w: _Writer, parallel: bool, long: bool) -> None:
        """The loops over the outer axes around one row function call."""
        k = self.k
        opened = 0
        for d in range(k.outer):
            if k.shape[d] == 1:
                continue
            if parallel and d == k.parallel_dim:
                w(f"chunks = max(1, min(n{d}, {CHUNKS}))")
                w.open("for c in numba.prange(chunks):")
                self.temp_allocations(w)
                w.open(f"for i{d} in range(c * n{d} // chunks, (c + 1) * n{d} // chunks):")
                opened += 2
                continue
            w.open(f"for i{d} in range(n{d}):")
            opened += 1
        body = None if parallel or len(self.row_modes()) > 1 else self.row_body(long)
        if body is None:
            w(f"{k.name}_row{'_long' if long else ''}({', '.join(self.row_args(long))})")
        else:  # the row function's own lines: one function to compile, not two
            w(f"# {k.name}_row{'_long' if long else ''}, inlined")
            w.lines += ["    " * (w.depth - 1) + line for line in body]
        w.close(opened)

    def row_body(self, long: bool) -> list[str] | None:
        """The row function's lines, to paste into the serial entry's loop over rows (its
        parameters are the entry's names): numba then compiles one function, not the row
        function and again its code linked into the entry (numba optimizes linked code anew
        in every caller). None when pasting could change what it does: a ``return``, or an
        assignment to one of its parameters (a call starts every row afresh)."""
        lines = self.row_bodies.get("long" if long else "short")
        if lines is None or any("\n" in line for line in lines):
            return None
        params = set(self.row_args(long))
        row = parse_python("def row():\n" + "\n".join(lines)).body[0]
        for node in (n for statement in row.body for n in ast.walk(statement)):
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global,
                                 ast.Nonlocal, ast.FunctionDef, ast.Lambda)):
                return None
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) \
                    and node.id in params:
                return None
        return lines

    # whole-array reductions (no outer axes): one function per sweep over a slice of axis 0

    def sweep_results(self, sweep: Sweep) -> list[str]:
        names: list[str] = []
        for node in sweep.reductions:
            rule = self.rule(node)
            names.append(self.acc[node])
            if rule.nan_flag:
                names.append(f"nan_{self.acc[node]}")
            if rule.arg:
                names.append(f"idx_{self.acc[node]}")
        return names

    def sweep_functions(self) -> list[str]:
        """Sweeps of a whole-array kernel; each returns its (lane-merged) accumulators."""
        sources = []
        self.parallel = False
        known = self.outer_names_before()
        for sweep in self.k.sweeps:
            w = _Writer()
            self.laned_sweep(w, sweep, list(range(self.ndim)), {0: ("lo", "hi")})
            results = self.sweep_results(sweep)
            if results:
                w("return " + ", ".join(results))
            args = self.params() + self.context() + list(self.temp.values()) + known[sweep.index]
            sources.append(self.function(self.sweep_name(sweep), args + ["lo", "hi"], w))
        return sources

    def sweep_name(self, sweep: Sweep) -> str:
        return f"{self.k.name}_sweep{sweep.index}"

    def outer_names_before(self) -> dict[int, list[str]]:
        """Per sweep, the per-kernel values already known when it starts."""
        known: dict[int, list[str]] = {}
        names = [self.local[n] for n in self.k.prologue if not isinstance(self.k.rules[n],
                                                                          ReductionRule)]
        for sweep in self.k.sweeps:
            known[sweep.index] = list(names)
            for node in sweep.reductions:
                rule = self.rule(node)
                if rule.two_pass and sweep.phase[node] == 1:
                    names.append(self.acc_name(node, "mean"))
                else:
                    names.append(self.local[node])
            names += [self.local[n] for n in sweep.after
                      if not isinstance(self.k.rules[n], ReductionRule)]
        return known

    def whole_entry(self, name: str, parallel: bool) -> str:
        k = self.k
        self.parallel = parallel
        known = self.outer_names_before()
        w = _Writer()
        self.flat_dispatch(w, parallel)
        self.prelude(w)
        self.temp_allocations(w)
        self.outer_nodes(w, k.prologue)
        for sweep in k.sweeps:
            args = self.params() + self.context() + list(self.temp.values()) + known[sweep.index]
            results = self.sweep_results(sweep)
            target = f"{', '.join(results)} = " if results else ""
            mergeable = all(self.rule(n).merge for n in sweep.reductions)
            if parallel and mergeable and k.parallel_dim == 0:
                self.chunked_call(w, sweep, args)
            else:
                w(f"{target}{self.sweep_name(sweep)}({', '.join(args + ['0', self.bound(0)])})")
            self.finish_sweep(w, sweep)
            self.outer_nodes(w, sweep.after)
        self.finish_entry(w)
        return self.function(name, self.params(), w, parallel)

    def chunked_call(self, w: _Writer, sweep: Sweep, args: list[str]) -> None:
        """Run a sweep over slices of axis 0 in parallel; merge the slices' results in order."""
        reds = sweep.reductions
        summed = self.pairwise_nodes(sweep)
        bounds = ("c * n0 // chunks", "(c + 1) * n0 // chunks")
        if summed:  # subtrees of NumPy's sum tree, combined as the tree does after the loop
            starts, sizes = self.pw["starts"], self.pw["sizes"]
            w(f"{starts} = np.empty({CHUNKS}, np.int64)")
            w(f"{sizes} = np.empty({CHUNKS}, np.int64)")
            w(f"chunks = pairwise_level(n0, {starts}, {sizes}, {PAIRWISE_SMALLEST})")
            bounds = (f"{starts}[c]", f"{starts}[c] + {sizes}[c]")
        else:
            w(f"chunks = max(1, min(n0, {CHUNKS}))")
        for node in reds:
            rule = self.rule(node)
            w(f"{self.acc_name(node, 'part')} = np.empty(chunks, {type_name(rule.acc_dtype)})")
            if rule.nan_flag:
                w(f"{self.acc_name(node, 'partnan')} = np.empty(chunks, np.bool_)")
        w.open("for c in numba.prange(chunks):")
        call = f"{self.sweep_name(sweep)}({', '.join(args + list(bounds))})"
        if not reds:
            w(call)
        else:
            local = [f"{r}_c" for r in self.sweep_results(sweep)]
            w(f"{', '.join(local)} = {call}")
            for node in reds:
                w(f"{self.acc_name(node, 'part')}[c] = {self.acc[node]}_c")
                if self.rule(node).nan_flag:
                    w(f"{self.acc_name(node, 'partnan')}[c] = nan_{self.acc[node]}_c")
        w.close()
        if not reds:
            return
        if summed:
            w("step = 1")
            w.open("while step < chunks:")
            w.open("for c in range(0, chunks, 2 * step):")
            for node in summed:
                part = self.acc_name(node, "part")
                w(f"{part}[c] = {part}[c] + {part}[c + step]")
            w.close()
            w("step *= 2")
            w.close()
        for node in reds:
            w(f"{self.acc[node]} = {self.acc_name(node, 'part')}[0]")
            if self.rule(node).nan_flag:
                w(f"nan_{self.acc[node]} = {self.acc_name(node, 'partnan')}[0]")
        if len(summed) == len(reds):
            return
        w.open("for c in range(1, chunks):")
        for node in reds:
            if node in summed:
                continue
            rule = self.rule(node)
            part = f"{self.acc_name(node, 'part')}[c]"
            w(f"{self.acc[node]} = {self.merged(rule, self.acc[node], part)}")
            if rule.nan_flag:
                flag = f"nan_{self.acc[node]}"
                w(f"{flag} = {flag} | {self.acc_name(node, 'partnan')}[c]")
        w.close()

    def serial_sweep(self, w: _Writer, sweep: Sweep) -> None:
        self.laned_sweep(w, sweep, list(range(self.k.outer, self.ndim)))

    def laned_sweep(self, w: _Writer, sweep: Sweep, dims: list[int],
                    ranges: dict[int, tuple[str, str]] | None = None) -> None:
        """A sweep's accumulation: in vector lanes when its innermost extent is long (at run
        time: set-up and merge of the lanes cost more than they save on short rows), else with
        one accumulator, or unrolled scalar lanes (cheap members, mergeable reductions)."""
        summed = self.pairwise_nodes(sweep)
        if summed and self.unrolled_pairwise(sweep):
            self.short_pairwise_sweep(w, sweep, dims, ranges or {})
            return
        if summed:
            self.pairwise_sweep(w, sweep, dims, ranges or {}, summed)
            return
        lanes = self.lanes_for(sweep)
        if lanes == VECTOR_LANES and self.row_mode == "short":
            lanes = self.short_lanes(sweep)
        opened = lanes == VECTOR_LANES and self.row_mode is None  # else the entry decided
        if lanes == VECTOR_LANES and not opened:
            self.init_lanes(w, sweep, lanes)
            self.nest(w, dims, lambda: self.sweep_body(w, sweep), lanes,
                      self.register_lanes(w, sweep, dims, ranges))
            self.merge_lanes(w, sweep, lanes)
            return
        if opened:
            d = dims[-1]
            lo, hi = (ranges or {}).get(d, ("0", f"n{d}"))
            extent = hi if lo == "0" else f"{hi} - {lo}"
            w.open(f"if {extent} >= {2 * VECTOR_LANES}:  # long rows: vector lanes")
            self.init_lanes(w, sweep, lanes)
            self.nest(w, dims, lambda: self.sweep_body(w, sweep), lanes,
                      self.register_lanes(w, sweep, dims, ranges))
            self.merge_lanes(w, sweep, lanes)
            w.close()
            w.open("else:")
            lanes = self.short_lanes(sweep)
        self.init_lanes(w, sweep, lanes)
        self.nest(w, dims, lambda: self.sweep_body(w, sweep), lanes, ranges)
        self.merge_lanes(w, sweep, lanes)
        if opened:
            w.close()

    def register_lanes(self, w: _Writer, sweep: Sweep, dims: list[int],
                       ranges: dict[int, tuple[str, str]] | None) -> dict[int, tuple[str, str]]:
        """A sweep made only of float max/min of input rows: their whole blocks of lanes run
        in registers (``lane_loops.py``, same lanes and results) when the rows have unit
        stride; returns the ranges the lane loop still covers (the tail, or all of it)."""
        ranges = dict(ranges or {})
        if len(dims) != 1 or sweep.compute or sweep.load or sweep.store or sweep.stash:
            return ranges
        rows = {}
        for node in sweep.reductions:
            rule = self.rule(node)
            intrinsic = LANE_LOOPS.get(rule.combine)
            if intrinsic is None or rule.arg or not rule.nan_flag or rule.acc_dtype not in _FLOATS \
                    or rule.input_dtype != rule.acc_dtype:
                return ranges
            rows[node] = (intrinsic, self.direct_row(node, sweep))
            if rows[node][1] is None:
                return ranges
        d = dims[0]
        lo, hi = ranges.get(d, ("0", f"n{d}"))
        start = self.names(f"start{d}")
        params = sorted({self.param[node.args[0]] for node in rows})
        test = " and ".join(f"{p}.strides[{d}] == {p}.itemsize" for p in params)
        self.uses_lane_loops = True
        w.open(f"if {test}:  # unit stride: lanes in registers (lane_loops.py)")
        for node, (intrinsic, row) in rows.items():
            acc = self.acc[node]
            w(f"{start} = {intrinsic}({row}, {lo}, {hi}, {acc}_v, nan_{acc}_v)")
        w.close()
        w.open("else:")
        w(f"{start} = {lo}")
        w.close()
        ranges[d] = (start, hi)
        return ranges

    # NumPy's pairwise float sums (``pairwise.py``)

    def pairwise_nodes(self, sweep: Sweep) -> list[Node]:
        """This sweep's reductions summed in NumPy's pairwise order (static rows under 8 add
        in order with one accumulator, as NumPy's)."""
        last = self.k.shape[-1]
        if not pairwise_kernel(self.k) or (isinstance(last, (int, np.integer))
                                           and last < SHORT_ROW):
            return []
        return [n for n in sweep.reductions if n in self.exact]

    def unrolled_pairwise(self, sweep: Sweep) -> bool:
        """A static row of 8 to 128 elements whose other reductions merge: NumPy's eight
        accumulators are unrolled scalar lanes (no buffer, no call)."""
        last = self.k.shape[-1]
        return isinstance(last, (int, np.integer)) and SHORT_ROW <= last <= PAIRWISE_LEAF \
            and all(self.rule(n).merge and not self.rule(n).arg for n in sweep.reductions) \
            and not any(getattr(self.rule(n), "helpers", ()) for n in sweep.compute)

    # (a summand calling a math function (softmax's ``exp``) would be inlined once per lane
    # and the tail: nine copies, seconds of numba compile time; such a row goes through a
    # buffer, one loop body, its sum the same leaf: ``buffered_sweep``)

    def short_pairwise_sweep(self, w: _Writer, sweep: Sweep, dims: list[int],
                             ranges: dict[int, tuple[str, str]]) -> None:
        """NumPy's block of <= 128: eight lanes over the full blocks of 8, combined as
        ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then the tail in order."""
        d = dims[-1]
        lo, hi = ranges.get(d, ("0", f"n{d}"))
        lanes = PAIRWISE_LANES
        self.init_lanes(w, sweep, lanes)
        w(f"end{d} = {hi} - {hi} % {lanes}" if lo == "0" else
          f"end{d} = {hi} - ({hi} - {lo}) % {lanes}")
        w.open(f"for i{d} in range({lo}, end{d}, {lanes}):  # NumPy's eight accumulators")
        for lane in self.lane_list(lanes, d):
            with self.in_lane(lane):
                self.sweep_body(w, sweep)
        w.close()
        self.merge_lanes(w, sweep, lanes)
        w.open(f"for i{d} in range(end{d}, {hi}):  # then the tail, in order")
        self.sweep_body(w, sweep)
        w.close()

    def pw_name(self, node: Node, kind: str) -> str:
        """A pairwise sum's summand buffer (``buf``) or partial sums (``vals``)."""
        return f"pw{kind}_{self.acc[node]}"

    def pw_array(self, w: _Writer, name: str, size: int, dtype: str, zeros: bool = False
                 ) -> None:
        """Scratch of a pairwise sweep: a row function's parameter, else allocated here
        (``zeros``: a plan, empty at first)."""
        if self.row_scratch:
            self.scratch[name] = (size, dtype)
            self.pairwise_scratch.add(name)
            if zeros:
                self.zeroed.add(name)
        else:
            w(f"{name} = np.{'zeros' if zeros else 'empty'}({size}, {dtype})")

    def direct_row(self, node: Node, sweep: Sweep) -> str | None:
        """The row a pairwise sum adds as it is (an input's row, no cast, no broadcast along
        it): summed in place when its stride is one element, without a buffer."""
        rule = self.rule(node)
        source = node.args[0]
        if self.k.masked is not None or (rule.two_pass and sweep.phase[node] != 1) \
                or not isinstance(source, Node) or source in self.k.rules \
                or source not in self.param or source in self.plan.weak:
            return None
        shape = self.shape_of(source)
        if len(shape) != self.ndim or shape[-1] == 1 or np.dtype(source.meta.dtype) != \
                rule.acc_dtype:
            return None
        index = ["0" if shape[d] == 1 else self.var(d) for d in range(self.ndim - 1)]
        return f"{self.param[source]}[{', '.join(index)}]" if index else self.param[source]

    def pairwise_sweep(self, w: _Writer, sweep: Sweep, dims: list[int],
                       ranges: dict[int, tuple[str, str]], summed: list[Node]) -> None:
        """Float sums in NumPy's pairwise order: an input row of unit stride is added where it
        is (``pairwise_sum``, checked at run time), any other through buffers
        (``buffered_sweep``)."""
        self.uses_pairwise = True
        rows = {node: self.direct_row(node, sweep) for node in summed}
        direct = [node for node in summed if rows[node] is not None]
        if not direct:
            self.buffered_sweep(w, sweep, dims, ranges, summed)
            return
        d = dims[-1]
        lo, hi = ranges.get(d, ("0", f"n{d}"))
        extent = hi if lo == "0" else f"{hi} - {lo}"
        sources = []
        for node in direct:
            param = self.param[node.args[0]]
            if param not in sources:
                sources.append(param)
        axis = self.ndim - 1
        test = " and ".join(f"{p}.strides[{axis}] == {p}.itemsize" for p in sources)
        self.pw_array(w, self.pw["subtree"], PAIRWISE_PLAN, "np.int64", zeros=True)
        for node in direct:
            self.pw_array(w, self.pw_name(node, "vals"), PAIRWISE_VALUES,
                          type_name(self.rule(node).acc_dtype))
        w.open(f"if {test}:  # rows of unit stride: added where they are")
        static = self.static_row()
        for node in direct:
            self.init_acc(w, node, sweep.phase[node])
            acc = self.acc_name(node)
            if static is not None:
                self.written_tree(w, node, rows[node], static)
                continue
            w(f"{acc} = {acc} + pairwise_sum({rows[node]}, {lo}, {extent}, {self.pw['subtree']}, "
              f"{self.pw_name(node, 'vals')}, 0)")
        rest = dataclasses.replace(sweep, reductions=[n for n in sweep.reductions
                                                      if n not in direct])
        if rest.reductions or rest.compute or rest.load or rest.store or rest.stash:
            buffered = [n for n in summed if n not in direct]
            if buffered:
                self.buffered_sweep(w, rest, dims, ranges, buffered)
            else:
                lanes = self.other_lanes(rest)
                self.init_lanes(w, rest, lanes)
                self.nest(w, dims, lambda: self.sweep_body(w, rest), lanes, ranges)
                self.merge_lanes(w, rest, lanes)
        w.close()
        w.open("else:")
        self.buffered_sweep(w, sweep, dims, ranges, summed)
        w.close()

    def static_row(self) -> int | None:
        """A rows kernel's static row length whose sum tree is written out, else None."""
        last = self.k.shape[-1]
        if self.k.outer >= 1 and isinstance(last, (int, np.integer)) \
                and PAIRWISE_LEAF < last <= PAIRWISE_STATIC:
            return int(last)
        return None

    def written_tree(self, w: _Writer, node: Node, row: str, n: int) -> None:
        """``acc += `` NumPy's pairwise sum of ``row[0:n]``, the tree written out: the leaves
        four at a time (``block_sums4``), the last one's tail, then the tree's additions."""
        leaves, tree = pairwise_tree(n)
        base = self.names(f"pwleaf_{self.acc[node]}")
        names = [f"{base}_{k}" for k in range(len(leaves))]
        full = len(leaves) - len(leaves) % 4
        for g in range(0, full, 4):
            args = ", ".join(f"{start}, {size // 8}" for start, size in leaves[g:g + 4])
            w(f"{', '.join(names[g:g + 4])} = block_sums4({row}, {args})")
        for k in range(full, len(leaves)):
            start, size = leaves[k]
            w(f"{names[k]} = block_sum8({row}, {start}, {size // 8})")
        start, size = leaves[-1]
        for i in range(start + size - size % 8, start + size):  # the tail, in order
            w(f"{names[-1]} = {names[-1]} + {row}[{i}]")

        def spelled(part: Any) -> str:
            if isinstance(part, int):
                return names[part]
            return f"({spelled(part[0])} + {spelled(part[1])})"
        acc = self.acc_name(node)
        w(f"{acc} = {acc} + {spelled(tree)}  # NumPy's pairwise tree of {n}")

    def other_lanes(self, sweep: Sweep) -> int:
        """Lanes of a pairwise sweep's other reductions: vector lanes where they would be."""
        if sweep.reductions and self.row_mode != "short" and \
                self.lanes_for(sweep) == VECTOR_LANES:
            return VECTOR_LANES
        return 1

    def buffered_sweep(self, w: _Writer, sweep: Sweep, dims: list[int],
                       ranges: dict[int, tuple[str, str]], summed: list[Node]) -> None:
        """A sweep whose float sums follow NumPy's pairwise tree over the last axis: the tree is
        walked down to nodes of at most ``PAIRWISE_CHUNK`` elements, left to right; each node's
        summands are computed into a buffer (a plain loop, vectorized) and added by
        ``pairwise_sum``; partial sums combine as the tree does. Its other reductions accumulate
        in the same loop, in vector lanes where they would anyway."""
        d = dims[-1]
        lo, hi = ranges.get(d, ("0", f"n{d}"))
        others = dataclasses.replace(sweep, reductions=[n for n in sweep.reductions
                                                        if n not in summed])
        lanes = self.other_lanes(others)
        pw = self.pw
        top, start, size, half, count, stack = (pw[k] for k in ("top", "start", "size", "half",
                                                                "count", "stack"))
        static = self.static_row()
        last = self.k.shape[-1]
        if static is None and self.k.outer >= 1 and isinstance(last, (int, np.integer)) \
                and SHORT_ROW <= last <= PAIRWISE_LEAF:  # a leaf: block_sum8 and its tail
            static = int(last)
        if static is not None and static <= PAIRWISE_CHUNK:  # one buffer, the tree written out
            for node in summed:
                dtype = type_name(self.rule(node).acc_dtype)
                self.pw_array(w, self.pw_name(node, "buf"), PAIRWISE_CHUNK, dtype)
                self.init_acc(w, node, sweep.phase[node])
            self.init_lanes(w, others, lanes)
            w(f"{start} = 0")
            self.buffered = set(summed)
            self.nest(w, dims, lambda: self.sweep_body(w, sweep), lanes, ranges)
            self.buffered = set()
            for node in summed:
                self.written_tree(w, node, self.pw_name(node, "buf"), static)
            self.merge_lanes(w, others, lanes)
            return
        short = len(dims) == 1 and lanes == 1 and not self.row_scratch
        if short:  # a short run (a CSR row): no scratch to allocate, NumPy's leaf order
            w.open(f"if {hi if lo == '0' else f'{hi} - {lo}'} < {SHORT_ROW}:  # NumPy adds fewer "
                   "than 8 summands one by one from 0")
            for node in summed:
                self.init_acc(w, node, sweep.phase[node])
            self.init_lanes(w, others, lanes)
            self.nest(w, dims, lambda: self.sweep_body(w, sweep), lanes, ranges)
            self.merge_lanes(w, others, lanes)
            w.close()
            w.open("else:")
        self.pw_array(w, stack, PAIRWISE_STACK, "np.int64")
        self.pw_array(w, pw["subtree"], PAIRWISE_PLAN, "np.int64", zeros=True)
        for node in summed:
            dtype = type_name(self.rule(node).acc_dtype)
            self.pw_array(w, self.pw_name(node, "buf"), PAIRWISE_CHUNK, dtype)
            self.pw_array(w, self.pw_name(node, "vals"), PAIRWISE_VALUES, dtype)
            self.init_acc(w, node, sweep.phase[node])
        self.init_lanes(w, others, lanes)
        w(f"{top} = 0  # NumPy's pairwise sum tree, nodes of <= {PAIRWISE_CHUNK} left to right")
        w(f"{stack}[0] = {lo}")
        w(f"{stack}[1] = {hi if lo == '0' else f'{hi} - {lo}'}")
        w(f"{count} = 0")
        w.open(f"while {top} >= 0:")
        w(f"{start} = {stack}[2 * {top}]")
        w(f"{size} = {stack}[2 * {top} + 1]")
        w(f"{top} -= 1")
        w.open(f"if {size} < 0:  # both halves summed: their sum")
        w(f"{count} -= 1")
        for node in summed:
            vals = self.pw_name(node, "vals")
            w(f"{vals}[{count} - 1] = {vals}[{count} - 1] + {vals}[{count}]")
        w.close()
        w.open(f"elif {size} > {PAIRWISE_CHUNK}:  # the left half, the right half, their sum")
        w(f"{half} = {size} // 2 - {size} // 2 % 8")
        for slot, value in enumerate(("0", "-1", f"{start} + {half}", f"{size} - {half}",
                                      start, half)):
            w(f"{stack}[2 * {top} + {slot + 2}] = {value}")
        w(f"{top} += 3")
        w.close()
        w.open("else:")
        self.buffered = set(summed)
        self.nest(w, dims, lambda: self.sweep_body(w, sweep), lanes,
                  {**ranges, d: (start, f"{start} + {size}")})
        self.buffered = set()
        for node in summed:
            vals = self.pw_name(node, "vals")
            w(f"{vals}[{count}] = pairwise_sum({self.pw_name(node, 'buf')}, 0, {size}, "
              f"{pw['subtree']}, {vals}, {count} + 1)")
        w(f"{count} += 1")
        w.close(2)
        for node in summed:
            acc = self.acc_name(node)
            w(f"{acc} = {acc} + {self.pw_name(node, 'vals')}[0]")
        self.merge_lanes(w, others, lanes)
        if short:
            w.close()

    def short_lanes(self, sweep: Sweep) -> int:
        """Scalar lanes for short rows: cheap members, reductions that merge."""
        if not all(cheap(n) for n in sweep.compute):
            return 1
        return LANES if all(self.rule(n).merge for n in sweep.reductions) else 1

    # columns kernels: array accumulators over the kept axes, one C-order sweep

    def kept_index(self) -> str:
        return self.index([self.var(d) for d in self.k.kept_axes])

    def kept_shape(self) -> str:
        return f"({', '.join(self.bound(d) for d in self.k.kept_axes)},)"

    def columns_body(self, w: _Writer) -> None:
        self.column_accumulators(w)
        self.column_sweeps(w, {}, self.k.parallel_dim if self.parallel else None)

    def column_accumulators(self, w: _Writer) -> list[str]:
        """Allocates the array accumulators over the kept axes; returns their names."""
        names = []
        for node in self.reductions:
            rule = self.rule(node)
            arrays = [(self.acc[node], type_name(rule.acc_dtype))]
            if rule.arg:
                arrays.append((self.acc_name(node, "idx"), "np.int64"))
            if rule.nan_flag:
                arrays.append((self.acc_name(node, "nan"), "np.bool_"))
            if rule.two_pass:
                mean = type_name(rule.acc_dtype) if node in self.exact else "np.float64"
                arrays.append((self.acc_name(node, "mean"), mean))
            for name, dtype in arrays:
                w(f"{name} = np.empty({self.kept_shape()}, {dtype})")
                names.append(name)
        return names

    def column_sweeps(self, w: _Writer, ranges: dict[int, tuple[str, str]],
                      prange: int | None) -> None:
        k = self.k
        kept = list(k.kept_axes)
        at = f"[{self.kept_index()}]"

        def kept_loop(body: Callable[[], None]) -> None:
            self.nest(w, kept, body, 1, ranges, prange=prange)

        for sweep in k.sweeps:
            def start(sweep: Sweep = sweep) -> None:
                for node in sweep.reductions:
                    self.init_acc(w, node, sweep.phase[node], at)

            def finish(sweep: Sweep = sweep) -> None:
                self.finish_sweep(w, sweep, at)
                for node in sweep.reductions:
                    last = not (self.rule(node).two_pass and sweep.phase[node] == 1)
                    if last and node in k.outputs:
                        self.store(w, node)

            kept_loop(start)
            self.nest(w, list(range(self.ndim)), lambda: self.sweep_body(w, sweep, at), 1,
                      ranges, prange=prange)
            kept_loop(finish)

    def column_blocks(self) -> bool:
        """A columns kernel reducing its first axis, parallel over blocks of its last (kept)
        axis (``plan._column_blocks_dim``)."""
        k = self.k
        return k.style == "columns" and k.parallel_dim is not None and 0 in k.reduce_axes \
            and not self.returns

    def column_blocks_entry(self, name: str) -> str:
        """The parallel twin of a columns kernel that reduces its first axis: ``prange`` over
        blocks of ``COLUMN_BLOCK`` indices of the kept dim, each block running every sweep over
        its own columns in a serial function (``<name>_columns``: numba's parfor body
        vectorized worse), rows in order as the serial kernel: the bits do not depend on the
        blocks."""
        d = self.k.parallel_dim
        lo, hi = self.names("column_lo"), self.names("column_hi")
        self.parallel = False
        w = _Writer()
        self.prelude(w)
        self.nonnegative.add(d)
        self.column_sweeps(w, {d: (lo, hi)}, None)
        self.nonnegative.discard(d)
        w_entry = _Writer()
        self.prelude(w_entry)
        accs = self.column_accumulators(w_entry)
        args = self.params() + accs
        span = self.function(f"{name}_columns", args + [lo, hi], w)
        blocks, block = self.names("column_blocks"), self.names("column_block")
        w_entry(f"{blocks} = (n{d} + {COLUMN_BLOCK - 1}) // {COLUMN_BLOCK}")
        size = " * ".join(self.bound(e) for e in range(self.ndim))
        w_entry.open(f"if {blocks} < 2 or {size} < {COLUMN_PARALLEL_MIN}:  # threads cost more")
        w_entry(f"{name}_columns({', '.join(args + ['0', f'n{d}'])})")
        w_entry("return")
        w_entry.close()
        w_entry.open(f"for {block} in numba.prange({blocks}):")
        bounds = [f"{block} * {COLUMN_BLOCK}", f"min(({block} + 1) * {COLUMN_BLOCK}, n{d})"]
        w_entry(f"{name}_columns({', '.join(args + bounds)})")
        w_entry.close()
        return span + "\n\n" + self.function(name, self.params(), w_entry, True)


def pairwise_kernel(kernel: KernelPlan) -> bool:
    """Whether NumPy adds this kernel's float sums pairwise: rows reduced over the last axis
    alone (a contiguous row of each C-ordered input or temporary), or a whole 1-D array."""
    ndim = len(kernel.shape)
    return kernel.style == "rows" and ndim >= 1 and kernel.outer == ndim - 1 \
        and kernel.shape[-1] != 1


def exact_rules(kernel: KernelPlan, reductions: list[Node]) -> dict[Node, ReductionRule]:
    """The float sums of a kernel (sum, mean, var, std of float32/float64 into the same dtype)
    whose order is NumPy's: pairwise (``pairwise_kernel``) or element order (columns kernels:
    NumPy adds the rows of a C-ordered array one by one). They accumulate in the input's float,
    as NumPy does (float32 sums in float32). Other float sums keep 64 float64 lanes."""
    if not config.pairwise_sums or (kernel.style != "columns" and not pairwise_kernel(kernel)):
        return {}
    rules = {}
    for node in reductions:
        rule = kernel.rules[node]
        if rule.merge == "{a} + {b}" and rule.combine.startswith(_SUM_TERM) \
                and not (rule.arg or rule.nan_flag) and rule.input_dtype in _FLOATS \
                and rule.result_dtype == rule.input_dtype:
            rules[node] = dataclasses.replace(rule, acc_dtype=rule.input_dtype,
                                              init=constant(0, rule.input_dtype))
    return rules


def pairwise_tree(n: int) -> tuple[list[tuple[int, int]], Any]:
    """NumPy's pairwise recursion over ``n >= 8`` elements: its leaves (start, size) in order
    and its tree (a leaf's index, or a pair of subtrees)."""
    leaves: list[tuple[int, int]] = []

    def split(start: int, size: int) -> Any:
        if size <= PAIRWISE_LEAF:
            leaves.append((start, size))
            return len(leaves) - 1
        half = size // 2 - size // 2 % 8
        return (split(start, half), split(start + half, size - half))
    tree = split(0, n)
    return leaves, tree


def _vectorizable(rule: Any) -> bool:
    """A member whose scalar code LLVM vectorizes: a call of a ``vecmath`` function only."""
    return isinstance(rule, ScalarRule) and bool(rule.helpers) and all(
        key.partition(":")[0] == "vecmath" for key in rule.helpers)


def kernel_code(kernel: KernelPlan, plan: Plan, cache: bool, nested: bool = False,
                clears_fp: bool = False) -> KernelCode:
    """The source of a kernel module (helpers, body functions, entry points) and its calls;
    ``nested`` (see ``KernelEmitter``): the serial entry is also inlined into its numba caller
    (``inline="always"``: one loop nest there, which LLVM optimizes with the caller's arrays).
    ``clears_fp``: the wrapper tests the FP flags after the kernel; its entry points clear them
    first (``clear_flags_first``)."""
    emitter = KernelEmitter(kernel, plan, nested)
    twin = flat_twin(kernel)
    if twin is not None:  # several trailing axes summed: NumPy's order on contiguous operands
        emitter.twin = KernelEmitter(twin.kernel, plan, nested, twin.shapes)
        emitter.twin_spec = twin
    functions = emitter.functions()
    if twin is not None:
        emitter.uses_pairwise = True  # (flat_view)
        for key in emitter.twin.helpers:
            if key not in emitter.helpers:
                emitter.helpers.append(key)
    if nested:
        functions = inline_entry(functions, kernel.name)
    parallel_name = f"{kernel.name}_parallel" if kernel.parallel_dim is not None else None
    if clears_fp and not nested:
        functions = clear_flags_first(functions, [kernel.name, parallel_name])
    origins: list[str] = []
    for node in kernel.nodes:
        if node.origin and node.origin not in origins:
            origins.append(node.origin)
    entries = f"{kernel.name}" + (f" (serial) and {parallel_name} (prange)" if parallel_name
                                  else "")
    header = [f'"""{kernel.name}: {kernel.style} kernel over {_shape_text(kernel)}.',
              "",
              "Generated by astcompiler's numba backend. Nodes: "
              + ", ".join(n.name for n in kernel.nodes) + ".",
              *(["Source lines: " + ", ".join(origins) + "."] if origins else []),
              f"Entry points: {entries}.",
              '"""', "", "import numpy as np", "import numba", ""]
    if emitter.uses_pairwise:
        header.insert(-1, PAIRWISE_IMPORT)
    if emitter.uses_lane_loops or (emitter.twin is not None and emitter.twin.uses_lane_loops):
        header.insert(-1, lane_loops_import())
    if emitter.uses_zero_watch or (emitter.twin is not None and emitter.twin.uses_zero_watch):
        header.insert(-1, "from astcompiler.lower.numba.runtime import zero_watch")
    if emitter.uses_empty_check or (emitter.twin is not None and emitter.twin.uses_empty_check):
        header.insert(-1, "from astcompiler.lower.numba.runtime import empty_check")
    if clears_fp and not nested:
        header.insert(-1, "from astcompiler.lower.numba.runtime import fp_clear_flags")
    if any(raises_flags(key) for key in emitter.helpers):
        header.insert(-1, "from astcompiler.lower.numba.runtime import fp_divide_by_zero, fp_overflow")
    for line in helper_imports(emitter.helpers):
        header.insert(-1, line)
    for key in dict.fromkeys(emitter.fast_keys.values()):
        header.insert(-1, fast_import_line(key))
    helpers = [f"\n@numba.njit(cache={{cache}}, error_model=\"numpy\")\n{helper_source(key)}"
               for key in emitter.helpers if helper_source(key)]  # "": imported
    body = "\n".join(header) + "".join(helpers) + "\n\n" + "\n\n".join(functions)
    source = body.replace("{cache}", "True" if cache else "False")
    return KernelCode(kernel.name, source, parallel_name, list(kernel.inputs),
                      list(emitter.buffers), list(emitter.returns), kernel)


def inline_entry(functions: list[str], name: str) -> list[str]:
    """``functions`` with function ``name`` marked ``inline="always"``: numba inlines it into
    its numba callers (one loop nest there; and no second optimization of the code it links,
    which numba runs anew in every caller)."""
    head = f"def {name}("
    return [f.replace(")\n" + head, ', inline="always")\n' + head, 1)
            if f.startswith("@numba.njit(") else f for f in functions]


def clear_flags_first(functions: list[str], names: list[str | None]) -> list[str]:
    """``functions`` with the entry points ``names`` clearing the FP flags first: flags the
    caller's own scalar ops left (NumPy and Python floats leave them set) are not the kernel's,
    and would rerun the call with NumPy (the wrapper tests the flags after the kernel)."""
    heads = [f"def {name}(" for name in names if name]
    out = []
    for source in functions:
        lines = source.split("\n")
        at = next((i for i, line in enumerate(lines) if any(line.startswith(h) for h in heads)),
                  None)
        if at is not None:
            lines.insert(at + 1, "    fp_clear_flags()  # the caller's stale FP flags: not ours")
        out.append("\n".join(lines))
    return out


_PROBES: dict[tuple, bool] = {}


def rule_compiles(node: Node, rule: Any) -> bool:
    """Whether numba compiles an op's own (unverified) scalar template for these operand dtypes.

    Rules written here are known to compile; a template an op declares elsewhere is compiled
    once on scalars of its operand dtypes (memoized) before any kernel relies on it.
    """
    if not isinstance(rule, ScalarRule) or rule.checked:
        return True
    picks = rule.operands if rule.operands is not None else range(len(node.args))
    operands = []
    for i in picks:
        value = node.args[i]
        if isinstance(value, Node):
            operands.append(np.dtype(value.meta.dtype).name)
        else:
            operands.append(repr(value))
    key = (rule.template, tuple(operands), np.dtype(node.meta.dtype).name)
    if key not in _PROBES:
        _PROBES[key] = _probe(node, rule, picks)
    return _PROBES[key]


def _probe(node: Node, rule: ScalarRule, picks: Any) -> bool:
    import numba

    names, types, texts = [], [], ["None"] * len(node.args)
    for i in picks:
        value = node.args[i]
        if isinstance(value, Node):
            names.append(f"a{i}")
            types.append(numba.from_dtype(np.dtype(value.meta.dtype)))
            texts[i] = f"a{i}"
        else:
            texts[i] = repr(value.item() if isinstance(value, np.generic) else value)
    body = cast(rule.template.format(*texts), None, np.dtype(node.meta.dtype))
    namespace: dict[str, Any] = {"np": np}
    exec(f"def probe({', '.join(names)}):\n    return {body}\n", namespace)  # noqa: S102
    try:
        numba.njit(error_model="numpy")(namespace["probe"]).compile(tuple(types))
    except Exception:  # any failure means: let NumPy run this node
        return False
    return True


def _shape_text(kernel: KernelPlan) -> str:
    """The iteration space by dim names (sizes are read at run time; 1s are static)."""
    text = "[" + ", ".join("1" if size == 1 else f"n{d}" for d, size in enumerate(kernel.shape)) + "]"
    if kernel.style == "rows":
        text += f", reducing axes {tuple(range(kernel.outer, len(kernel.shape)))} per row"
    elif kernel.style == "columns":
        text += f", reducing axes {kernel.reduce_axes}"
    return text


__all__ = ["KernelCode", "KernelEmitter", "Namer", "kernel_code", "LANES", "VECTOR_LANES",
           "CHUNKS"]


def _is_zero(size: object) -> bool:
    """A static size 0 (symbolic sizes are not)."""
    return isinstance(size, (int, np.integer)) and size == 0
