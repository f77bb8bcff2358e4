"""The persistent entry cache (warm start): a new process runs a function it compiled before
without source, rewrite or capture, and without importing libcst or sympy.

After an entry's first run, ``save`` writes it under ``<cache_dir>/entries/<name>_<key>/``:

- ``entry_<hash>.py``: generated Python that finds again, in a new process, every object the
  entry's guard, run code and wrapper refer to (modules by name, functions and classes by module
  and qualified name, dtypes, the function's globals and closure cells), one line per object;
- ``facts_<hash>.pickle``: the guard facts, read only to explain a failing guard (recompile
  logs, automatic dynamic shapes), with the same objects pickled as those expressions;
- ``<position>_<hash>.json``, the **manifest**, written last (atomically): the key, the
  dynamic-shape policy of the compile, the content hash of every file the entry runs (the guard,
  run and wrapper modules, the kernel modules numba caches), fingerprints of the user functions,
  code objects and classes it relied on, and the texts ``ac.show`` prints.

The **key** (``function_key``) covers what a compile depends on besides the guarded inputs: the
function's code (a fingerprint of its code object: bytecode, constants, names, line table),
its module and qualified name, the backend, ``fullgraph``/``dynamic``/``options``, the settings
of ``ac.config`` that shape code, the astcompiler sources (size and mtime of every file), and the
versions of Python, NumPy and numba. Every other function the entry inlined or called is checked
by fingerprint when the entry loads; globals, sizes and dtypes are re-checked by the guard itself
on every call.

``load`` is tried on a miss before compiling: it reads the manifests of the key whose policy is
the current one, verifies every file against its hash (a file that does not match is never
executed: the entry is refused and the function compiles as usual, overwriting it), imports the
entry module, finds the objects again, checks fingerprints, runs the guard on the actual inputs,
and only then imports the kernels and the wrapper. A loaded entry joins ``compiled.entries``
like a compiled one (recompile limit, stances, automatic dynamic shapes: a dynamic-size entry
serves new sizes).

Persisted: entries whose graph the numba backend lowered as kernels plus a wrapper, or as one
structured loop function (``lower/numba/rebuild.py``), whose graph changes nothing outside it
(no replayed side effects, no writes to inputs, no user Python at run time: then an error of the
graph makes the run code run the original function, which is exact), and entries that run the
original function because nothing of the graph compiled. Not persisted: split entries (graph
breaks), eager fallbacks, graphs lowered piece by piece (host loops), other backends, entries
with constants that cannot be found again by name (arrays, instances, local functions).

A key compiled in this process is never loaded from disk again in it (in-process behaviour is
that of a cold cache). ``clear()`` removes the entries (``rm -r <cache_dir>/entries`` does too).
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import json
import math
import os
import pickle
import re
import shutil
import sys
import threading
import time
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..config import config, usable_cache_dir
from ..guards.codegen import GuardFunction, copy_defaults, guard_display_source, literal_code
from ..logs import get_logger
from ..source.loading import atomic_write, load_generated_module, make_private_dirs, \
    verified_source, write_generated_file
from .run_functions import name_run_functions, note_once
from .sentinels import MISS

FORMAT = 1
ENTRIES = "entries"
# settings that only steer dispatch, logging or where files go: not part of the key
_DISPATCH_SETTINGS = {"cache_dir", "verbose", "persistent_cache", "recompile_limit",
                      "fail_on_recompile_limit_hit", "error_on_recompile",
                      "slow_compile_notice_s"}  # not part of what is compiled
STATS = {"loaded": 0, "saved": 0, "refused": 0, "missed": 0}  # counters, for tests and users
_COMPILED_KEYS: set[str] = set()  # keys compiled in this process: never loaded again here
_LOCK = threading.Lock()
_log = get_logger("compile")


class RunOriginal(Exception):
    """Raised by a loaded entry's graph when it cannot run a call (numba could not compile a
    kernel for new argument types, or NumPy must report floating-point errors): the entry's run
    code then runs the original function, which is exact (persisted graphs change nothing)."""


# ----- the key -------------------------------------------------------------------------------

def _const_text(value: Any) -> str:
    """A constant of a code object as text, the same in every process (sets sorted)."""
    if isinstance(value, frozenset):
        return "frozenset(" + repr(sorted(_const_text(v) for v in value)) + ")"
    if isinstance(value, tuple):
        return "(" + ",".join(_const_text(v) for v in value) + ")"
    return f"{type(value).__name__}:{value!r}"


def _hash_code(code: types.CodeType, h: Any) -> None:
    h.update(code.co_code)
    h.update(code.co_linetable)
    h.update(code.co_exceptiontable)
    h.update(repr((code.co_name, code.co_qualname, code.co_filename, code.co_firstlineno,
                   code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                   code.co_flags, code.co_names, code.co_varnames, code.co_freevars,
                   code.co_cellvars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _hash_code(const, h)
        else:
            h.update(_const_text(const).encode())


def code_fingerprint(code: types.CodeType) -> str:
    """A hash of everything in a code object (its source edited, even a line moved: another)."""
    h = hashlib.sha256()
    _hash_code(code, h)
    return h.hexdigest()[:32]


def fingerprint(value: Any) -> str | None:
    """What identifies a user function, code object or class across processes; None for other
    objects (modules, NumPy's functions, dtypes: the versions in the key cover them)."""
    if isinstance(value, types.FunctionType):
        return code_fingerprint(value.__code__)
    if isinstance(value, types.CodeType):
        return code_fingerprint(value)
    if isinstance(value, type) and value.__module__ not in ("builtins", "numpy"):
        h = hashlib.sha256(repr([c.__module__ + "." + c.__qualname__ for c in value.__mro__])
                           .encode())
        for name, member in sorted(vars(value).items(), key=lambda item: item[0]):
            member = getattr(member, "__func__", getattr(member, "fget", member))
            code = getattr(member, "__code__", None)
            mark = code_fingerprint(code) if isinstance(code, types.CodeType) \
                else type(member).__name__
            h.update(f"{name}={mark};".encode())
        return h.hexdigest()[:32]
    return None


def mark_of(value: Any) -> str | None:
    """What is checked again when a persisted entry loads: a fingerprint, or a function's
    defaults as a literal (their identity is guarded; the values come from the module's code)."""
    if type(value) is tuple or (type(value) is dict and "__name__" not in value):
        return fingerprint_literal(value)
    return fingerprint(value)


_PACKAGE_DIGEST: list[str] = []


def package_digest() -> str:
    """The content of every astcompiler source file (an edited compiler: another key), or
    ``$ASTCOMPILER_BUILD_ID`` when set (the tests pin it while the tree they run from is being
    edited). Contents, not mtimes: two installs of the same sources (two workers' venvs, a
    re-install, a copied tree) share one persistent cache."""
    pinned = os.environ.get("ASTCOMPILER_BUILD_ID")
    if pinned:
        return "build:" + pinned
    if not _PACKAGE_DIGEST:
        _PACKAGE_DIGEST.append(digest_of_tree(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))))
    return _PACKAGE_DIGEST[0]


