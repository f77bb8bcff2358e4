"""Write generated source to real, content-addressed files and import them.

Real files make tracebacks, ``pdb`` and numba's disk cache work. A file's name carries the hash
of its content, so a name never gets different content (numba's cache keys on the file).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import types

_LOCK = threading.Lock()


def _safe_stem(stem: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stem)
    return cleaned.strip("_") or "generated"


def write_generated_file(directory: str, stem: str, source: str) -> str:
    """Write ``source`` to ``directory/<stem>_<hash>.py`` (atomically, once) and return the path."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{_safe_stem(stem)}_{digest}.py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(source)
        os.replace(tmp, path)
    return path


def load_generated_module(path: str) -> types.ModuleType:
    """Import the module at ``path`` under its file stem, registered in ``sys.modules`` before it
    runs (numba's disk cache re-imports a cached function's module by that name)."""
    name = os.path.splitext(os.path.basename(path))[0]
    with _LOCK:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None) == path:
            return module
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    return module
