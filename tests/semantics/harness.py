"""Differential harness: each case runs plain and compiled over the same call sequence.

A ``Case`` names a *factory*. Every call of the factory builds fresh state (the function under test,
its arguments, the outside objects it touches) and returns a ``Program``. The harness runs the plain
function over one fresh program and ``ac.compile(program.target, backend=...)`` (one compiled
function for the whole sequence) over another, then compares, call by call:

* the outcome: the returned value, or the exception's type and ``str()``;
* the returned value recursively: ``type()`` of every leaf, containers' types and lengths, arrays'
  dtype, shape and values (floats within rounding, everything else exact), Python floats with
  ``-0.0``/``0.0``/NaN told apart;
* the identity of returned mutable objects relative to the arguments, the observed outside objects
  and earlier parts of the result (``f(lst) is lst``, ``out is x``);
* the arguments after the call (mutations);
* ``program.observe()`` after the call (globals, class attributes, logs appended to);
* what the call printed.

A compiled call may run eagerly: only differences fail. The plain sequence runs to its end before
the compiled one starts, so module globals reset by the factory are never shared between the two.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import io
import math
import signal
import threading
import traceback
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import astcompiler as ac

BACKENDS: tuple[str, ...] = ("eager", "aot_eager", "numba")
DEFAULT_TIMEOUT_S = 30.0  # a hang, not a slow cold compile: three numba entries take 9 s on a busy 2-core CI machine


@dataclass
class Call:
    """One call of the function under test."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    before: Callable[[], Any] | None = None  # changes outside state before the call

    def describe(self) -> str:
        parts = [short_repr(a) for a in self.args]
        parts += [f"{k}={short_repr(v)}" for k, v in self.kwargs.items()]
        prefix = "after a change of outside state, " if self.before is not None else ""
        return prefix + "(" + ", ".join(parts) + ")"


def call(*args: Any, **kwargs: Any) -> Call:
    """``call(x, 3, key=1)``: a call with positional and keyword arguments."""
    return Call(tuple(args), dict(kwargs))


def step(before: Callable[[], Any], *args: Any, **kwargs: Any) -> Call:
    """``step(change, x)``: run ``change()`` (it edits the program's own outside state: a global,
    a class attribute, a function's defaults), then call with ``x``."""
    return Call(tuple(args), dict(kwargs), before)


@dataclass
class Program:
    """Fresh state built by a case's factory.

    fn: the plain function. calls: the call sequence (``Call`` objects or tuples of positional
    arguments). observe: returns the outside state to compare after each call. target: what is
    given to ``ac.compile`` (default ``fn``; e.g. a bound method). compile_kwargs: extra keyword
    arguments for ``ac.compile`` (``fullgraph``, ``dynamic``). cleanup: run after the sequence,
    even when it failed. observe_compiled: for a documented difference from plain Python (the
    ``aot_eager``/``numba`` backends run a ``nonstrict_trace`` body at capture, as torch does),
    what the compiled run observes instead of ``observe()``, given the compiled function: it
    returns what ``observe()`` returns in the plain run when the documented rule holds.
    """

    fn: Callable
    calls: Sequence[Call | tuple]
    observe: Callable[[], Any] | None = None
    target: Callable | None = None
    compile_kwargs: dict = field(default_factory=dict)
    cleanup: Callable[[], Any] | None = None  # undoes global patches (math.pi, np.sum) at the end
    observe_compiled: Callable[[Any], Any] | None = None

    def call_list(self) -> list[Call]:
        return [c if isinstance(c, Call) else Call(tuple(c)) for c in self.calls]


@dataclass
class Case:
    """A named differential case: ``id`` is ``"group/name"``."""

    id: str
    group: str
    factory: Callable[[], Program]
    backends: tuple[str, ...] = BACKENDS
    timeout_s: float = DEFAULT_TIMEOUT_S
    note: str = ""


