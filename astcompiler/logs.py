"""Logging of generated artefacts and events, like ``TORCH_LOGS``.

``ASTCOMPILER_LOGS="graph_code,guards,recompiles,graph_breaks,output_code,rewritten_code"``
(comma separated; ``+name`` for debug level, ``all`` for everything) turns on the loggers
``astcompiler.<name>`` through the standard ``logging`` module.
"""

from __future__ import annotations

import logging
import os

ARTIFACTS = ("rewritten_code", "graph_code", "guards", "output_code", "recompiles",
             "graph_breaks", "compile")
_configured = False


def get_logger(artifact: str) -> logging.Logger:
    configure_from_env()
    return logging.getLogger(f"astcompiler.{artifact}")


def configure_from_env(value: str | None = None) -> None:
    """Read ``ASTCOMPILER_LOGS`` once (or ``value``) and enable the named loggers."""
    global _configured
    if _configured and value is None:
        return
    _configured = True
    spec = os.environ.get("ASTCOMPILER_LOGS", "") if value is None else value
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("[astcompiler:%(name)s] %(message)s"))
    for raw in names:
        debug = raw.startswith("+")
        name = raw.lstrip("+")
        targets = ARTIFACTS if name == "all" else (name,)
        for target in targets:
            logger = logging.getLogger(f"astcompiler.{target}")
            logger.setLevel(logging.DEBUG if debug else logging.INFO)
            if handler not in logger.handlers:
                logger.addHandler(handler)
            logger.propagate = False
