"""Helpers for the op-registry tests: call an op the way capture does, compare with NumPy.

``check(fn, *args, **kwargs)`` runs ``fn`` (a NumPy callable, or ``method("name")`` for an ndarray
method called on ``args[0]``) twice on copies of the arguments:

* directly with NumPy;
* through the registry, as capture does: every ndarray argument is replaced by a ``FakeProxy``
  (only ``shape``/``dtype``/``ndim``; any attempt to hand it to NumPy fails the test), the op is
  found by callable identity or method name, ``op.canonical`` binds the call, proxies in the
  canonical form are swapped back for the arrays, and ``op.impl`` runs.

Both must agree: the same exception class, or results of the same Python type, dtype, shape and
values (and the same mutations of the inputs).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from astcompiler.ops import REGISTRY, OpDef


class ProxyLeak(AssertionError):
    """A normalizer tried to use an array argument's data."""


class FakeProxy:
    """A stand-in for capture's array proxy: metadata only, no data."""

    __array_priority__ = 1000.0

    def __init__(self, value: Any) -> None:
        self._value = value

    @property
    def shape(self) -> tuple:
        return tuple(np.shape(self._value))

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def ndim(self) -> int:
        return np.ndim(self._value)

    def _leak(self, *args: Any, **kwargs: Any) -> Any:
        raise ProxyLeak("a normalizer used an array argument's data")

    __array__ = __array_function__ = __array_ufunc__ = _leak
    __bool__ = __index__ = __int__ = __float__ = __len__ = __iter__ = _leak
    __lt__ = __le__ = __gt__ = __ge__ = __getitem__ = _leak
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _leak
    __hash__ = object.__hash__

    def __eq__(self, other: Any) -> bool:
        if other is self:
            return True
        return self._leak()

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return f"FakeProxy({self.dtype}{list(self.shape)})"