class CaseRegistry:
    """Collects the cases of one group: ``@CASES.case("name")`` on a factory."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.cases: list[Case] = []

    def case(self, name: str, *, backends: tuple[str, ...] = BACKENDS,
             timeout_s: float = DEFAULT_TIMEOUT_S, note: str = "") -> Callable:
        def register(factory: Callable[[], Program]) -> Callable[[], Program]:
            self.add(name, factory, backends=backends, timeout_s=timeout_s, note=note)
            return factory
        return register

    def add(self, name: str, factory: Callable[[], Program], **options: Any) -> Case:
        case_id = f"{self.group}/{name}"
        if any(c.id == case_id for c in self.cases):
            raise ValueError(f"duplicate case id {case_id}")
        case = Case(case_id, self.group, factory, **options)
        self.cases.append(case)
        return case

    def pure(self, name: str, fn: Callable, calls: Callable[[], Iterable[Call | tuple]],
             **options: Any) -> Case:
        """A stateless function: only the arguments are rebuilt for each run."""
        return self.add(name, lambda: Program(fn, list(calls())), **options)


# ----- snapshots: a comparable, detached description of a value --------------------------------

def type_name(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


_REF_TYPES = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType,
              types.MethodType, types.BuiltinMethodType, np.ufunc)


def snapshot(value: Any, _seen: set[int] | None = None, _depth: int = 0) -> tuple:
    """A detached tree ``(kind, type name, payload)`` that later mutations cannot change."""
    seen = set() if _seen is None else _seen
    tname = type_name(type(value))
    if _depth > 12:
        return ("deep", tname, None)
    if isinstance(value, enum.Enum):
        return ("enum", tname, value.name)
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ("objarray", tname, (value.shape, snapshot(value.tolist(), seen, _depth + 1)))
        return ("array", tname, (str(value.dtype), value.shape, np.array(value, copy=True)))
    if isinstance(value, np.generic):
        return ("npscalar", tname, (str(value.dtype), np.array(value)))
    if isinstance(value, (bool, int)):
        return ("int", tname, bool(value) if isinstance(value, bool) else int(value))
    if isinstance(value, float):
        return ("float", tname, float(value))
    if isinstance(value, complex):
        return ("complex", tname, complex(value))
    if value is None or isinstance(value, (str, bytes, range, slice, type(Ellipsis))):
        return ("atom", tname, value)
    if isinstance(value, _REF_TYPES):
        return ("ref", tname, getattr(value, "__qualname__", getattr(value, "__name__", "?")))
    if isinstance(value, np.dtype):
        return ("atom", tname, str(value))
    if isinstance(value, BaseException):
        return ("exc", tname, str(value))
    if id(value) in seen:
        return ("cycle", tname, None)
    seen = seen | {id(value)}
    if isinstance(value, (list, tuple)):
        return ("seq", tname, [snapshot(v, seen, _depth + 1) for v in value])
    if isinstance(value, dict):
        return ("dict", tname, [(snapshot(k, seen, _depth + 1), snapshot(v, seen, _depth + 1))
                                for k, v in value.items()])
    if isinstance(value, (set, frozenset)):
        return ("set", tname, sorted(repr(v) for v in value))
    if isinstance(value, bytearray):
        return ("atom", tname, bytes(value))
    if dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        attrs = vars(value) if hasattr(value, "__dict__") else {}
        return ("obj", tname, [(k, snapshot(v, seen, _depth + 1)) for k, v in attrs.items()])
    return ("opaque", tname, None)


def short_repr(value: Any, limit: int = 120) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 - repr of a user object may fail
        text = f"<unrepresentable {type(value).__name__}: {exc}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def describe(snap: tuple) -> str:
    """Snapshot as readable text: value and type."""
    kind, tname, payload = snap
    short = tname.replace("builtins.", "")
    if kind in ("int", "float", "complex", "atom", "enum", "ref", "exc"):
        return f"{payload!r} ({short})"
    if kind == "array":
        dtype, shape, values = payload
        return f"array {short_repr(values.tolist(), 80)} dtype={dtype} shape={shape}"
    if kind == "npscalar":
        return f"{payload[1].item()!r} ({short})"
    if kind in ("seq", "dict", "obj", "set"):
        return f"{short_repr(undescribe(snap), 100)} ({short})"
    return f"<{kind} {short}>"


def undescribe(snap: tuple) -> Any:
    """Rebuild a plain value from a snapshot (for messages only)."""
    kind, tname, payload = snap
    if kind == "seq":
        items = [undescribe(s) for s in payload]
        return tuple(items) if tname == "builtins.tuple" else items
    if kind == "dict":
        rebuilt = {}
        for k, v in payload:
            key = undescribe(k)
            try:
                hash(key)
            except TypeError:
                key = short_repr(key)
            rebuilt[key] = undescribe(v)
        return rebuilt
    if kind == "obj":
        return {k: undescribe(v) for k, v in payload}
    if kind == "array":
        return payload[2].tolist()
    if kind == "npscalar":
        return payload[1].item()
    return payload


def _float_diff(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    if a == 0.0 and b == 0.0:
        return math.copysign(1.0, a) != math.copysign(1.0, b)
    if math.isinf(a) or math.isinf(b) or a == 0.0 or b == 0.0:
        return a != b
    return not math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def _array_diff(a: np.ndarray, b: np.ndarray) -> str | None:
    if a.dtype.kind in "fc":
        tol = 1e-5 if a.dtype.itemsize <= 4 or a.dtype == np.complex64 else 1e-9
        try:
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True)
        except AssertionError:
            return "values"
        return None
    if not np.array_equal(a, b):
        return "values"
    return None


def compare(plain: tuple, compiled: tuple, path: str = "") -> str | None:
    """The first difference between two snapshots, as ``"what at path: plain ... vs compiled ..."``."""
    pk, pt, pp = plain
    ck, ct, cp = compiled
    where = path or "top level"
    if pt != ct or pk != ck:
        return f"type at {where}: plain {describe(plain)} vs compiled {describe(compiled)}"
    detail: str | None = None
    if pk == "array":
        (pd, ps, pv), (cd, cs, cv) = pp, cp
        if pd != cd:
            detail = "dtype"
        elif ps != cs:
            detail = "shape"
        else:
            detail = _array_diff(pv, cv)
    elif pk == "npscalar":
        detail = "dtype" if pp[0] != cp[0] else _array_diff(pp[1], cp[1])
    elif pk == "float":
        detail = "value" if _float_diff(pp, cp) else None
    elif pk == "complex":
        detail = "value" if (_float_diff(pp.real, cp.real) or _float_diff(pp.imag, cp.imag)) else None
    elif pk in ("seq", "set"):
        if len(pp) != len(cp):
            detail = "length"
        elif pk == "seq":
            for i, (a, b) in enumerate(zip(pp, cp)):
                inner = compare(a, b, f"{path}[{i}]")
                if inner:
                    return inner
        elif pp != cp:
            detail = "elements"
    elif pk in ("dict", "obj"):
        pkeys = [k for k, _ in pp]
        ckeys = [k for k, _ in cp]
        if pkeys != ckeys:
            detail = "keys" if pk == "dict" else "attributes"
        else:
            for (k, a), (_, b) in zip(pp, cp):
                label = f"[{short_repr(undescribe(k))}]" if pk == "dict" else f".{k}"
                inner = compare(a, b, f"{path}{label}")
                if inner:
                    return inner
    elif pk == "objarray":
        detail = "shape" if pp[0] != cp[0] else compare(pp[1], cp[1], path)
        if detail and detail != "shape":
            return detail
    elif pp != cp:
        detail = "value"
    if detail:
        return f"{detail} at {where}: plain {describe(plain)} vs compiled {describe(compiled)}"
    return None


# ----- identity ---------------------------------------------------------------------------------

def _tracked(value: Any) -> bool:
    """Mutable objects whose identity a caller can observe (``is``)."""
    if isinstance(value, (list, dict, set, bytearray, np.ndarray)):
        return True
    if isinstance(value, (_REF_TYPES, enum.Enum, BaseException, tuple, str, bytes, int, float)):
        return False
    return hasattr(value, "__dict__")


def _children(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(f"[{short_repr(k, 30)}]", v) for k, v in value.items()]
    if _tracked(value) and hasattr(value, "__dict__") and not isinstance(value, np.ndarray):
        return [(f".{k}", v) for k, v in vars(value).items()]
    return []


def _index(root: Any, path: str, table: dict[int, str], arrays: list[tuple[str, np.ndarray]],
           depth: int = 0) -> None:
    if depth > 6:
        return
    if _tracked(root):
        if id(root) in table:
            return
        table[id(root)] = path
        if isinstance(root, np.ndarray):
            arrays.append((path, root))
    for label, child in _children(root):
        _index(child, path + label, table, arrays, depth + 1)


def _shares(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=10_000))
    except np.exceptions.TooHardError:
        return bool(np.may_share_memory(a, b))


def identity_signature(result: Any, call_: Call, observed: Any) -> list[tuple[str, str]]:
    """For each mutable object in ``result``: which argument, observed object or earlier part of
    the result it is (``"new"`` when none); for a new array, which argument arrays it is a view
    of (it shares their memory: writing to it writes to them)."""
    known: dict[int, str] = {}
    arrays: list[tuple[str, np.ndarray]] = []
    for i, a in enumerate(call_.args):
        _index(a, f"args[{i}]", known, arrays)
    for k, v in call_.kwargs.items():
        _index(v, f"kwargs[{k!r}]", known, arrays)
    _index(observed, "observe()", known, arrays)
    signature: list[tuple[str, str]] = []
    seen_in_result: dict[int, str] = {}

    def walk(value: Any, path: str, depth: int) -> None:
        if depth > 6:
            return
        if _tracked(value):
            key = id(value)
            if key in known:
                signature.append((path, known[key]))
                return
            if key in seen_in_result:
                signature.append((path, "same object as " + seen_in_result[key]))
                return
            seen_in_result[key] = path
            views = [p for p, arr in arrays if isinstance(value, np.ndarray) and _shares(value, arr)]
            signature.append((path, f"new, a view of {', '.join(views)}" if views else "new"))
        for label, child in _children(value):
            walk(child, path + label, depth + 1)

    walk(result, "result", 0)
    return signature


# ----- running ----------------------------------------------------------------------------------

class CaseTimeout(BaseException):
    """The sequence ran past the case's time limit (a BaseException: fallbacks cannot catch it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class CallRecord:
    """What one call did."""

    outcome: tuple            # ("return", snapshot) or ("raise", type name, message)
    identity: list[tuple[str, str]]
    args_after: tuple         # (snapshot of args, snapshot of kwargs)
    observed: tuple
    stdout: str
    where: str = ""           # for an exception: the innermost frame (messages only)


