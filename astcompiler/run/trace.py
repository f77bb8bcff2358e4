"""The compile trace: each compile recorded as files under ``config.trace_dir``
(``ASTCOMPILER_TRACE_DIR``), read back by ``astcompiler report DIR`` (``astcompiler/report``).

One compile is ``DIR/<pid>-<n>-<function>/``: ``compile.json`` (function, file:line, inputs,
stance, guards, graph, graph break, recompile reasons, timings per phase) and the artefacts as
text files next to it (``guards.py``, ``graph.py``, ``output_code.py``, ``run_code.py``,
``rewritten.py``, ``source.py``: the user's file). A call that hits ``config.recompile_limit``
is ``DIR/<pid>-<n>-<function>/limit_hit.json`` (the guards that failed, what happened next:
the plain function ran, or FailOnRecompileLimitHit was raised), once per compiled function.
Names are unique per process (pid + a counter
under a lock), every file is written atomically (a temporary name, then ``os.replace``) and
``compile.json`` is written last: a folder without it is a compile still being written.

Nothing here is global but the counter: the directory is read from ``config`` at each compile
(per thread under ``config.patch``). A failure to write warns once and never fails the call.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import re
import threading
import time
import warnings
from typing import Any, Callable

from ..config import config
from ..source.loading import atomic_write

FORMAT = 1  # compile.json's "format": bumped when a field changes meaning
ARTEFACTS = {  # CacheEntry attribute -> file name
    "guards": "guards.py", "graph_code": "graph.py", "output_code": "output_code.py",
    "run_code": "run_code.py", "rewritten_code": "rewritten.py", "split_code": "split.py",
}
_COUNTER = itertools.count()
_COUNTER_LOCK = threading.Lock()
_WARNED: set[str] = set()


def trace_dir() -> str:
    """The directory compiles are recorded in now ("" when tracing is off)."""
    return config.trace_dir or ""


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (``source/loading.atomic_write``)."""
    atomic_write(path, text.encode("utf-8"))


def _next_name(fn: Callable) -> str:
    with _COUNTER_LOCK:
        number = next(_COUNTER)
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", getattr(fn, "__qualname__", "fn")).strip("_") or "fn"
    return f"{os.getpid()}-{number:04d}-{stem[:60]}"


def describe_value(value: Any) -> dict[str, Any]:
    """The type of an input, and for arrays their dtype and shape."""
    described: dict[str, Any] = {"type": f"{type(value).__module__}.{type(value).__qualname__}"
                                 if type(value).__module__ != "builtins" else type(value).__name__}
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        described["dtype"] = str(dtype)
        described["shape"] = [int(d) for d in shape]
    elif isinstance(value, (bool, int, float, complex, str)) or value is None:
        described["value"] = repr(value)[:80]
    return described


def _inputs(fn: Callable, args: tuple, kwargs: dict, graph: Any) -> list[dict[str, Any]]:
    """Each bound parameter, with the dims the graph keeps symbolic (dynamic)."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        items = list(bound.arguments.items())
    except (TypeError, ValueError):
        items = [(f"arg{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    symbolic: dict[str, list[int]] = {}
    for node in getattr(graph, "placeholders", []) if graph is not None else []:
        shape = getattr(node.meta, "shape", None) or ()
        dims = [i for i, d in enumerate(shape) if not isinstance(d, int)]
        if dims:
            symbolic[str(node.target)] = dims
    inputs = []
    for name, value in items:
        record = {"name": name, **describe_value(value)}
        record["dynamic_dims"] = symbolic.get(f"L[{name!r}]", [])
        if record["dynamic_dims"] and "shape" in record:
            record["shape_symbolic"] = [str(d) for d in _placeholder_shape(graph, name)]
        inputs.append(record)
    return inputs


def _placeholder_shape(graph: Any, name: str) -> tuple:
    for node in graph.placeholders:
        if str(node.target) == f"L[{name!r}]":
            return tuple(node.meta.shape)
    return ()


def graph_record(graph: Any) -> list[dict[str, Any]]:
    """The graph IR as plain data: one record per node (name, op, target, inputs, meta)."""
    if graph is None:
        return []
    nodes = []
    for node in graph.nodes:
        meta = node.meta.short() if node.meta is not None else ""
        nodes.append({"name": node.name, "op": node.op, "target": str(node.target),
                      "inputs": [n.name for n in node.all_input_nodes()], "meta": meta,
                      "origin": node.origin or ""})
    return nodes


def break_record(error: Any) -> dict[str, Any] | None:
    """A graph break: its reason and the user's frames (file, line, text), innermost last."""
    if error is None:
        return None
    stack = [{"file": str(f), "line": int(l), "text": str(t or "").strip()}
             for f, l, t in getattr(error, "user_stack", [])]
    return {"reason": str(getattr(error, "reason", error)), "hint": getattr(error, "hint", None),
            "user_stack": stack}


