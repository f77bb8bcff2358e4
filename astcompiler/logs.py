"""Logging of generated artefacts and events, like ``TORCH_LOGS``.

``ASTCOMPILER_LOGS="graph_code,guards,recompiles,graph_breaks,output_code,rewritten_code,compile"``
(comma separated; ``+name`` for debug level, ``all`` for everything) turns on the loggers
``astcompiler.<name>`` through the standard ``logging`` module; ``set_logs(spec)`` does the same
from code. An unknown name is an error (``set_logs``) or one warning (the environment variable)
that lists the valid ones.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings

# name -> what it logs at INFO; "+name" (DEBUG) adds what follows "+:"
ARTIFACTS: dict[str, str] = {
    "rewritten_code": "the graph-building source of each compiled function (+: the files written)",
    "graph_code": "each captured graph (+: its op count and inputs)",
    "guards": "each entry's guard function (+: every fact it checks, one a line)",
    "output_code": "the wrapper and kernels that run a graph (+: the run code and the files)",
    "recompiles": "why a function recompiles (+: every failed guard of every entry)",
    "graph_breaks": "where and why a capture broke, and fallbacks (+: the traceback, regions "
                    "that unrolled)",
    "compile": "one line per compile phase with its time, then the whole compile "
               "(+: the persistent cache's decisions)",
}
FORMAT = "[%(name)s] %(message)s"

_HANDLER = logging.StreamHandler()
_HANDLER.setFormatter(logging.Formatter(FORMAT))
_LOCK = threading.Lock()
_configured = False
_enabled: list[str] = []  # loggers this module configured (undone by the next configuration)


def get_logger(artifact: str) -> logging.Logger:
    """The logger of one artefact (``astcompiler.<artifact>``); reads ``ASTCOMPILER_LOGS``
    the first time."""
    configure_from_env()
    return logging.getLogger(f"astcompiler.{artifact}")


def parse(spec: str) -> dict[str, int]:
    """``"+guards,compile"`` -> {artefact: level}; ``ValueError`` naming an unknown name and
    listing the valid ones."""
    levels: dict[str, int] = {}
    unknown = []
    for raw in (part.strip() for part in spec.split(",")):
        if not raw:
            continue
        name = raw.lstrip("+")
        level = logging.DEBUG if raw.startswith("+") else logging.INFO
        if name == "all":
            for target in ARTIFACTS:
                levels[target] = min(levels.get(target, level), level)
        elif name in ARTIFACTS:
            levels[name] = min(levels.get(name, level), level)
        else:
            unknown.append(raw)
    if unknown:
        names = ", ".join(repr(name) for name in unknown)
        raise ValueError(
            f"unknown astcompiler log name(s) {names}; valid names: all, {', '.join(ARTIFACTS)} "
            f"(comma separated; '+name' for debug level)")
    return levels


def set_logs(spec: str) -> None:
    """Turn on the artefacts named in ``spec`` (the syntax of ``ASTCOMPILER_LOGS``) and off the
    others this module turned on; ``""`` turns them all off."""
    global _configured
    levels = parse(spec)
    with _LOCK:
        _configured = True
        for name in _enabled:
            logger = logging.getLogger(name)
            logger.setLevel(logging.NOTSET)
            logger.removeHandler(_HANDLER)
            logger.propagate = True
        _enabled.clear()
        for artifact, level in levels.items():
            logger = logging.getLogger(f"astcompiler.{artifact}")
            logger.setLevel(level)
            if _HANDLER not in logger.handlers:
                logger.addHandler(_HANDLER)
            logger.propagate = False
            _enabled.append(logger.name)


def configure_from_env(value: str | None = None) -> None:
    """Read ``ASTCOMPILER_LOGS`` once (or ``value``) and enable the named loggers; unknown names
    give one ``RuntimeWarning`` listing the valid ones (the known names still apply)."""
    if _configured and value is None:
        return
    spec = os.environ.get("ASTCOMPILER_LOGS", "") if value is None else value
    try:
        set_logs(spec)
    except ValueError as error:
        known = ",".join(part for part in spec.split(",")
                         if part.strip().lstrip("+") in (*ARTIFACTS, "all"))
        set_logs(known)
        warnings.warn(f"ASTCOMPILER_LOGS: {error}", RuntimeWarning, stacklevel=_user_level())


def _user_level() -> int:
    """The ``stacklevel`` of a warning given by this function's caller: the user's frame."""
    from .source.loading import user_stacklevel  # lazily: the source stage imports config
    return max(user_stacklevel() - 1, 1)


def seconds(value: float) -> str:
    """``0.0123`` -> ``"12.3 ms"``, ``2.5`` -> ``"2.50 s"`` (log lines)."""
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def display_name(qualname: str) -> str:
    """A function's name for logs: its qualified name without the ``<locals>`` of the functions
    it was defined in (``f.<prefix_1>``, ``Model.forward``, ``<lambda>``)."""
    return qualname.rsplit("<locals>.", 1)[-1]