def _innermost(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno} in {last.name}"


def run_calls(fn: Callable, program: Program) -> list[CallRecord]:
    """Run ``fn`` over the program's calls; one record per call."""
    try:
        return [_run_one(fn, program, c) for c in program.call_list()]
    finally:
        if program.cleanup is not None:
            program.cleanup()


def _run_one(fn: Callable, program: Program, c: Call) -> CallRecord:
    """One call: its outcome, identities, arguments after it, observed state and output."""
    if c.before is not None:
        c.before()
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with contextlib.redirect_stdout(out):
                result = fn(*c.args, **c.kwargs)
        except CaseTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001 - the exception is the observable
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            outcome = ("raise", type_name(type(exc)), str(exc))
            identity: list = []
            where = _innermost(exc)
        else:
            outcome = ("return", snapshot(result))
            where = ""
        observed = program.observe() if program.observe is not None else None
        if outcome[0] == "return":
            identity = identity_signature(result, c, observed)
        return CallRecord(outcome, identity, (snapshot(c.args), snapshot(c.kwargs)),
                          snapshot(observed), out.getvalue(), where)


@dataclass
class Difference:
    """The first observable that differs."""

    case_id: str
    backend: str
    call_index: int | None    # None: before any call (compile failed)
    n_calls: int
    call_text: str
    observable: str
    detail: str

    def message(self) -> str:
        if self.call_index is not None:
            at = f"call {self.call_index + 1} of {self.n_calls} {self.call_text}"
        else:
            at = "the compiled calls" if self.observable == "time" else "ac.compile"
        return f"{self.case_id} [{self.backend}] {at}: {self.observable} differs: {self.detail}"

    def short(self) -> str:
        at = f"call {self.call_index + 1}" if self.call_index is not None else \
            ("calls" if self.observable == "time" else "compile")
        return f"{at}: {self.observable}: {self.detail}"


