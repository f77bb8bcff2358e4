"""Plain call against compiled call (``backend="numba"``) for the red-team tests, every observable.

``differential(fn, make_calls)``: ``make_calls()`` builds a fresh, deterministic list of argument
tuples (called twice: one list for the plain run, one for the compiled run, so mutations of one
never reach the other). For each call it compares the outcome (value bit for bit, or within
``ulp`` units in the last place; NaN matches NaN, ``-0.0`` differs from ``0.0``), Python types,
dtypes, shapes, the identity of returned objects relative to the arguments (``out is x``, views),
the arguments after the call, the NumPy warnings raised (category and message) and the exception
(type and message). After the whole sequence every earlier result must still hold the values it
had when it was returned (an output buffer pool must never hand out a returned array again), and
no two results may share memory unless the plain results do.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, Callable, Sequence

import numpy as np

import astcompiler as ac

from .harness import Call, identity_signature, snapshot


ATOL = [0.0]  # absolute tolerance of the running comparison (with rtol: results of cancellations)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (NaN vs NaN: 0)."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    gi = got.view(itype).astype(np.int64)
    wi = want.view(itype).astype(np.int64)
    top = np.int64(1) << (8 * got.dtype.itemsize - 1)
    gi = np.where(gi < 0, -(gi + top), gi)  # monotonic integer order of floats (-0 < +0)
    wi = np.where(wi < 0, -(wi + top), wi)
    dist = np.abs(gi - wi)
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where(both_nan, 0, dist)


def array_difference(got: Any, want: Any, ulp: int = 0, rtol: float = 0.0) -> str | None:
    """Why two arrays/scalars differ (dtype, shape, bits beyond ``ulp``, or beyond ``rtol`` where
    it is given: sums whose order of additions differs from NumPy's), or None."""
    got_a, want_a = np.asarray(got), np.asarray(want)
    if got_a.dtype != want_a.dtype:
        return f"dtype {got_a.dtype} vs plain {want_a.dtype}"
    if got_a.shape != want_a.shape:
        return f"shape {got_a.shape} vs plain {want_a.shape}"
    kind = want_a.dtype.kind
    if kind == "c":
        return (array_difference(got_a.real, want_a.real, ulp, rtol)
                or array_difference(got_a.imag, want_a.imag, ulp, rtol))
    if kind == "f":
        dist = ulp_distance(np.ascontiguousarray(got_a), np.ascontiguousarray(want_a))
        special = ~np.isfinite(want_a) | ~np.isfinite(got_a) | (want_a == 0) | (got_a == 0)
        limit = np.where(special, 0, ulp)
        bad = dist > limit
        if rtol:
            with np.errstate(all="ignore"):
                close = np.abs(got_a - want_a) <= rtol * np.abs(want_a) + ATOL[0]
            bad &= ~(close & np.isfinite(want_a) & np.isfinite(got_a))
        if np.any(bad):
            i = np.flatnonzero(bad.ravel())[0]
            return (f"values differ at flat index {i}: compiled {got_a.ravel()[i]!r} vs plain "
                    f"{want_a.ravel()[i]!r} ({int(dist.ravel()[i])} ulp; {int(bad.sum())} of "
                    f"{bad.size} elements)")
        return None
    if not np.array_equal(got_a, want_a):
        return f"values: compiled {got_a.tolist()!r} vs plain {want_a.tolist()!r}"
    return None


def value_difference(got: Any, want: Any, ulp: int = 0, path: str = "result",
                     rtol: float = 0.0) -> str | None:
    """The first difference between two results (recursive through tuples, lists, dicts)."""
    if type(got) is not type(want):
        return f"{path}: type {type(got).__name__} vs plain {type(want).__name__}"
    if isinstance(want, (list, tuple)):
        if len(got) != len(want):
            return f"{path}: length {len(got)} vs plain {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            found = value_difference(g, w, ulp, f"{path}[{i}]", rtol)
            if found:
                return found
        return None
    if isinstance(want, dict):
        if list(got) != list(want):
            return f"{path}: keys {list(got)} vs plain {list(want)}"
        for k in want:
            found = value_difference(got[k], want[k], ulp, f"{path}[{k!r}]", rtol)
            if found:
                return found
        return None
    if isinstance(want, (np.ndarray, np.generic, float, complex)):
        found = array_difference(got, want, ulp, rtol)
        return f"{path}: {found}" if found else None
    if got != want:
        return f"{path}: {got!r} vs plain {want!r}"
    return None


def arrays_in(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in arrays_in(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in arrays_in(v)]
    return []


def run_one(fn: Callable, args: tuple, errstate: dict | None) -> dict:
    """One call: outcome, warnings, identity signature, copies of its arrays."""
    record: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(**(errstate or {})):
            try:
                result = fn(*args)
            except Exception as exc:  # noqa: BLE001 - the exception is the observable
                record["raise"] = (type(exc).__name__, str(exc))
            else:
                record["result"] = result
                record["copy"] = snapshot(result)
                record["identity"] = identity_signature(result, Call(args), None)
    record["warnings"] = [(w.category.__name__, str(w.message)) for w in caught
                          if issubclass(w.category, RuntimeWarning)
                          and not str(w.message).startswith("astcompiler")]
    record["all_warnings"] = [(w.category.__name__, str(w.message)) for w in caught]
    record["args"] = copy.deepcopy(args)  # the arguments right after this call
    return record


def differential(fn: Callable, make_calls: Callable[[], Sequence[tuple]], *, ulp: int = 0,
                 rtol: float = 0.0, atol: float = 0.0,
                 errstate: dict | None = None, compiled: Callable | None = None,
                 check_warnings: bool = True) -> Callable:
    """Run ``fn`` plainly and compiled over the calls; assert every observable equal. Returns the
    compiled function (its ``entries`` tell what ran where)."""
    ATOL[0] = atol
    plain_calls, compiled_calls = list(make_calls()), list(make_calls())
    target = compiled if compiled is not None else ac.compile(fn, backend="numba")
    plain = [run_one(fn, args, errstate) for args in plain_calls]
    mine = [run_one(target, args, errstate) for args in compiled_calls]
    for i, (p, c) in enumerate(zip(plain, mine)):
        at = f"call {i + 1} of {len(plain)}"
        if "raise" in p or "raise" in c:
            assert p.get("raise") == c.get("raise"), \
                f"{at}: plain raised {p.get('raise')} vs compiled {c.get('raise')}"
        else:
            found = value_difference(c["result"], p["result"], ulp, rtol=rtol)
            assert found is None, f"{at}: {found}"
            assert p["identity"] == c["identity"], \
                f"{at}: identity plain {p['identity']} vs compiled {c['identity']}"
        found = value_difference(list(c["args"]), list(p["args"]), 0, "args after the call")
        assert found is None, f"{at}: {found}"
        if check_warnings:
            assert p["warnings"] == c["warnings"], \
                f"{at}: warnings plain {p['warnings']} vs compiled {c['warnings']}"
    for i, c in enumerate(mine):  # results of earlier calls are never overwritten later
        if "result" in c:
            again = snapshot(c["result"])
            found = value_difference(_arrays_of(again), _arrays_of(c["copy"]), 0)
            assert found is None, f"result of call {i + 1} changed by later calls: {found}"
    plain_shared = _shared_pairs(plain)
    compiled_shared = _shared_pairs(mine)
    assert compiled_shared <= plain_shared, \
        f"results of different calls share memory (calls {sorted(compiled_shared - plain_shared)})"
    return target


def _arrays_of(snap: tuple) -> list:
    kind, _, payload = snap
    if kind == "array":
        return [payload[2]]
    if kind == "npscalar":
        return [payload[1]]
    if kind in ("seq",):
        return [a for s in payload for a in _arrays_of(s)]
    if kind == "dict":
        return [a for _, s in payload for a in _arrays_of(s)]
    return []


def _shared_pairs(records: list[dict]) -> set[tuple[int, int]]:
    """Pairs of calls (i < j) whose returned arrays share memory."""
    found = set()
    outs = [arrays_in(r.get("result")) for r in records]
    for i in range(len(outs)):
        for j in range(i + 1, len(outs)):
            if any(a.size and b.size and np.shares_memory(a, b) for a in outs[i] for b in outs[j]):
                found.add((i, j))
    return found

