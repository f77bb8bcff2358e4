"""``ac.config``: settings read at compile and dispatch time, with ``patch()``.

Settings are per thread when patched (``config.patch`` is thread-local), so two users of the
library in one process never see each other's temporary changes.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
import threading
import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])


def _default_cache_dir() -> str:
    env = os.environ.get("ASTCOMPILER_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return os.path.join(base, "astcompiler")


# Unusable cache directories (as configured) -> the private temporary directory used instead.
_FALLBACK_DIRS: dict[str, str] = {}
_FALLBACK_LOCK = threading.Lock()


def fallback_cache_dir(root: str, error: OSError, stacklevel: int = 2) -> str:
    """The private temporary directory (mode 0700) that replaces the unusable cache directory
    ``root`` for the rest of the process; warns once per ``root`` (``stacklevel``: that of the
    ``warnings.warn`` call made here; 2 names this function's caller)."""
    key = os.path.abspath(root)
    with _FALLBACK_LOCK:
        known = _FALLBACK_DIRS.get(key)
        if known is not None:
            return known
        private = tempfile.mkdtemp(prefix="astcompiler-")  # mkdtemp creates it 0700
        _FALLBACK_DIRS[key] = private
        atexit.register(shutil.rmtree, private, ignore_errors=True)
    reason = error.strerror or type(error).__name__
    warnings.warn(
        f"astcompiler: cannot use the cache directory {root!r} ({type(error).__name__}: {reason}"
        f"{': ' + repr(error.filename) if error.filename else ''}); generated files go to the "
        f"private temporary directory {private!r} for the rest of this process. "
        "What to do: set astcompiler.config.cache_dir (or ASTCOMPILER_CACHE_DIR) to a writable "
        "directory.", RuntimeWarning, stacklevel=stacklevel)
    return private


def redirect_cache_path(path: str) -> str:
    """``path`` with a cache directory found unusable replaced by its temporary directory."""
    if not _FALLBACK_DIRS:
        return path
    absolute = os.path.abspath(path)
    with _FALLBACK_LOCK:
        items = list(_FALLBACK_DIRS.items())
    for root, private in items:
        if absolute == root or absolute.startswith(root + os.sep):
            return private + absolute[len(root):]
    return path


def cache_root_of(path: str) -> str:
    """The cache directory ``path`` lives in: ``config.cache_dir`` when under it, else ``path``."""
    root = os.path.abspath(config.cache_dir)
    absolute = os.path.abspath(path)
    return root if absolute == root or absolute.startswith(root + os.sep) else absolute


def usable_cache_dir() -> str:
    """``config.cache_dir``, or the private temporary directory that replaces it when unusable."""
    return redirect_cache_path(config.cache_dir)


def _env_list(name: str) -> str:
    return os.environ.get(name, "")


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    try:
        return float(text) if text else default
    except ValueError:
        warnings.warn(f"astcompiler: {name}={text!r} is not a number of seconds; using "
                      f"{default}", RuntimeWarning, stacklevel=2)
        return default


@dataclass
class _Settings:
    dynamic_sources: str = field(default_factory=lambda: _env_list("ASTCOMPILER_DYNAMIC_SOURCES"))
    unbacked_sources: str = ""
    static_sources: str = ""
    automatic_dynamic_shapes: bool = True
    assume_static_by_default: bool = True
    specialize_int: bool = False
    specialize_float: bool = True
    recompile_limit: int = 8
    fail_on_recompile_limit_hit: bool = False
    error_on_recompile: bool = False
    skip_nnmodule_hook_guards: bool = True
    force_parameter_static_shapes: bool = True
    force_nn_module_property_static_shapes: bool = True
    cache_dir: str = field(default_factory=_default_cache_dir)
    unroll_limit: int = 64
    unroll_node_budget: int = 256  # weight: 1 a node, 8 one making a >= 2-D array (capture/runtime/api.py)
    static_loop_limit: int = 100_000  # Python iterations of one loop at capture, then a break
    inline_depth_limit: int = 16
    parallel_threshold: int = 1 << 16
    blas_parallel_threshold: int = 1 << 22  # the same in a graph that calls BLAS/LAPACK
    numba_cache: bool = True
    # warm start: entries written after their first run and loaded by new processes
    # (run/persist.py); ASTCOMPILER_PERSISTENT_CACHE=0 turns it off
    persistent_cache: bool = field(
        default_factory=lambda: os.environ.get("ASTCOMPILER_PERSISTENT_CACHE", "1") != "0")
    pgo: bool = False
    # fused kernels compute exp, log, sin, tanh... with lower/numba/vecmath (vectorizable, within
    # 2 ulp, NumPy's special values and flags) instead of libm; set before compiling
    vector_math: bool = True
    # ... in kernels whose static size has at least this many elements (or a dynamic size):
    # inlining vecmath costs about 0.5 s of numba compile, which small arrays never win back
    vector_math_min_elements: int = 4096
    # float64 sin/cos in pointwise kernels run blocks of 64 elements with a small-argument
    # reduction (vecmath VecFunction.fast_float64; a block with an argument past 2**15, and the
    # tail, run again element by element, libm past it): about 2x faster loops for about 1.3x
    # numba's compile time of such a kernel (docs/performance.md, "Vectorized math")
    fast_trig_blocks: bool = True
    # ufuncs NumPy's own SIMD loops compute faster than a kernel on this CPU (sin, exp, tanh...
    # on AVX512_SKX: lower/numba/numpy_simd.py) stay NumPy steps outside structured loop code;
    # their neighbours still fuse. False: kernels hold them (vecmath or libm)
    numpy_simd_math: bool = True
    # fused float sums (sum, mean, var, std) add in NumPy's order and dtype where it is known
    # (lower/numba/pairwise.py: its bits); False: 64 float64 lanes (within a documented bound)
    pairwise_sums: bool = True
    # record each compile as files under this directory (run/trace.py; `astcompiler report DIR`):
    # also ASTCOMPILER_TRACE_DIR; "" records nothing
    trace_dir: str = field(default_factory=lambda: os.environ.get("ASTCOMPILER_TRACE_DIR", ""))
    verbose: bool = False
    # a first call that spends more than this many seconds compiling logs a one-line notice
    # (logger ``astcompiler.compile``, level WARNING); 0: never. ASTCOMPILER_SLOW_COMPILE_NOTICE_S
    slow_compile_notice_s: float = field(default_factory=lambda: _env_seconds(
        "ASTCOMPILER_SLOW_COMPILE_NOTICE_S", 5.0))


_FIELDS = {f.name for f in fields(_Settings)}


class Config:
    """Attribute access to settings; ``patch`` overrides them for the current thread."""

    # no instance __dict__: pytest's monkeypatch then restores a setting by assigning it back
    __slots__ = ("_base", "_local")

    def __init__(self) -> None:
        object.__setattr__(self, "_base", _Settings())
        object.__setattr__(self, "_local", threading.local())

    def _overrides(self) -> list[dict[str, Any]]:
        local = self._local
        if not hasattr(local, "stack"):
            local.stack = []
        stack: list[dict[str, Any]] = local.stack
        return stack

    def __getattr__(self, name: str) -> Any:
        if name not in _FIELDS:
            raise AttributeError(f"astcompiler.config has no setting {name!r}; "
                                 f"known settings: {', '.join(sorted(_FIELDS))}")
        for layer in reversed(self._overrides()):
            if name in layer:
                return layer[name]
        return getattr(self._base, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FIELDS:
            raise AttributeError(f"astcompiler.config has no setting {name!r}")
        setattr(self._base, name, value)

    def __dir__(self) -> list[str]:
        return sorted(_FIELDS)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in sorted(_FIELDS)}

    @contextlib.contextmanager
    def _patched(self, changes: dict[str, Any]) -> Iterator[None]:
        stack = self._overrides()
        stack.append(changes)
        try:
            yield
        finally:
            stack.remove(changes)

    def patch(self, arg: dict[str, Any] | None = None, **changes: Any) -> "_Patch":
        """Override settings inside a ``with`` block or a decorated function."""
        if arg:
            changes = {**arg, **changes}
        unknown = set(changes) - _FIELDS
        if unknown:
            raise AttributeError(f"astcompiler.config has no setting(s) {sorted(unknown)}")
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    """What ``config.patch(...)`` returns: a context manager and a decorator."""

    def __init__(self, config: Config, changes: dict[str, Any]) -> None:
        self._config = config
        self._changes = changes
        self._contexts: list[Any] = []

    def __enter__(self) -> "_Patch":
        ctx = self._config._patched(dict(self._changes))
        self._contexts.append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._contexts.pop().__exit__(*exc)

    def __call__(self, fn: _F) -> _F:  # decorator
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._config._patched(dict(self._changes)):
                return fn(*args, **kwargs)
        return cast(_F, wrapper)


config = Config()
