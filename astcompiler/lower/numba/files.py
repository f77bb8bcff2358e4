"""Generated source as real files: content-addressed names, imported by path.

numba's disk cache (``cache=True``) only works for functions defined in real files whose module
can be re-imported by name, so every kernel module is written to
``<config.cache_dir>/kernels/<name>_<hash>.py`` and registered in ``sys.modules`` under its file
stem before anything in it runs. Writing and loading are ``source.write_generated_file`` and
``source.load_generated_module`` (atomic writes, verified content, private directories, a
temporary directory when the cache directory is unusable): a file is never rewritten with
different content under the same name, and a tampered one is rewritten before it is imported.
numba's own index beside it (``__pycache__/*.nbi``) is keyed by a hash of the file's content, so
a rewritten file never serves a kernel compiled from the tampered text.
"""

from __future__ import annotations

import os
from types import ModuleType

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
    stem, path = write_source(prefix, source)
    return load_generated_module(path), stem, path