@dataclass(frozen=True)
class Method:
    """An ndarray method called on the first argument: ``method("cumsum")``."""

    name: str

    def __call__(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(obj, self.name)(*args, **kwargs)


def method(name: str) -> Method:
    return Method(name)


def proxify(value: Any, memo: dict[int, FakeProxy]) -> Any:
    """Replace every ndarray in (nested) lists/tuples/dicts by a FakeProxy (one per array)."""
    if isinstance(value, np.ndarray):
        if id(value) not in memo:
            memo[id(value)] = FakeProxy(value)
        return memo[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(proxify(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: proxify(v, memo) for k, v in value.items()}
    return value


def unproxify(value: Any) -> Any:
    """Swap FakeProxies back for their arrays (tuples, dicts and slices are walked)."""
    if isinstance(value, FakeProxy):
        return value._value
    if isinstance(value, tuple):
        return tuple(unproxify(v) for v in value)
    if isinstance(value, list):
        return [unproxify(v) for v in value]
    if isinstance(value, dict):
        return {k: unproxify(v) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(unproxify(value.start), unproxify(value.stop), unproxify(value.step))
    return value


def assert_canonical_is_plain(value: Any, where: str = "canonical") -> None:
    """Canonical args hold proxies, tuples, dicts (top level), slices and hashable constants:
    never lists or other mutable containers."""
    if isinstance(value, FakeProxy):
        return
    if isinstance(value, tuple):
        for v in value:
            assert_canonical_is_plain(v, where)
        return
    if isinstance(value, slice):
        for v in (value.start, value.stop, value.step):
            assert_canonical_is_plain(v, where)
        return
    assert not isinstance(value, (list, dict, set, np.ndarray)), \
        f"{where} holds a {type(value).__name__}: {value!r}"
    hash(value)


def lookup(fn: Callable) -> OpDef:
    if isinstance(fn, Method):
        op = REGISTRY.lookup_method(fn.name)
    else:
        op = REGISTRY.lookup_callable(fn)
    assert op is not None, f"{fn} is not registered"
    return op


_CANONICAL_MEMO: dict[int, FakeProxy] = {}  # one FakeProxy per array (the proxy keeps it alive)


def canonical(fn: Callable, *args: Any, **kwargs: Any) -> tuple[str, tuple, dict]:
    """``(op name, canonical args, canonical kwargs)`` for a call. The same ndarray always
    becomes the same FakeProxy, so canonical forms of two calls on it compare equal."""
    op = lookup(fn)
    memo = _CANONICAL_MEMO
    cargs, ckwargs = op.canonical(proxify(args, memo), proxify(kwargs, memo))
    assert isinstance(cargs, tuple) and isinstance(ckwargs, dict)
    assert_canonical_is_plain(cargs)
    for key, value in ckwargs.items():
        assert isinstance(key, str)
        assert_canonical_is_plain(value, f"canonical kwarg {key!r}")
    return op.name, cargs, ckwargs


def run_op(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """The registry path: proxies -> canonical -> arrays -> impl."""
    op = lookup(fn)
    memo: dict[int, FakeProxy] = {}
    cargs, ckwargs = op.canonical(proxify(args, memo), proxify(kwargs, memo))
    assert_canonical_is_plain(cargs)
    for key, value in ckwargs.items():
        assert_canonical_is_plain(value, f"canonical kwarg {key!r}")
    return op.impl(*unproxify(cargs), **unproxify(ckwargs))


def _call(fn: Callable, args: tuple, kwargs: dict) -> tuple[Any, BaseException | None]:
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - we compare exception classes
        return None, exc


def assert_same(actual: Any, expected: Any, *, values: bool = True, path: str = "result") -> None:
    """Same Python type; for arrays same dtype, shape and values (NaNs equal)."""
    assert type(actual) is type(expected), \
        f"{path}: type {type(actual).__name__} != NumPy's {type(expected).__name__}"
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), f"{path}: length differs"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, values=values, path=f"{path}[{i}]")
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        assert np.shape(actual) == np.shape(expected), \
            f"{path}: shape {np.shape(actual)} != {np.shape(expected)}"
        if values:
            np.testing.assert_array_equal(actual, expected, err_msg=path, strict=True)
        return
    if values:
        if isinstance(expected, float) and expected != expected:
            assert actual != actual
        else:
            assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def clone(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A deep copy that keeps each array's layout (non-contiguous stays non-contiguous) and
    the aliasing between arguments (the same array twice stays one array)."""
    memo = {} if memo is None else memo
    if isinstance(value, np.ndarray):
        if id(value) not in memo:
            contiguous = value.flags.c_contiguous or value.flags.f_contiguous
            memo[id(value)] = value.copy(order="K") if contiguous else noncontiguous(value)
        return memo[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(clone(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: clone(v, memo) for k, v in value.items()}
    return copy.deepcopy(value)


def check(fn: Callable, *args: Any, values: bool = True, inputs: bool = True,
          **kwargs: Any) -> Any:
    """NumPy vs registry on copies of the same arguments; returns NumPy's result (or None when
    both raised the same exception class). ``values=False`` compares only type, dtype and
    shape (``np.empty``); ``inputs=False`` skips comparing the inputs after the call (where
    NumPy leaves them undefined, e.g. ``overwrite_input=True``)."""
    np_args, np_kwargs = clone((args, kwargs))
    op_args, op_kwargs = clone((args, kwargs))
    expected, np_error = _call(fn, np_args, np_kwargs)
    actual, op_error = _call(lambda *a, **k: run_op(fn, a, k), op_args, op_kwargs)
    if np_error is not None:
        assert op_error is not None, \
            f"NumPy raised {type(np_error).__name__}({np_error}) but the op returned {actual!r}"
        assert isinstance(op_error, type(np_error)), \
            f"NumPy raised {type(np_error).__name__}, the op {type(op_error).__name__}: {op_error}"
        return None
    if op_error is not None:
        raise op_error
    assert_same(actual, expected, values=values)
    if inputs:
        assert_same(op_args, np_args, path="inputs after the call")
    return expected


DTYPES = ("float32", "float64", "int32", "int64", "bool")
NUMERIC = ("float32", "float64", "int32", "int64")
FLOATS = ("float32", "float64")


def sample(shape: tuple = (3, 4), dtype: str = "float64", seed: int = 0, *,
           low: int = -5, high: int = 6) -> np.ndarray:
    """Deterministic test values of any dtype (ints in [low, high), floats normal)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        return np.asarray(rng.integers(low, high, size=shape)).astype(dt)
    if dt.kind == "c":
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return np.asarray(rng.standard_normal(shape)).astype(dt)


def noncontiguous(x: np.ndarray) -> np.ndarray:
    """The same values as ``x`` in a non-contiguous layout (every other element of a bigger
    array, transposed back)."""
    big = np.empty(tuple(2 * s for s in x.shape), dtype=x.dtype)
    view = big[tuple(slice(None, None, 2) for _ in x.shape)]
    view[...] = x
    return view
