"""Generated source as real files: content-addressed names, imported by path.

numba's disk cache (``cache=True``) only works for functions defined in real files whose module
can be re-imported by name, so every kernel module is written to
``<config.cache_dir>/kernels/<name>_<hash>.py`` and registered in ``sys.modules`` under its file
stem before anything in it runs. Writing and loading are ``source.write_generated_file`` and
``source.load_generated_module`` (atomic writes, verified content, private directories, a
temporary directory when the cache directory is unusable): a file is never rewritten with
different content under the same name, and a tampered one is rewritten before it is imported.
numba's own index beside it (``__pycache__/*.nbi``) is keyed by a hash of the file's content, so
a rewritten file never serves a kernel compiled from the tampered text. Processes adding
overloads to one index at once take turns (``lock_numba_index``): no addition is lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from types import ModuleType
from typing import Any, Iterator

from ...config import config
from ...source import load_generated_module, write_generated_file


def kernels_dir() -> str:
    """Where kernel modules are written (created on the first write)."""
    return os.path.join(config.cache_dir, "kernels")


def write_source(prefix: str, source: str) -> tuple[str, str]:
    """Write ``source`` as ``<kernels dir>/<prefix>_<hash>.py`` (once); returns (module name, path)."""
    path = write_generated_file(kernels_dir(), prefix, source)
    return os.path.splitext(os.path.basename(path))[0], path


def load_source(prefix: str, source: str) -> tuple[ModuleType, str, str]:
    """Write and import; returns (module, module name, path)."""
    lock_numba_index()  # before the module's kernels compile (and save) on their first call
    stem, path = write_source(prefix, source)
    return load_generated_module(path), stem, path


_INDEX_LOCKED: list[bool] = []


def lock_numba_index() -> None:
    """Make numba's cache index updates exclusive between processes (once per process).

    numba's ``IndexDataCacheFile.save`` reads the ``.nbi`` index, adds a key, picks the first
    free data file number and rewrites the index: two processes saving overloads of one file at
    once both pick the same number and the later rename drops the other's key (a lost entry,
    and a data file that may hold the other signature's code). The save runs under an exclusive
    ``flock`` on a lock file of its own in ``<config.cache_dir>/locks/`` (named by a hash of the
    index's real path, so numba's folders, the user's own ``__pycache__`` included, hold only
    numba's files); saves of different files do not wait on each other, compiles never wait.
    Processes with different cache directories do not exclude each other. Where ``fcntl`` is
    missing (Windows) saves run as numba's do."""
    if _INDEX_LOCKED:
        return
    from numba.core import caching

    original = caching.IndexDataCacheFile.save

    def save(self: Any, key: Any, data: Any) -> None:
        with index_lock(getattr(self, "_index_path", "")):
            original(self, key, data)

    save.__doc__ = original.__doc__
    save.__wrapped__ = original  # type: ignore[attr-defined]
    caching.IndexDataCacheFile.save = save
    _INDEX_LOCKED.append(True)


def locks_dir() -> str:
    """Where the index locks live (created on the first lock)."""
    return os.path.join(config.cache_dir, "locks")


def lock_path(index_path: str) -> str:
    """The lock file of numba's index ``index_path``: one per index, outside numba's folder."""
    digest = hashlib.sha256(os.path.realpath(index_path).encode()).hexdigest()[:24]
    return os.path.join(locks_dir(), f"{os.path.basename(index_path)}.{digest}.lock")


@contextlib.contextmanager
def index_lock(index_path: str) -> Iterator[None]:
    """An exclusive lock on ``lock_path(index_path)`` while the block runs (none where it cannot
    be taken: no ``fcntl``, an unwritable cache directory)."""
    try:
        import fcntl
        os.makedirs(locks_dir(), mode=0o700, exist_ok=True)
        fd = os.open(lock_path(index_path), os.O_RDWR | os.O_CREAT, 0o600)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
