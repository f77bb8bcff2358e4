"""The op registry: every op the compiler knows, declared once.

Each ``OpDef`` says, in one place:

* ``impl``: the NumPy reference implementation (what the ``eager`` backend runs, and what
  capture runs on example values to learn the result's shape, dtype and scalar-ness);
* ``kind``: how the numba backend treats it: ``pointwise`` (a scalar expression fused into
  loop nests), ``reduction`` (a loop with an accumulator), ``view`` (NumPy view made in the
  wrapper), ``creation``, ``mutation`` (writes into its first argument), ``extern`` (a NumPy or
  BLAS/LAPACK call from the wrapper);
* ``scalar``: for pointwise ops, a numba scalar expression template (``"np.sin({0})"``);
* ``reduction``: for reductions, the accumulator's init/combine/finalize;
* ``shape_rule``: the output shape over symbolic sizes (``ops/sizes.py``); pointwise ops and
  reductions have theirs by kind;
* ``normalize``: how a call's arguments are brought to one canonical form, so that ``np.sum(x, 1)``
  and ``x.sum(axis=1)`` become the same node;
* how user code reaches it: NumPy callables (``aliases``), ``ndarray`` methods, operators;
* what the backends and capture need to know about it (``cheap``, ``layout_free``,
  ``comparison``, ``no_identity``, ``python_int``, ``numpy_only``, ``data_dependent_shape``,
  ``subscript``, ``order_arg``, ``literal``, ...):
  fields of its ``OpDef``, never a set of op names kept elsewhere.

Adding an op touches one file (the module of its family under ``ops/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

OpKind = str  # "pointwise" | "reduction" | "view" | "creation" | "mutation" | "extern"
Normalizer = Callable[..., tuple[tuple, dict]]
ArgsPredicate = Callable[[tuple, dict], bool]

# ``OpDef.python_int``: how an op on Python ints (graph values typed ``int``) maps to 64-bit
# integer arithmetic. ``"exact"``: for operands in int64 the 64-bit result is Python's and Python
# raises nothing (comparisons, bitwise ops, max/min). ``"checked"``: Python's only after a check of
# the operands or the result: it may outgrow 64 bits (``+``, ``*``, ``-MIN``, ``MIN // -1``,
# ``<<``) or Python raises where 64-bit arithmetic does not (``x // 0``, ``x >> -1``). None: no
# int result of int operands (``/``), or not modelled.
PythonIntPolicy = Literal["checked", "exact"]
NUMPY_ONLY_ALL = "biufc"  # ``OpDef.numpy_only`` for ops a kernel never computes


@dataclass(frozen=True)
class Store:
    """What a mutation writes: ``value`` (argument ``value_arg``) into ``dst[index]`` (``index``
    Ellipsis: all of ``dst``)."""

    dst: Any
    index: Any
    value: Any
    value_arg: int


StoreRule = Callable[[tuple, dict], "Store | None"]  # (args, kwargs) -> the write, None: other


@dataclass(frozen=True)
class ReductionDef:
    """Lowering of a reduction as a loop: ``acc = init; acc = combine(acc, v); finalize(acc, n)``.

    Templates are numba scalar source with ``{acc}``, ``{v}`` (the element, cast to the
    accumulator dtype), ``{n}`` (element count), ``{mean}`` (two-pass reductions: the mean
    from the first sweep) and ``{ddof}`` placeholders.

    * ``init``: ``"0"``, ``"1"``, ``"False"``, ``"True"``, ``"lowest"`` / ``"highest"`` (the
      accumulator dtype's smallest / largest value, -inf / inf for floats).
    * ``merge``: combines two partial accumulators ``{a}``, ``{b}`` (unrolled lanes, parallel
      chunks, GPU threads); None keeps the reduction in element order.
    * ``propagate_nan``: for float inputs any NaN element makes the result NaN (max, min); a
      backend tracks that in a flag, so ``combine`` itself need not test for NaN.
    * ``arg``: argmax/argmin; ``combine`` is the comparison ``"{v} > {acc}"`` under which an
      element replaces the best so far (first occurrence wins, NaN wins like NumPy).
    * ``accumulate``: the accumulator dtype: ``"result"`` (the result's dtype), ``"input"``,
      ``"bool"``, ``"wide"`` (float64 for float results, else the result's dtype: NumPy sums
      floats pairwise, float64 keeps float32 sums as accurate), ``"float64"`` (float results only).
    * ``two_pass``: a first sweep sums the elements to get ``{mean}`` (var, std).
    """

    init: str
    combine: str
    finalize: str = "{acc}"
    merge: str | None = None
    propagate_nan: bool = False
    arg: bool = False
    accumulate: str = "result"
    two_pass: bool = False


@dataclass
class OpDef:
    name: str
    impl: Callable[..., Any]
    kind: OpKind = "extern"
    scalar: str | None = None
    reduction: ReductionDef | None = None
    normalize: Normalizer | None = None
    aliases: tuple = ()
    methods: tuple[str, ...] = ()
    side_effects: bool = False
    shape_rule: Callable[..., Any] | None = None  # symbolic output shape (see ops/sizes.py)
    doc: str = ""
    # -- what backends and capture need to know, declared here instead of in name tables --
    ufunc: Any = None  # np.ufunc: the NumPy ufunc a pointwise op is (its loops decide dtypes)
    python: Callable[..., Any] | None = None  # Python's operator on Python numbers (``a // b``)
    cheap: bool = False  # recomputing it in a later sweep is cheaper than keeping its values
    layout_free: bool = False  # a view op whose result is a view whatever the input's layout
    comparison: bool = False  # a comparison: bool result, operands compared in their own dtype
    no_identity: str | None = None  # a reduction without identity: its ValueError on empty input
    fp_quiet: str = ""  # float kinds ("f", "c") on which it never sets a floating-point flag
    # it may call Python's ``warnings.warn`` (besides FP flags, which ``np.errstate`` reports):
    # "Mean of empty slice", a ComplexWarning of a cast; ufuncs and views never do
    python_warnings: bool = True
    integer_division: bool = False  # on integers, warns (or raises) on a zero divisor or a
    # negative power
    scalar_overflow: bool = False  # as an operator on NumPy integer scalars, NumPy's scalar math
    # warns where it wraps ("overflow encountered in scalar add"); arrays wrap silently
    python_int: PythonIntPolicy | None = None  # on Python ints: is 64-bit arithmetic Python's?
    numpy_only: str = ""  # loop dtype kinds numba computes unlike NumPy: kernels leave them out
    data_dependent_shape: ArgsPredicate | None = None  # (args, kwargs) -> shape depends on values
    may_raise: ArgsPredicate | None = None  # (args, kwargs) -> may raise (not an FP error) on
    # run-time values (an index out of bounds): kept when unused, as the plain call raises
    returns_input: ArgsPredicate | None = None  # (args, kwargs) -> may return its input itself
    # (args, kwargs) -> on an array (not a NumPy scalar) it returns that very array, whatever
    # its layout (``np.asarray(x)``): capture hands back the input's own value (``is`` holds)
    identity_on_arrays: ArgsPredicate | None = None
    store: StoreRule | None = None  # a mutation writing one value into a view of its first arg
    tuple_output: bool = False  # returns a tuple of arrays
    python_scalar_output: bool = False  # returns a Python scalar (bool/int) for whole inputs
    attribute: str | None = None  # also reached as an ndarray attribute (``a.real``)
    subscript: bool = False  # Python's subscript syntax: ``a[i]`` (a view op), ``a[i] = v`` (a store)
    order_arg: bool = False  # takes NumPy's ``order=`` ("K", "C", "F", "A"): the result's layout
    literal: bool = False  # its value is its first argument, a constant (``scalar``, ``constant``)
    threaded: bool = False  # runs on its own thread pool (BLAS, LAPACK): kernels beside it stay serial
    method_kwargs: tuple = ()  # (name, value) defaults of the ndarray method that differ from the
    # function's (``a.copy()`` copies in C order, ``np.copy(a)`` keeps the layout)
    # derivative (``autodiff/``): ``vjp(ctx, g) -> one cotangent per positional argument`` (None:
    # no gradient flows there; a tuple argument gets a tuple), written with NumPy calls on the
    # values in ``ctx`` (``ops/derivatives.py``), so the backward is a graph of registry ops
    vjp: Callable[..., tuple] | None = None

    @property
    def may_warn(self) -> bool:
        """It may warn through ``warnings.warn`` (a NumPy step then records warnings)."""
        return self.python_warnings and self.ufunc is None and self.kind != "view"

    @property
    def pure(self) -> bool:
        return not self.side_effects and self.kind != "creation"

    def canonical(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if self.normalize is None:
            return tuple(args), dict(kwargs)
        return self.normalize(*args, **kwargs)


class Registry:
    """Ops by name, by NumPy callable identity and by ndarray method name."""

    def __init__(self) -> None:
        self.ops: dict[str, OpDef] = {}
        self._by_callable: dict[int, tuple[Any, OpDef]] = {}
        self._by_method: dict[str, OpDef] = {}

    def register(self, op: OpDef) -> OpDef:
        if op.name in self.ops:
            raise ValueError(f"op {op.name!r} is registered twice")
        self.ops[op.name] = op
        for fn in op.aliases:
            # keep the callable alive next to its id so the id stays unique
            self._by_callable.setdefault(id(fn), (fn, op))
        for method in op.methods:
            self._by_method.setdefault(method, op)
        return op

    def __getitem__(self, name: str) -> OpDef:
        return self.ops[name]

    def __contains__(self, name: str) -> bool:
        return name in self.ops

    def lookup_callable(self, fn: Any) -> OpDef | None:
        hit = self._by_callable.get(id(fn))
        return hit[1] if hit is not None and hit[0] is fn else None

    def lookup_method(self, name: str) -> OpDef | None:
        return self._by_method.get(name)

    def names(self) -> list[str]:
        return sorted(self.ops)


REGISTRY = Registry()


def register(name: str, impl: Callable[..., Any], **fields: Any) -> OpDef:
    """Declare an op (see ``OpDef`` for the fields)."""
    return REGISTRY.register(OpDef(name=name, impl=impl, **fields))


def get_op(name: str) -> OpDef:
    return REGISTRY[name]


def define_vjp(name: str, rule: Callable[..., tuple]) -> None:
    """Declare the derivative (VJP rule) of op ``name``, beside the op in its family's module."""
    REGISTRY[name].vjp = rule