def _source_of(fn: Callable) -> tuple[str, int, str]:
    code = getattr(fn, "__code__", None)
    if code is None:
        return "?", 0, ""
    try:
        with open(code.co_filename, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        text = ""
    return code.co_filename, code.co_firstlineno, text


def record_compile(fn: Callable, title: str, entry: Any, args: tuple, kwargs: dict, *,
                   index: int, recompile_reasons: list[str], stance: str,
                   started: float) -> str | None:
    """Record one compile (``entry``, the ``index``-th of ``fn``) under ``trace_dir()``;
    returns its folder, or None when tracing is off or writing failed (warned once)."""
    root = trace_dir()
    if not root:
        return None
    try:
        return _write(root, fn, title, entry, args, kwargs, index, recompile_reasons, stance,
                      started)
    except Exception as error:  # noqa: BLE001 - recording never fails the user's call
        if root not in _WARNED:
            _WARNED.add(root)
            warnings.warn(f"astcompiler: cannot record the compile trace in {root!r} "
                          f"({type(error).__name__}: {error}); set astcompiler.config.trace_dir "
                          "(or ASTCOMPILER_TRACE_DIR) to a writable directory", RuntimeWarning,
                          stacklevel=2)
        return None


def _write(root: str, fn: Callable, title: str, entry: Any, args: tuple, kwargs: dict,
           index: int, reasons: list[str], stance: str, started: float) -> str:
    folder = os.path.join(root, _next_name(fn))
    os.makedirs(folder, exist_ok=False)
    artefacts: dict[str, str] = {}
    for attribute, name in ARTEFACTS.items():
        text = getattr(entry, attribute, "") or ""
        if text:
            write_atomic(os.path.join(folder, name), text)
            artefacts[attribute] = name
    kernels = []
    for path in getattr(entry, "files", []) or []:
        base = os.path.basename(path)
        if "/kernels/" in path.replace(os.sep, "/") and base.endswith(".py"):  # wrapper, kernels
            try:
                with open(path, encoding="utf-8") as handle:
                    write_atomic(os.path.join(folder, base), handle.read())
                kernels.append(base)
            except OSError:
                continue
    filename, line, source = _source_of(fn)
    if source:
        write_atomic(os.path.join(folder, "source.py"), source)
        artefacts["source"] = "source.py"
    graph = getattr(entry, "graph", None)
    record = {
        "format": FORMAT, "function": getattr(fn, "__qualname__", str(fn)), "title": title,
        "file": filename, "line": line, "pid": os.getpid(), "index": index,
        "started": started, "recorded": time.time(),
        "kind": _kind(entry), "stance": stance, "inputs": _inputs(fn, args, kwargs, graph),
        "guards": getattr(entry, "guards", "") or "",
        "graph": graph_record(graph), "op_count": graph.op_count() if graph is not None else 0,
        "graph_break": break_record(getattr(entry, "break_reason", None)),
        "recompile_reasons": list(reasons),
        "pieces": [getattr(p, "title", str(p)) for p in getattr(entry, "pieces", []) or []],
        "phases": {k: float(v) for k, v in (getattr(entry, "phases", {}) or {}).items()},
        "compile_time": float(getattr(entry, "compile_time", 0.0)),
        "first_call_time": float(getattr(entry, "first_call_time", 0.0)),
        "loaded_from": getattr(entry, "loaded_from", "") or "",
        "artefacts": artefacts, "kernels": kernels,
    }
    write_atomic(os.path.join(folder, "compile.json"), json.dumps(record, indent=1))
    return folder


LIMIT_FILE = "limit_hit.json"  # a recompile-limit hit's record (no compile.json beside it)


def record_limit_hit(fn: Callable, title: str, args: tuple, kwargs: dict, *, limit: int,
                     entries: int, reasons: list[str], outcome: str) -> str | None:
    """Record that ``fn`` hit ``config.recompile_limit`` (``entries`` entries, none of whose
    guards these inputs pass: ``reasons``, one per entry) and what happened next (``outcome``:
    ``"eager"``, the call ran the plain function, or ``"raised"``, FailOnRecompileLimitHit);
    returns its folder, or None when tracing is off or writing failed (warned once)."""
    root = trace_dir()
    if not root:
        return None
    try:
        folder = os.path.join(root, _next_name(fn))
        os.makedirs(folder, exist_ok=False)
        filename, line, _ = _source_of(fn)
        record = {
            "format": FORMAT, "function": getattr(fn, "__qualname__", str(fn)), "title": title,
            "file": filename, "line": line, "pid": os.getpid(), "recorded": time.time(),
            "limit": limit, "entries": entries, "failed_guards": list(reasons),
            "outcome": outcome, "inputs": _inputs(fn, args, kwargs, None),
        }
        write_atomic(os.path.join(folder, LIMIT_FILE), json.dumps(record, indent=1))
        return folder
    except Exception as error:  # noqa: BLE001 - recording never fails the user's call
        if root not in _WARNED:
            _WARNED.add(root)
            warnings.warn(f"astcompiler: cannot record the compile trace in {root!r} "
                          f"({type(error).__name__}: {error})", RuntimeWarning, stacklevel=2)
        return None


def load_limit_hits(root: str) -> list[dict[str, Any]]:
    """Every recompile-limit hit recorded under ``root``, in the order they were recorded."""
    hits = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, LIMIT_FILE)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                hits.append({**json.load(handle), "folder": os.path.join(root, name)})
    hits.sort(key=lambda r: (r.get("recorded", 0.0), r["folder"]))
    return hits


def _kind(entry: Any) -> str:
    if getattr(entry, "pieces", None):
        return "split"
    if getattr(entry, "loaded_from", ""):
        return "loaded"
    return "eager" if getattr(entry, "graph", None) is None else "graph"


def load_trace(root: str) -> list[dict[str, Any]]:
    """Every complete compile record under ``root``, in the order they started."""
    records = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "compile.json")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
        record["folder"] = os.path.join(root, name)
        records.append(record)
    records.sort(key=lambda r: (r.get("started", 0.0), r["folder"]))
    return records
