"""Write generated source to real, content-addressed files and import them.

Real files make tracebacks, ``pdb`` and numba's disk cache work. A file's name carries the hash
of its content, so a name never gets different content (numba's cache keys on the file).

Every generated file goes through ``write_generated_file`` and ``load_generated_module``:

- writes are atomic (a temporary file in the same directory, then ``os.replace``), so another
  process never reads a half-written file;
- an existing file is read back and compared with the source it should hold; a tampered or
  foreign file is rewritten, never executed;
- a module is executed from the text that was verified against the hash in its name (not from a
  second read of the file, nor from a ``__pycache__`` bytecode file);
- directories the compiler creates are private (mode 0700);
- when the cache directory cannot be used (not a directory, not writable), one warning is given
  and the files go to a private temporary directory instead (``config.fallback_cache_dir``).
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import logging
import os
import sys
import tempfile
import threading
import types
from typing import Callable

from ..config import cache_root_of, config, fallback_cache_dir, redirect_cache_path

_LOCK = threading.Lock()
_log = logging.getLogger("astcompiler.source")
DIGEST_LENGTH = 12


class GeneratedFileError(OSError):
    """A generated file does not hold the content its name promises: it is not executed."""


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by this function's caller that names the
    first frame outside astcompiler and its generated files: the user's call."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    cache = os.path.abspath(redirect_cache_path(config.cache_dir)) + os.sep
    frame, level = sys._getframe(1), 1  # level 1: our caller, the one calling warnings.warn
    while frame is not None:
        name = frame.f_code.co_filename
        name = name if name.startswith("<") else os.path.abspath(name)
        if not (name.startswith(package) or name.startswith(cache)
                or name.startswith(("<frozen", "<astcompiler"))):  # "<astcompiler dispatch...>"
            return level
        # warnings.warn does not count importlib's frames (an import in between) past level 1
        internal = level > 1 and "importlib" in name and "_bootstrap" in name
        frame, level = frame.f_back, level + (not internal)
    return 1


def _safe_stem(stem: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stem)
    return cleaned.strip("_") or "generated"


def content_digest(data: bytes) -> str:
    """The hash a generated file's name carries for its content."""
    return hashlib.sha1(data).hexdigest()[:DIGEST_LENGTH]


def _digest_in_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem.rsplit("_", 1)[-1]


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def make_private_dirs(directory: str) -> None:
    """Create ``directory`` and missing parents; the ones created here inside the cache directory
    get mode 0700 (existing directories, and parents outside the cache, are left as they are)."""
    missing = []
    current = os.path.abspath(directory)
    root = cache_root_of(current)
    while not os.path.isdir(current) and (current == root or current.startswith(root + os.sep)):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for path in missing:
        try:
            os.chmod(path, 0o700)  # makedirs leaves intermediate levels to the umask
        except OSError:  # created concurrently by another user: theirs to keep
            pass


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``: readers see the old file or the new one, never a part."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_into(directory: str, name: str, data: bytes) -> str:
    make_private_dirs(directory)
    path = os.path.join(directory, name)
    existing = _read_bytes(path)
    if existing == data:
        return path  # never rewritten: numba's cache and open tracebacks keep pointing at it
    if existing is not None:
        _log.warning("astcompiler: the generated file %s did not hold the content its name "
                     "promises (edited or foreign); it was rewritten", path)
    atomic_write(path, data)
    return path


def _in_usable_dir(directory: str, write: Callable[[str], str]) -> str:
    """``write(directory)``; when the cache directory cannot be used (not a directory, read-only,
    no permission, disk full), the same under the private temporary directory replacing it."""
    target = redirect_cache_path(directory)
    try:
        return write(target)
    except OSError as error:
        root = cache_root_of(target)
        relative = os.path.relpath(os.path.abspath(target), root)
        private = fallback_cache_dir(root, error, stacklevel=user_stacklevel() + 1)
        return write(os.path.normpath(os.path.join(private, relative)))


def write_generated_file(directory: str, stem: str, source: str) -> str:
    """Write ``source`` to ``directory/<stem>_<hash>.py`` (atomically, verified) and return the
    path. An unusable cache directory is replaced by a private temporary one (one warning)."""
    data = source.encode("utf-8")
    name = f"{_safe_stem(stem)}_{content_digest(data)}.py"
    return _in_usable_dir(directory, lambda target: _write_into(target, name, data))


def write_cache_file(path: str, text: str) -> str:
    """Write ``text`` to ``path`` under the cache directory (atomically, private directories, a
    private temporary directory when the cache directory is unusable); returns where it went.
    For files whose names are not content hashes (PGO profiles): read them back through
    ``config.redirect_cache_path``."""
    data, name = text.encode("utf-8"), os.path.basename(path)

    def write(directory: str) -> str:
        make_private_dirs(directory)
        atomic_write(os.path.join(directory, name), data)
        return os.path.join(directory, name)
    return _in_usable_dir(os.path.dirname(path), write)


def verified_source(path: str) -> str:
    """The text of the generated file at ``path``, checked against the hash in its name."""
    data = _read_bytes(path)
    if data is None:
        raise GeneratedFileError(errno.ENOENT, "the generated file is missing", path)
    if content_digest(data) != _digest_in_name(path):
        raise GeneratedFileError(
            errno.EINVAL, "the generated file does not match the hash in its name (edited or foreign); "
               "it is not executed", path)
    return data.decode("utf-8")


def load_generated_module(path: str) -> types.ModuleType:
    """Import the module at ``path`` under its file stem, registered in ``sys.modules`` before it
    runs (numba's disk cache re-imports a cached function's module by that name). The text run
    is the one verified against the hash in the file's name."""
    name = os.path.splitext(os.path.basename(path))[0]
    with _LOCK:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None) == path:
            return module
        text = verified_source(path)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            exec(compile(text, path, "exec"), module.__dict__)  # noqa: S102 - verified text
        except BaseException:
            sys.modules.pop(name, None)
            raise
    return module
