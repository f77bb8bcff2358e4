"""``ArrayProxy``: a traced array that speaks NumPy.

Operators, indexing, methods and attributes become graph nodes through the tracer; NumPy
functions reach it through ``__array_ufunc__``/``__array_function__``. Every proxy carries an
*example*: the value the eager program would have at this point (computed on copies of the
inputs), which gives each node's exact shape, dtype and scalar-ness. Anything that needs the
array's data in Python (``bool(x)``, ``float(x)``, ``x.item()``) is a graph break.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exc import GraphBreak
from ..graph import Node
from ..ops import REGISTRY
from ..ops.pointwise import BINARY_OPERATORS, UNARY_OPERATORS

if TYPE_CHECKING:  # pragma: no cover
    from .tracer import Tracer

_LAYOUT_ATTRIBUTES = {"strides", "flags", "base", "ctypes", "data", "__array_interface__"}
_DATA_METHODS = {"item", "tolist", "tobytes", "__index__", "itemset"}
# packages whose code sees a proxy's own class (``isinstance(value, ArrayProxy)`` and the like)
_INTERNAL_PACKAGES = ("astcompiler", "numpy", "sympy", "numba", "copy", "abc", "typing")


def _internal(module: str) -> bool:
    return module.split(".", 1)[0] in _INTERNAL_PACKAGES


def _data_dependent(what: str) -> GraphBreak:
    return GraphBreak(f"{what} needs the array's data in Python (data-dependent); "
                      "keep the computation in NumPy, or mark the code with ac.graph_break()")


class ArrayProxy:
    """A value in the graph under capture: an array or a NumPy scalar."""

    __slots__ = ("tracer", "node", "example", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, tracer: "Tracer", node: Node, example: Any) -> None:
        self.tracer = tracer
        self.node = node
        self.example = example
        log = getattr(tracer, "proxy_log", None)  # set while ac.grad captures (autodiff/)
        if log is not None:
            log.setdefault(node, self)

    # ----- metadata (static) ---------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        """Sizes as Python ints, or ``SymInt`` for dynamic dimensions."""
        self._numpy_attribute('shape')
        meta = self.node.meta
        if meta is None:
            return tuple(np.shape(self.example))
        return self.tracer.sym_shape(meta.shape)

    @property
    def dtype(self) -> np.dtype:
        self._numpy_attribute('dtype')
        meta = self.node.meta
        return meta.dtype if meta is not None else np.asarray(self.example).dtype

    @property
    def ndim(self) -> int:
        self._numpy_attribute('ndim')
        return len(self.shape)

    @property
    def size(self) -> Any:
        self._numpy_attribute('size')
        size = 1
        for dim in self.shape:
            size = size * dim
        return size

    @property
    def itemsize(self) -> int:
        self._numpy_attribute('itemsize')
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        self._numpy_attribute('nbytes')
        return self.size * self.itemsize

    @property
    def T(self) -> "ArrayProxy":
        self._numpy_attribute('T')
        return self.tracer.call_op("transpose", (self,), {})

    @property
    def mT(self) -> "ArrayProxy":
        self._numpy_attribute('mT')
        axes = tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2)
        return self.tracer.call_op("transpose", (self, axes), {})

    def _python_number_method(self, name: str) -> None:
        """A method the user's code reads: a value whose type the data decides is a graph
        break; a Python number raises Python's ``AttributeError`` for a NumPy-only method
        and is a graph break for its own (``float.conjugate``: Python's type)."""
        self.tracer.refuse_ambiguous(self)
        meta = self.node.meta
        if meta is None or meta.pytype is None:
            return
        if hasattr(meta.pytype, name):
            raise GraphBreak(f"`{meta.pytype.__name__}.{name}` of a Python number")
        raise AttributeError(f"{meta.pytype.__name__!r} object has no attribute {name!r}")

    def _numpy_attribute(self, name: str) -> None:
        """Read by the user's code (not the compiler's): a value whose type the data decides
        is a graph break, and a Python number has no NumPy attributes (Python's error)."""
        if _internal(sys._getframe(2).f_globals.get("__name__", "")):
            return
        self.tracer.refuse_ambiguous(self)
        meta = self.node.meta
        if meta is not None and meta.pytype is not None:
            raise AttributeError(f"{meta.pytype.__name__!r} object has no attribute {name!r}")

    @property
    def real(self) -> Any:
        self.tracer.refuse_ambiguous(self)  # a Python float's .real is a float
        return self.tracer.call_op("real", (self,), {})

    @property
    def imag(self) -> Any:
        self.tracer.refuse_ambiguous(self)
        return self.tracer.call_op("imag", (self,), {})

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """``x.__class__`` in the user's code is the value's own class, as ``type(x)`` is (a
        graph break where the data decides it); the compiler's own code (and ``isinstance``
        called from it) sees ``ArrayProxy``."""
        if _internal(sys._getframe(1).f_globals.get("__name__", "")):
            return ArrayProxy
        self.tracer.refuse_ambiguous(self)
        return type(self.example)

    @property
    def is_scalar(self) -> bool:
        """A NumPy or Python scalar (immutable: in-place operators rebind)."""
        meta = self.node.meta
        return meta.scalar if meta is not None else isinstance(self.example, np.generic)

    def __getattr__(self, name: str) -> Any:
        if name in _LAYOUT_ATTRIBUTES:
            raise GraphBreak(f"reading `.{name}` of a traced array depends on its memory layout, "
                             "which the compiled code does not guard")
        if name in _DATA_METHODS:
            raise _data_dependent(f"`.{name}()`")
        if name == "fill":
            return self._fill
        op = REGISTRY.lookup_method(name)
        if op is not None and not _internal(sys._getframe(1).f_globals.get("__name__", "")):
            self._python_number_method(name)  # a Python number has none, or its own
        if op is None:
            if hasattr(np.ndarray, name):
                raise GraphBreak(f"ndarray.{name} is not supported by astcompiler yet")
            raise AttributeError(f"'numpy.ndarray' object has no attribute {name!r}")
        tracer = self.tracer

        def method(*args: Any, **kwargs: Any) -> Any:
            if op.method_kwargs and not args:  # the method's own defaults (OpDef.method_kwargs)
                kwargs = {**dict(op.method_kwargs), **kwargs}
            result = tracer.trace_op(op, (self, *args), kwargs)
            if self.is_scalar and isinstance(result, ArrayProxy) and result.ndim == 0 \
                    and not result.is_scalar:
                return result[()]  # a NumPy scalar's methods return scalars (``x[1].copy()``)
            return result

        method.__name__ = name
        method.__ac_traced_method__ = True  # type: ignore[attr-defined]
        return method

    def _fill(self, value: Any) -> None:
        self.tracer.call_op("setitem", (self, Ellipsis, value), {})

    # ----- data-dependent conversions --------------------------------------------------------
    def __bool__(self) -> bool:
        raise _data_dependent("the truth value of a traced array (`if`, `while`, `and`, `or`)")

    def __float__(self) -> float:
        raise _data_dependent("float() of a traced array")

    def __int__(self) -> int:
        raise _data_dependent("int() of a traced array")

    def __index__(self) -> int:
        raise _data_dependent("using a traced array as a Python int")

    def __complex__(self) -> complex:
        raise _data_dependent("complex() of a traced array")

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise GraphBreak("converting a traced array to a concrete NumPy array (np.asarray on a "
                         "traced value inside an unsupported call)")

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        first = self.shape[0]
        return int(first)  # a dynamic length is specialized: Python needs an int here

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return iter(self.tracer.unrolled(range(self.shape[0]), lambda i: self[i]))

    def __format__(self, spec: str) -> str:
        raise _data_dependent("formatting a traced array's value")

    def __str__(self) -> str:
        raise _data_dependent("str() of a traced array's value")

    def __contains__(self, item: Any) -> bool:
        raise _data_dependent("`in` on a traced array")

    def __hash__(self) -> int:
        return _hash(self)

    def __repr__(self) -> str:
        meta = self.node.meta
        return f"ArrayProxy({self.node.name}: {meta.short() if meta else '?'})"

    # ----- indexing ------------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Any:
        return self.tracer.call_op("getitem", (self, index), {})

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.is_scalar:
            raise TypeError(f"'{type(self.example).__name__}' object does not support item assignment")
        self.tracer.call_op("setitem", (self, index, value), {})

    # ----- NumPy protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return self.tracer.trace_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        op = REGISTRY.lookup_callable(func)
        if op is None:
            raise GraphBreak(f"np.{getattr(func, '__name__', func)} is not supported by astcompiler yet")
        return self.tracer.trace_op(op, args, kwargs)

    def __round__(self, ndigits: int | None = None) -> Any:
        if ndigits is not None:  # round(0.5, 1) is a float, round(np.float64(0.5), 1) NumPy's
            self.tracer.refuse_ambiguous(self)
        meta = self.node.meta
        if meta is not None and meta.pytype is not None:  # a Python number: Python's round
            if ndigits is not None:
                raise GraphBreak("round(x, ndigits) of a Python number (decimal rounding is not "
                                 "modelled)")
            return self.tracer.call_op("py_round", (self,), {}, python=True)
        if ndigits is None and self.is_scalar and self.dtype.kind in "iuf":
            return self.tracer.call_op("py_round", (self,), {})  # NumPy scalars: a Python int
        return self.tracer.call_op("round", (self,), {} if ndigits is None else {"decimals": ndigits})

    def __matmul__(self, other: Any) -> Any:
        return self.tracer.call_op("matmul", (self, other), {})

    def __rmatmul__(self, other: Any) -> Any:
        return self.tracer.call_op("matmul", (other, self), {})

    def __imatmul__(self, other: Any) -> Any:
        return self._inplace("matmul", other)

    def __divmod__(self, other: Any) -> Any:
        return (self // other, self % other)

    def _inplace(self, op_name: str, other: Any) -> Any:
        if self.is_scalar:  # NumPy scalars are immutable: `s += 1` rebinds
            return self.tracer.call_op(op_name, (self, other), {}, python=True)
        return self.tracer.call_op(op_name, (self, other), {"out": self})  # NumPy's `a += b`


def _binary(ufunc_name: str):
    def forward(self: ArrayProxy, other: Any) -> Any:
        return self.tracer.call_op(ufunc_name, (self, other), {}, python=True)

    def reflected(self: ArrayProxy, other: Any) -> Any:
        return self.tracer.call_op(ufunc_name, (other, self), {}, python=True)

    def inplace(self: ArrayProxy, other: Any) -> Any:
        return self._inplace(ufunc_name, other)

    return forward, reflected, inplace


def _unary(ufunc_name: str):
    def method(self: ArrayProxy) -> Any:
        return self.tracer.call_op(ufunc_name, (self,), {}, python=True)
    return method


_COMPARISONS = {"lt", "le", "gt", "ge", "eq", "ne"}
for _dunder, _ufunc in BINARY_OPERATORS.items():
    _fwd, _rev, _inp = _binary(_ufunc)
    setattr(ArrayProxy, f"__{_dunder}__", _fwd)
    if _dunder not in _COMPARISONS:
        setattr(ArrayProxy, f"__r{_dunder}__", _rev)
        setattr(ArrayProxy, f"__i{_dunder}__", _inp)
for _dunder, _ufunc in UNARY_OPERATORS.items():
    setattr(ArrayProxy, f"__{_dunder}__", _unary(_ufunc))

# ``array ** k``: NumPy's operator computes a Python int k of 2 or -1 and a Python float 0.5 on a
# float or complex array as these ufuncs (not np.power: complex results differ in the last bit)
_FAST_POWERS = {(int, 2): "square", (int, -1): "reciprocal", (float, 0.5): "sqrt"}


def _power_operator(self: ArrayProxy, other: Any, inplace: bool) -> Any:
    """``self ** other`` (``**=`` when ``inplace``) with NumPy's operator fast paths."""
    array = isinstance(self.example, np.ndarray) and np.dtype(self.dtype).kind in "fc"
    fast = _FAST_POWERS.get((type(other), other)) if type(other) in (int, float) else None
    if array and fast is None and np.dtype(self.dtype).kind == "c" and isinstance(
            other, ArrayProxy) and other.node.meta is not None and other.node.meta.pytype:
        raise GraphBreak("complex_array ** k with a dynamic Python number k: NumPy computes "
                         "k = 2, -1, 0.5 with other ufuncs than np.power")
    if not array or fast is None:
        return self._inplace("power", other) if inplace else self.tracer.call_op(
            "power", (self, other), {}, python=True)
    return self.tracer.call_op(fast, (self,), {"out": self} if inplace else {})


ArrayProxy.__pow__ = lambda self, other: _power_operator(self, other, False)
ArrayProxy.__ipow__ = lambda self, other: _power_operator(self, other, True)


def _hash(proxy: ArrayProxy) -> int:
    """``hash()`` of a traced value (a dict key, ``in`` a set or dict): an array is unhashable
    as NumPy's is; a NumPy scalar or a Python number from the data hashes by a value capture
    does not know: a graph break (never an identity hash that finds no key)."""
    meta = proxy.node.meta
    if meta is not None and meta.pytype is None and not meta.scalar:
        raise TypeError("unhashable type: 'numpy.ndarray'")
    raise _data_dependent("hashing a traced value (a dict key, `in` a set or a dict)")