def _outcome_text(record: CallRecord) -> str:
    if record.outcome[0] == "raise":
        where = f" at {record.where}" if record.where else ""
        return f"raised {record.outcome[1]}: {short_repr(record.outcome[2], 200)}{where}"
    return "returned " + describe(record.outcome[1])


def compare_records(plain: CallRecord, compiled: CallRecord) -> tuple[str, str] | None:
    """The first differing observable of one call: (observable, detail)."""
    if plain.outcome[0] != compiled.outcome[0]:
        return "outcome", f"plain {_outcome_text(plain)} vs compiled {_outcome_text(compiled)}"
    if plain.outcome[0] == "raise":
        if plain.outcome[1:] != compiled.outcome[1:]:
            return "exception", f"plain {_outcome_text(plain)} vs compiled {_outcome_text(compiled)}"
    else:
        diff = compare(plain.outcome[1], compiled.outcome[1], "result")
        if diff:
            return "return value", diff
    if plain.stdout != compiled.stdout:
        return "stdout", f"plain {plain.stdout!r} vs compiled {compiled.stdout!r}"
    if plain.identity != compiled.identity:
        diffs = [f"{p[0]}: plain {p[1]} vs compiled {c[1]}"
                 for p, c in zip(plain.identity, compiled.identity) if p != c]
        detail = "; ".join(diffs) or f"plain {plain.identity} vs compiled {compiled.identity}"
        return "identity", detail
    for label, p_snap, c_snap in zip(("args", "kwargs"), plain.args_after, compiled.args_after):
        diff = compare(p_snap, c_snap, label)
        if diff:
            return "arguments after the call", diff
    diff = compare(plain.observed, compiled.observed, "observe()")
    if diff:
        return "observed state", diff
    return None


