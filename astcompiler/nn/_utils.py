"""Small helpers shared by the modules."""

from __future__ import annotations

from typing import Any

import numpy as np


def typename(value: Any) -> str:
    """``module.QualName`` of the value's type, for error messages (``numpy.ndarray``)."""
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A NumPy generator: ``rng`` itself, seeded from an int, or fresh entropy for None."""
    return np.random.default_rng(rng)


def add_indent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first by ``spaces``."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])
