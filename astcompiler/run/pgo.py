"""Profile-guided dynamism: remember which sources became dynamic, per function, across runs.

On when ``config.pgo`` is set or ``ASTCOMPILER_JOB_ID`` is in the environment. The profile of a
function is a small text file under ``<cache_dir>/pgo/<job>/``: one source name per line (with
the dimensions as a comment), so a user can copy the names into ``dynamic_sources``.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Callable

from ..config import config, redirect_cache_path
from ..source.loading import write_cache_file

_LINE = re.compile(r"^(?P<source>\S.*?)\s*(#\s*dims\s*(?P<dims>[-\d ,]*))?$")


def enabled() -> bool:
    return bool(config.pgo or os.environ.get("ASTCOMPILER_JOB_ID"))


def profile_path(fn: Callable) -> str:
    code = fn.__code__
    key = f"{code.co_filename}:{code.co_firstlineno}:{fn.__qualname__}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", f"{os.path.basename(code.co_filename)}_{fn.__qualname__}")
    job = re.sub(r"\W", "_", os.environ.get("ASTCOMPILER_JOB_ID", "default"))
    return os.path.join(config.cache_dir, "pgo", job, f"{stem}_{digest}.txt")


def load(fn: Callable) -> dict[str, set[int]]:
    path = redirect_cache_path(profile_path(fn))  # written to the fallback when unusable
    if not os.path.exists(path):
        return {}
    dynamic: dict[str, set[int]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            match = _LINE.match(line)
            if match is None:
                continue
            dims = {int(d) for d in re.split(r"[ ,]+", (match["dims"] or "").strip()) if d}
            dynamic.setdefault(match["source"].strip(), set()).update(dims)
    return dynamic


def save(fn: Callable, dynamic: dict[str, set[int]]) -> str:
    """Write the profile (atomically; to the private fallback directory, with one warning,
    when the cache directory is unusable); returns where it went."""
    path = profile_path(fn)
    code = fn.__code__
    lines = [f"# astcompiler profile for {fn.__qualname__} ({code.co_filename}:{code.co_firstlineno})",
             "# sources that became dynamic; copy them into config.dynamic_sources or",
             "# ASTCOMPILER_DYNAMIC_SOURCES (comma separated) to make them dynamic from the start",
             "# (dims -1 means an int argument)"]
    for source in sorted(dynamic):
        dims = ", ".join(str(d) for d in sorted(dynamic[source]))
        lines.append(f"{source}  # dims {dims}")
    return write_cache_file(path, "\n".join(lines) + "\n")