def entry_kinds(compiled_fn: Any) -> list[str]:
    """How each cache entry of a compiled function runs: "graph", "split" or "eager"."""
    kinds = []
    for entry in getattr(compiled_fn, "entries", []):
        if getattr(entry, "pieces", None):
            kinds.append("split")
        elif getattr(entry, "graph", None) is not None:
            kinds.append("graph")
        else:
            kinds.append("eager")
    return kinds


def run_case(case: Case, backend: str, stats: dict | None = None) -> Difference | None:
    """Run one case plain and compiled with ``backend``; the first difference, or None.
    ``stats`` (optional) receives ``"entries"``: the kinds of the compiled function's entries."""
    plain_program = case.factory()
    texts = [c.describe() for c in plain_program.call_list()]
    n = len(texts)
    with time_limit(case.timeout_s):
        plain = run_calls(plain_program.fn, plain_program)
    program = case.factory()
    target = program.target if program.target is not None else program.fn
    try:
        compiled_fn = ac.compile(target, backend=backend, **program.compile_kwargs)
    except Exception as exc:  # noqa: BLE001 - a compile that raises is a difference
        return Difference(case.id, backend, None, n, "", "compile",
                          f"ac.compile raised {type_name(type(exc))}: {short_repr(str(exc), 200)}")
    if program.observe_compiled is not None:
        rule = program.observe_compiled
        program.observe = lambda: rule(compiled_fn)
    try:
        with time_limit(case.timeout_s):
            compiled = run_calls(compiled_fn, program)
        if stats is not None:
            stats["entries"] = entry_kinds(compiled_fn)
    except CaseTimeout as exc:
        return Difference(case.id, backend, None, n, "", "time",
                          f"the compiled call sequence {exc} (plain: instant)")
    for index, (p, c) in enumerate(zip(plain, compiled)):
        found = compare_records(p, c)
        if found:
            return Difference(case.id, backend, index, n, texts[index], *found)
    return None


def check_case(case: Case, backend: str) -> None:
    """Assert no difference (for pytest)."""
    difference = run_case(case, backend)
    if difference is not None:
        raise AssertionError(difference.message())
