"""Which sizes are dynamic: markers on arrays, ``config`` sources, and automatic dynamism.

NumPy arrays cannot carry attributes, so ``mark_dynamic`` and friends write to a side table keyed
by the array object; an entry disappears when its array dies. A ``DynamicPolicy`` answers, for one
capture, how each dimension of each input array (and each int argument) is treated.
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DimMarker:
    """How one dimension is treated: ``dynamic`` (mark_dynamic: an error if specialized),
    ``maybe``, ``auto`` (it changed between calls), ``config`` (dynamic_sources or dynamic=True),
    ``unbacked`` (no hint, no 0/1 specialization) or ``static``."""

    kind: str
    min: int | None = None
    max: int | None = None
    strict: bool = False

    @property
    def dynamic(self) -> bool:
        return self.kind != "static"


def _device_array(value: Any) -> bool:
    """A CUDA device array (``__cuda_array_interface__``, or numba's simulator arrays): the
    CUDA target forwards its markers to the host copy capture works on."""
    return hasattr(type(value), "__cuda_array_interface__") or bool(
        getattr(value, "__cuda_ndarray__", False))


class MarkerTable:
    """Array -> {dim: DimMarker}; entries vanish with their arrays."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, dict[int, DimMarker]]] = {}
        self._lock = threading.Lock()

    def mark(self, array: Any, dims: Any, marker: DimMarker) -> None:
        if not isinstance(array, np.ndarray) and not _device_array(array):
            raise TypeError(f"expected a NumPy array, got {type(array).__name__}")
        if dims is None:
            dims = list(range(array.ndim))
        dims = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
        for dim in dims:
            if not -array.ndim <= dim < array.ndim:
                raise IndexError(f"dimension {dim} is out of range for an array with "
                                 f"{array.ndim} dimensions")
        key = id(array)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0]() is not array:
                ref = weakref.ref(array, lambda _, key=key: self._forget(key))
                entry = (ref, {})
                self._entries[key] = entry
            for dim in dims:
                entry[1][int(dim) % array.ndim] = marker

    def _forget(self, key: int) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is None:
                del self._entries[key]

    def get(self, array: Any) -> dict[int, DimMarker]:
        with self._lock:
            entry = self._entries.get(id(array))
            if entry is None or entry[0]() is not array:
                return {}
            return dict(entry[1])

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


MARKERS = MarkerTable()


_SOURCE = re.compile(r"^(?P<scope>[LG])\['(?P<name>.*?)'\](?P<rest>.*)$")


def source_matches(pattern: str, name: str) -> bool:
    """``L['x']`` matches itself; ``L['x.*']`` is a regex on the variable name; anything else is
    a regex on the whole source name."""
    pattern = pattern.strip()
    if not pattern:
        return False
    if pattern == name:
        return True
    p, n = _SOURCE.match(pattern), _SOURCE.match(name)
    if p and n:
        try:
            return p["scope"] == n["scope"] and p["rest"] == n["rest"] \
                and re.fullmatch(p["name"], n["name"]) is not None
        except re.error:
            return False
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return False


def _patterns(spec: str) -> list[str]:
    return [p for p in (part.strip() for part in spec.split(",")) if p]


@dataclass
class DynamicPolicy:
    """Decisions for one capture (read from config, markers and the function's history)."""

    dynamic: bool | None = None
    automatic: dict[str, set[int]] = field(default_factory=dict)
    automatic_enabled: bool = True
    assume_static: bool = True
    specialize_int: bool = False
    specialize_float: bool = True
    dynamic_sources: list[str] = field(default_factory=list)
    unbacked_sources: list[str] = field(default_factory=list)
    static_sources: list[str] = field(default_factory=list)
    force_parameter_static: bool = True

    @classmethod
    def from_config(cls, config: Any, dynamic: bool | None,
                    automatic: dict[str, set[int]]) -> "DynamicPolicy":
        return cls(dynamic=dynamic, automatic=automatic,
                   automatic_enabled=config.automatic_dynamic_shapes,
                   assume_static=config.assume_static_by_default,
                   specialize_int=config.specialize_int,
                   specialize_float=config.specialize_float,
                   dynamic_sources=_patterns(config.dynamic_sources),
                   unbacked_sources=_patterns(config.unbacked_sources),
                   static_sources=_patterns(config.static_sources),
                   force_parameter_static=config.force_parameter_static_shapes)

    def _matches(self, patterns: list[str], name: str) -> bool:
        return any(source_matches(p, name) for p in patterns)

    def array_dims(self, name: str, array: np.ndarray) -> list[DimMarker | None]:
        ndim = array.ndim
        if self._matches(self.static_sources, name):
            return [None] * ndim
        if self._matches(self.unbacked_sources, name):
            return [DimMarker("unbacked")] * ndim
        if self._matches(self.dynamic_sources, name):
            return [DimMarker("config")] * ndim
        if self.force_parameter_static and type(array).__name__ == "Parameter":
            return [None] * ndim  # config.force_parameter_static_shapes
        marked = MARKERS.get(array)
        changed = self.automatic.get(name, set())
        out: list[DimMarker | None] = []
        for dim in range(ndim):
            marker = marked.get(dim)
            if marker is not None:
                out.append(None if marker.kind == "static" else marker)
            elif self.dynamic is False:
                out.append(None)
            elif self.dynamic is True or not self.assume_static:
                out.append(DimMarker("config"))
            elif self.automatic_enabled and dim in changed:
                out.append(DimMarker("auto"))
            else:
                out.append(None)
        return out

    def float_marker(self, name: str) -> DimMarker | None:
        """A float argument as a graph input (``config.specialize_float=False``): named by
        ``dynamic_sources``, under ``dynamic=True``, or once its value changed between calls."""
        return None if self.specialize_float else self._scalar_marker(name, False)

    def int_marker(self, name: str) -> DimMarker | None:
        return self._scalar_marker(name, self.specialize_int)

    def _scalar_marker(self, name: str, specialized: bool) -> DimMarker | None:
        if self._matches(self.static_sources, name):
            return None
        if self._matches(self.dynamic_sources, name) or self._matches(self.unbacked_sources, name):
            return DimMarker("config")
        if self.dynamic is True:
            return DimMarker("config")
        if self.dynamic is None and self.automatic_enabled and not specialized \
                and -1 in self.automatic.get(name, set()):
            return DimMarker("auto")
        return None