def digest_of_tree(root: str) -> str:
    """sha256 of the relative path and bytes of every ``.py`` file under ``root`` (10-15 ms for
    astcompiler's sources, once per process; ``__pycache__`` left out)."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, "rb") as source:
                    data = source.read()
                h.update(f"{os.path.relpath(path, root)}:{len(data)};".encode())
                h.update(data)
    return h.hexdigest()[:32]


def _versions() -> str:
    import numba  # the persisted kernels need it anyway
    from .. import __version__
    return f"py{sys.version.split()[0]} numpy{np.__version__} numba{numba.__version__} " \
           f"astcompiler{__version__}/{package_digest()}"


def function_key(fn: Any, backend: Any, fullgraph: bool, dynamic: Any, options: dict) -> str | None:
    """The key of ``fn``'s entries, or None when they are not persisted (a backend other than
    numba, a function without code, the setting off)."""
    if not config.persistent_cache or backend != "numba" \
            or not isinstance(fn, types.FunctionType):
        return None
    settings = {k: v for k, v in config.as_dict().items() if k not in _DISPATCH_SETTINGS}
    numba_env = sorted((k, v) for k, v in os.environ.items() if k.startswith("NUMBA_"))
    text = repr((FORMAT, _versions(), fn.__module__, fn.__qualname__, code_fingerprint(fn.__code__),
                 backend, fullgraph, dynamic, sorted((options or {}).items()), settings, numba_env))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def policy_key(policy: Any) -> str:
    """The dynamic-shape decisions a compile starts from (an entry serves only the same)."""
    fields = {k: (sorted((s, sorted(d)) for s, d in v.items()) if isinstance(v, dict) else v)
              for k, v in sorted(vars(policy).items())}
    return hashlib.sha256(repr(fields).encode()).hexdigest()[:16]


def _entries_dir(fn: Any, key: str) -> str:
    name = re.sub(r"\W+", "_", fn.__qualname__).strip("_")[:40] or "fn"
    return os.path.join(usable_cache_dir(), ENTRIES, f"{name}_{key}")


def _markers_in_use() -> bool:
    """Arrays marked dynamic anywhere in the process: captures read the markers, so they compile."""
    from ..capture.sizes.dynamic import MARKERS
    return len(MARKERS) > 0


# ----- finding objects again ----------------------------------------------------------------

def _module(name: str) -> types.ModuleType:
    """A module the process has imported (never imported here: no side effects; one that is
    not loaded yet makes the entry a miss)."""
    return sys.modules[name]


def _attr(module: str, qualname: str) -> Any:
    value: Any = _module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def _scope(fn: Any) -> dict[str, Any]:
    return {"___fn": fn, "___module": _module, "___attr": _attr, "___dtype": np.dtype,
            "__builtins__": {"float": float, "complex": complex, "vars": vars}}


class Finder:
    """Python expressions that find objects again in a new process, checked here: an expression
    is kept only when evaluating it now gives back the very object (or an equal dtype)."""

    def __init__(self, fn: types.FunctionType, candidates: list[Any]) -> None:
        self.fn = fn
        self.scope = _scope(fn)
        self.functions = [fn] + [c for c in candidates if isinstance(c, types.FunctionType)]
        self.fingerprints: dict[str, str] = {}  # expression -> fingerprint of its object

    def expr(self, value: Any) -> str | None:
        text = self._expr(value)
        if text is None:
            return None
        try:
            found = eval(text, self.scope)  # noqa: S307 - expressions written just above
        except Exception:  # noqa: BLE001
            return None
        if isinstance(value, np.dtype):
            ok = type(found) is type(value) and found == value
        elif isinstance(value, (int, float, complex, str, bytes)) and not isinstance(value, bool):
            ok = type(found) is type(value) and (found == value or value != value)
        else:
            ok = found is value
        if not ok:
            return None
        mark = mark_of(value)
        if mark is not None:
            self.fingerprints[text] = mark
        return text

    def _expr(self, value: Any) -> str | None:
        fn = self.fn
        if value is fn:
            return "___fn"
        if value is fn.__globals__:
            return "___fn.__globals__"
        if isinstance(value, types.ModuleType):
            return f"___module({value.__name__!r})"
        if isinstance(value, np.dtype):
            return f"___dtype({value.str!r})" if value.names is None and value.subdtype is None \
                else None
        if type(value) is float and not math.isfinite(value):
            return f"float({str(value)!r})"
        literal = literal_code(value)
        if literal is not None and type(value) is not tuple:
            return literal
        if value is Ellipsis:
            return "..."
        if type(value) is dict and isinstance(value.get("__name__"), str):
            module = sys.modules.get(value["__name__"])
            if module is not None and vars(module) is value:
                return f"vars(___module({value['__name__']!r}))"
        for function in self.functions:
            owner = self._named(function)
            if owner is None:
                continue
            if value is function.__code__:
                return f"{owner}.__code__"
            if value is function.__defaults__ or value is function.__kwdefaults__:
                which = "__defaults__" if value is function.__defaults__ else "__kwdefaults__"
                return f"{owner}.{which}" if fingerprint_literal(value) is not None else None
            for index, cell in enumerate(function.__closure__ or ()):
                if value is cell:
                    return f"{owner}.__closure__[{index}]"
        if isinstance(value, types.CodeType):
            return self._code(value)
        return self._named(value)

    def _named(self, value: Any) -> str | None:
        if value is self.fn:
            return "___fn"
        if isinstance(value, enum.Enum):
            module = type(value).__module__
            qualname = f"{type(value).__qualname__}.{value.name}"
        else:
            module = getattr(value, "__module__", None)
            qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
            return None
        return f"___attr({module!r}, {qualname!r})"

    def _code(self, code: types.CodeType) -> str | None:
        """A code object as the ``__code__`` of the function its qualified name names, in the
        module of one of the functions involved."""
        modules = {getattr(f, "__module__", None) for f in self.functions}
        for module in sorted(m for m in modules if isinstance(m, str)):
            text = f"___attr({module!r}, {code.co_qualname!r}).__code__"
            try:
                if eval(text, self.scope) is code:  # noqa: S307
                    return text
            except Exception:  # noqa: BLE001
                continue
        return None


def fingerprint_literal(value: Any) -> str | None:
    """A function's defaults as text: literals, and enum members, functions and classes by
    name (the guard checks whatever the code read of them); None for anything else."""
    if value is None:
        return "None"
    items = sorted(value.items(), key=repr) if type(value) is dict else \
        list(enumerate(value)) if type(value) is tuple else None
    if items is None:
        return None
    parts = [_default_mark(v) for _, v in items]
    return None if None in parts else repr([(k, p) for (k, _), p in zip(items, parts)])


def _default_mark(value: Any) -> str | None:
    literal = literal_code(value) if type(value) is not tuple else fingerprint_literal(value)
    if literal is not None:
        return literal
    if isinstance(value, enum.Enum):
        return f"{type(value).__module__}.{type(value).__qualname__}.{value.name}"
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{module}.{qualname}:{fingerprint(value)}"
    return None


def _table(finder: Finder, namespace: dict[str, Any], skip: set[str]) -> dict[str, str] | None:
    table = {}
    for name, value in namespace.items():
        if name in skip:
            continue
        text = finder.expr(value)
        if text is None:
            _log.debug("not persisted: %s (%s) cannot be found again by name", name,
                       type(value).__name__)
            return None
        table[name] = text
    return table


class _FactsPickler(pickle.Pickler):
    """Facts with modules, functions, code objects, cells and globals as finder expressions."""

    def __init__(self, file: Any, finder: Finder) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.finder = finder

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, (types.ModuleType, types.FunctionType, types.CodeType,
                            types.CellType)) or (type(obj) is dict and "__name__" in obj):
            text = self.finder.expr(obj)
            if text is None:
                raise pickle.PicklingError(f"cannot persist {type(obj).__name__} {obj!r:.60}")
            return text
        return None


class _FactsUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, scope: dict[str, Any]) -> None:
        super().__init__(file)
        self.scope = scope

    def persistent_load(self, pid: Any) -> Any:
        return eval(pid, self.scope)  # noqa: S307 - from a pickle verified against its hash


# ----- writing ---------------------------------------------------------------------------

@dataclass
class Pending:
    """What ``save`` needs besides the entry: its key, policy and position."""

    fn: types.FunctionType
    key: str
    policy: str
    position: int
    title: str


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _relative(path: str, root: str) -> str | None:
    path = os.path.abspath(path)
    return os.path.relpath(path, root) if path.startswith(root + os.sep) else None


def _entry_module(title: str, tables: dict[str, Any]) -> str:
    lines = [f"# {title}",
             "# Persistent cache entry generated by astcompiler: every object the entry's guard,",
             "# run code and wrapper use, found again by name in a new process. The manifest",
             "# beside this file checks the user functions among them by fingerprint.", ""]
    for section, table in tables.items():
        lines.append("")
        lines.append(f"def {section}(___fn, ___module, ___attr, ___dtype):")
        if isinstance(table, list):
            lines.append("    return [")
            lines += [f"        {text}," for text in table]
            lines.append("    ]")
        else:
            lines.append("    return {")
            lines += [f"        {name!r}: {text}," for name, text in table.items()]
            lines.append("    }")
    return "\n".join(lines) + "\n"


_SPECIAL_RUN = {"___compiled", "___MISS", "___original", "___note"}


def save(entry: Any, pending: Pending) -> str | None:
    """Write ``entry`` (after its first run) to the persistent cache; returns the manifest's
    path, or None when the entry is not persisted (see the module's docstring). Never raises."""
    blueprint, entry.blueprint = entry.blueprint, None
    if blueprint is None or entry.guard.path is None:
        return None
    try:
        return _save(entry, blueprint[:2], pending)
    except Exception as error:  # noqa: BLE001 - the cache must never break a call
        _log.debug("entry of %s not persisted (%s: %s)", pending.title, type(error).__name__,
                   error, exc_info=True)
        return None


def _save(entry: Any, blueprint: tuple, pending: Pending) -> str | None:
    code, compiled = blueprint
    rebuild = getattr(compiled, "rebuild", None) if code is not None else None
    if code is not None and (rebuild is None or rebuild.failed()):
        return None  # nothing to rebuild from files, or numba failed on its first run
    root = os.path.abspath(usable_cache_dir())
    guard = entry.guard
    candidates = list(guard.namespace.values()) + (list(code.namespace.values()) if code else [])
    finder = Finder(pending.fn, candidates)
    trees = {name for name in guard.namespace if name.startswith("____tree_")}  # the guard's own
    tables: dict[str, Any] = {"guard_objects": _table(finder, guard.namespace, trees)}
    files = {"guard": guard.path}
    lowering: dict[str, Any] = {}
    if code is not None:
        tables["run_objects"] = _table(finder, code.namespace, _SPECIAL_RUN | set(guard.namespace))
        tables["lowering_objects"] = [finder.expr(value) for value in rebuild.consts]
        fixes = getattr(rebuild, "fixes", [])  # structured: how outputs are restored
        tables["fix_objects"] = [finder.expr(spec[1] if len(spec) > 1 else None) for spec in fixes]
        files["run"] = code.path
        lowering = {"kind": rebuild.kind, "fixes": [spec[0] for spec in fixes],
                    "settings": rebuild.settings(lambda path: _relative(path, root)),
                    "files": [_relative(path, root) for path in rebuild.files()]}
    if any(t is None or (isinstance(t, list) and None in t) for t in tables.values()):
        return None  # an object that cannot be found again by name
    buffer = _pickle_facts(guard.facts, finder)
    if buffer is None:
        return None
    relative = {name: _relative(path, root) for name, path in files.items()}
    if None in relative.values() or None in lowering.get("files", ()):
        return None  # a file outside the cache directory
    directory = _entries_dir(pending.fn, pending.key)
    entry_path = write_generated_file(directory, "entry", _entry_module(pending.title, tables))
    facts_path = os.path.join(directory, f"facts_{_sha(buffer)[:12]}.pickle")
    if not os.path.exists(facts_path):
        make_private_dirs(directory)
        atomic_write(facts_path, buffer)
    relative.update(entry=_relative(entry_path, root), facts=_relative(facts_path, root))
    hashes = {}
    for path in list(relative.values()) + lowering.get("files", []):
        full = os.path.join(root, path)
        try:  # a generated module is hashed only as the text its name promises (not tampered)
            data = verified_source(full).encode() if path.endswith(".py") else None
        except OSError:
            return None
        if data is None:
            with open(full, "rb") as handle:
                data = handle.read()
        hashes[path] = _sha(data)
    manifest = {
        "format": FORMAT, "key": pending.key, "policy": pending.policy,
        "position": pending.position, "title": pending.title,
        "kind": "graph" if code is not None else "original", "files": relative,
        "lowering": lowering, "hashes": hashes, "fingerprints": finder.fingerprints,
        "params": guard.params, "condition": guard.condition,
        "texts": {name: getattr(entry, name) for name in
                  ("rewritten_code", "graph_code", "output_code", "run_code")},
        "compile_time": entry.compile_time, "saved": time.time(),
    }
    data = json.dumps(manifest, indent=1, sort_keys=True).encode()
    same = json.dumps([manifest[k] for k in ("policy", "files", "lowering", "hashes")]).encode()
    path = os.path.join(directory, f"{pending.position:03d}_{_sha(same)[:12]}.json")  # one name
    # for one entry: processes writing it at once replace each other's copy
    atomic_write(path, data)  # last: a reader finds a manifest only once all its files exist
    with _LOCK:
        STATS["saved"] += 1
    _log.info("entry %d of %s written to the persistent cache: %s", pending.position,
              pending.title, path)
    return path


def _pickle_facts(facts: list, finder: Finder) -> bytes | None:
    import io
    buffer = io.BytesIO()
    try:
        _FactsPickler(buffer, finder).dump(list(facts))
    except Exception as error:  # noqa: BLE001 - an object without a name: not persisted
        _log.debug("guard facts not persisted (%s: %s)", type(error).__name__, error)
        return None
    return buffer.getvalue()


# ----- loading ---------------------------------------------------------------------------

class LoadedGuard(GuardFunction):
    """The guard of a loaded entry: the generated check runs at once; its facts (sympy
    relations among them) are unpickled only when a failure must be explained."""

    def __init__(self, load_facts: Callable[[], list], **fields: Any) -> None:
        self._load_facts: Callable[[], list] | None = load_facts
        self._facts: list | None = None
        super().__init__(facts=None, **fields)  # type: ignore[arg-type]

    @property  # type: ignore[override]
    def facts(self) -> list:
        if self._facts is None and self._load_facts is not None:
            loader, self._load_facts = self._load_facts, None
            self._facts = loader()
        return self._facts if self._facts is not None else []

    @facts.setter
    def facts(self, value: list | None) -> None:
        self._facts = value


class Refused(Exception):
    """A persisted entry that must not be used (its files do not match its manifest)."""


def _read_verified(root: str, relative: str, hashes: dict[str, str]) -> bytes:
    path = os.path.join(root, relative)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise Refused(f"{relative} cannot be read ({error.strerror})") from None
    if _sha(data) != hashes.get(relative):
        raise Refused(f"{relative} does not match the hash in the manifest")
    return data


def lookup_key(fn: Any, backend: Any, fullgraph: bool, dynamic: Any, options: dict,
               policy: Any) -> tuple[str, str] | None:
    """(key, policy key) for a compile of ``fn`` that may be loaded or saved, else None."""
    try:
        key = function_key(fn, backend, fullgraph, dynamic, options)
    except Exception:  # noqa: BLE001
        return None
    if key is None or _markers_in_use():
        return None
    return key, policy_key(policy)


def load(fn: types.FunctionType, key: str, policy: str, args: tuple, kwargs: dict,
         title: str, skip: set[str]) -> Any:
    """A persisted entry of ``key`` compiled under ``policy`` whose guard passes on these
    inputs, as a ``CacheEntry``; None when there is none (then the caller compiles)."""
    with _LOCK:
        if key in _COMPILED_KEYS:
            return None
    directory = _entries_dir(fn, key)
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        names = []
    root = os.path.abspath(usable_cache_dir())
    for name in names:
        path = os.path.join(directory, name)
        if path in skip:
            continue
        start = time.perf_counter()
        try:
            with open(path, "rb") as handle:
                manifest = json.loads(handle.read())
            if manifest.get("format") != FORMAT or manifest.get("key") != key \
                    or manifest.get("policy") != policy:
                continue
            entry = _load_entry(fn, manifest, root, args, kwargs, title)
        except Refused as error:  # for good: its files or the functions it relied on changed
            with _LOCK:
                STATS["refused"] += 1
            _log.info("persisted entry %s of %s refused: %s; compiling", path, title, error)
            with contextlib.suppress(OSError):
                os.unlink(path)  # the manifest only: files may be shared with other entries
            continue
        except Exception as error:  # noqa: BLE001 - a stale entry (a name gone): compile
            _log.info("persisted entry %s of %s not loaded (%s: %s)", path, title,
                      type(error).__name__, error)
            continue
        if entry is None:
            continue
        entry.loaded_from = path
        entry.compile_time = entry.phases["load"] = time.perf_counter() - start
        with _LOCK:
            STATS["loaded"] += 1
        _log.info("%s: entry loaded from the persistent cache (%s, %.1f ms)", title, path,
                  1e3 * entry.compile_time)
        return entry
    with _LOCK:
        STATS["missed"] += 1
    return None


def build_or_load(fn: Any, args: tuple, kwargs: dict, build: Callable[[], Any], *,
                  backend: Any, fullgraph: bool, dynamic: Any, options: dict, policy: Any,
                  title: str, entries: tuple) -> Any:
    """The entry for this miss: loaded from the persistent cache when it holds one whose guard
    passes, else ``build()`` (then written to the cache after its first run, ``after_run``)."""
    keys = lookup_key(fn, backend, fullgraph, dynamic, options, policy)
    if keys is None:
        entry = build()
        entry.blueprint = None
        return entry
    key, policy_text = keys
    entry = load(fn, key, policy_text, args, kwargs, title, {e.loaded_from for e in entries})
    if entry is not None:
        return entry
    with _LOCK:
        _COMPILED_KEYS.add(key)
    entry = build()
    if entry.blueprint is not None:
        entry.blueprint = (*entry.blueprint, Pending(fn, key, policy_text, len(entries), title))
    return entry


def after_run(entry: Any) -> None:
    """The entry ran once without error: write it to the persistent cache if it is to be."""
    blueprint = entry.blueprint
    if blueprint is not None and len(blueprint) == 3:
        save(entry, blueprint[2])


def _load_entry(fn: types.FunctionType, manifest: dict, root: str, args: tuple, kwargs: dict,
                title: str) -> Any:
    from .entry import CacheEntry
    hashes, files = manifest["hashes"], manifest["files"]
    lowering = manifest["lowering"]
    texts = {relative: _read_verified(root, relative, hashes)  # every file, before any runs
             for relative in list(files.values()) + lowering.get("files", [])}
    module = load_generated_module(os.path.join(root, files["entry"]))
    scope = _scope(fn)
    helpers = (fn, _module, _attr, np.dtype)
    guard_ns = module.guard_objects(*helpers)
    _check_fingerprints(module, manifest["fingerprints"], scope)
    guard_path = os.path.join(root, files["guard"])
    guard_text = texts[files["guard"]].decode()
    check, explainers = load_generated_module(guard_path).___make_guard(guard_ns)
    for made in (check, *explainers):
        copy_defaults(made, fn)
    try:
        if not check(*args, **kwargs):
            return None
    except Exception:  # noqa: BLE001 - a global that is gone: not this entry
        return None
    facts_path, facts_hash = os.path.join(root, files["facts"]), hashes[files["facts"]]

    def load_facts() -> list:
        with open(facts_path, "rb") as handle:
            data = handle.read()
        if _sha(data) != facts_hash:
            raise Refused(f"{facts_path} does not match the hash in the manifest")
        import io
        return _FactsUnpickler(io.BytesIO(data), scope).load()

    guard = LoadedGuard(load_facts, check=check, source=guard_display_source(guard_text),
                        namespace=guard_ns, params=manifest["params"], path=guard_path,
                        _explainers=list(explainers), condition=manifest["condition"])
    shown = manifest["texts"]
    common = dict(guard=guard, guards=guard.source, rewritten_code=shown["rewritten_code"],
                  graph_code=shown["graph_code"], output_code=shown["output_code"],
                  run_code=shown["run_code"],
                  files=[os.path.join(root, p) for p in
                         list(files.values()) + lowering.get("files", [])],
                  phases={"load": 0.0})
    if manifest["kind"] == "original":
        return CacheEntry(run=fn, **common)
    run_ns = dict(guard_ns)
    run_ns.update(module.run_objects(*helpers))
    run_ns.update(___compiled=_rebuild(module, lowering, root, helpers),
                  ___MISS=MISS, ___original=fn, ___note=note_once(title))
    run, guarded = load_generated_module(os.path.join(root, files["run"])).___make_run(run_ns)
    name_run_functions((run, guarded), fn)
    return CacheEntry(run=run, guarded=guarded, **common)


def _check_fingerprints(module: Any, fingerprints: dict[str, str], scope: dict) -> None:
    for text, expected in fingerprints.items():
        if mark_of(eval(text, scope)) != expected:  # noqa: S307 - verified entry module
            raise Refused(f"{text} changed since the entry was compiled")


def _run_original(*inputs: Any) -> tuple:
    raise RunOriginal("a persisted entry has no graph to run this call with NumPy")


def _rebuild(module: Any, lowering: dict, root: str, helpers: tuple) -> Callable:
    """The entry's compiled graph, from its verified files (``lower/numba/rebuild.py``)."""
    from ..lower.numba import is_numba_compile_error
    from ..lower.numba.files import lock_numba_index
    from ..lower.numba.rebuild import build
    lock_numba_index()  # a kernel numba compiles afresh here adds to a shared index
    settings = dict(lowering["settings"])
    if settings.get("effects_from"):
        settings["effects_from"] = [os.path.join(root, settings["effects_from"][0]),
                                    settings["effects_from"][1]]
    fixes = [(kind,) if kind == "same" else (kind, value)
             for kind, value in zip(lowering["fixes"], module.fix_objects(*helpers))]
    return build(lowering["kind"], [os.path.join(root, p) for p in lowering["files"]],
                 module.lowering_objects(*helpers), settings, _run_original,
                 is_numba_compile_error, fixes)


def clear(cache_dir: str | None = None) -> None:
    """Remove every persisted entry under ``cache_dir`` (default: ``config.cache_dir``); kernel
    modules and numba's cache stay (``rm -r <cache_dir>`` removes everything)."""
    shutil.rmtree(os.path.join(cache_dir or usable_cache_dir(), ENTRIES), ignore_errors=True)
