"""A user's script, checked by ``mypy --strict`` (``test_mypy.py``): no errors, and the revealed
types keep the decorated functions' signatures. Not collected by pytest (no ``test_`` name)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import astcompiler as ac

Array = npt.NDArray[np.float64]


@ac.compile
def normalized(x: Array, axis: int = -1) -> Array:
    return np.exp(x) / float(axis)


@ac.compile(fullgraph=True, dynamic=True)
def scale(x: Array, factor: float) -> Array:
    return x * factor


def plain(x: Array) -> Array:
    return x + 1.0


@ac.nonstrict_trace
def opaque(x: Array) -> Array:
    return x - 1.0


@ac.allow_in_graph
def in_graph(x: Array) -> Array:
    return x * 0.5


fast = ac.compile(plain, backend="eager")


@ac.config.patch(recompile_limit=4)
def run_patched(x: Array) -> Array:
    return normalized(x)


def main() -> float:
    x = np.ones((4, 3))
    ac.mark_dynamic(x, 0)
    ac.mark_dynamic(x, [0, 1], min=2, max=64)
    ac.maybe_mark_dynamic(x, 1)
    ac.mark_static(x)
    with ac.config.patch(recompile_limit=2):
        y: Array = normalized(x, axis=0)
    z: Array = scale(y, 2.0) + fast(y) + run_patched(x) + opaque(x) + in_graph(x)
    sources = [entry.guards + entry.output_code for entry in normalized.entries]
    count: int = len(scale.entries)
    reveal_type(normalized)
    reveal_type(scale)
    reveal_type(fast)
    reveal_type(normalized(x))
    reveal_type(normalized.entries)
    reveal_type(run_patched)
    return float(z.sum()) + len(sources) + count
