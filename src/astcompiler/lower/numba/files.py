"""Generated source as real files: content-addressed names, imported by path.

numba's disk cache (``cache=True``) only works for functions defined in real files whose module
can be re-imported by name, so every kernel module is written to
``<config.cache_dir>/kernels/<name>_<hash>.py`` and registered in ``sys.modules`` under its file
stem before anything in it runs. A file is never rewritten with different content under the
same name; the same content in another process or cache directory reuses the same module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from types import ModuleType

from ...config import config

_LOCK = threading.RLock()


def kernels_dir() -> str:
    path = os.path.join(config.cache_dir, "kernels")
    os.makedirs(path, exist_ok=True)
    return path


def write_source(prefix: str, source: str) -> tuple[str, str]:
    """Write ``source`` as ``<prefix>_<hash>.py`` (once); returns (module name, path)."""
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
    directory = kernels_dir()
    attempt = 0
    while True:
        stem = f"{prefix}_{digest}" + (f"_{attempt}" if attempt else "")
        path = os.path.join(directory, stem + ".py")
        if not os.path.exists(path):
            _atomic_write(path, source)
            return stem, path
        with open(path, encoding="utf-8") as handle:
            if handle.read() == source:
                return stem, path
        attempt += 1  # a different file holds this name: never overwrite it


def _atomic_write(path: str, text: str) -> None:
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def import_file(stem: str, path: str) -> ModuleType:
    """Import a generated file as module ``stem`` (registered in ``sys.modules`` first)."""
    with _LOCK:
        module = sys.modules.get(stem)
        if module is not None:
            return module
        spec = importlib.util.spec_from_file_location(stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import generated file {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[stem] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(stem, None)
            raise
        return module


def load_source(prefix: str, source: str) -> tuple[ModuleType, str, str]:
    """Write and import; returns (module, module name, path)."""
    stem, path = write_source(prefix, source)
    return import_file(stem, path), stem, path
