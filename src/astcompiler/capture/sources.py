"""Sources: where a value the capture relied on comes from, for guards and for running.

``name`` uses torch's syntax (``L['x']``, ``G['np']``, ``L['t'][0]``) for messages and for
``config.dynamic_sources``; ``expr`` is the Python expression that fetches the value inside the
generated guard and run functions (whose parameters are the user function's parameters).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    name: str
    expr: str

    def item(self, key: object) -> "Source":
        return Source(f"{self.name}[{key!r}]", f"{self.expr}[{key!r}]")

    def attr(self, attr: str) -> "Source":
        return Source(f"{self.name}.{attr}", f"{self.expr}.{attr}")

    def __str__(self) -> str:
        return self.name


GLOBALS_VAR = "___G"


def local_source(param: str) -> Source:
    return Source(f"L[{param!r}]", param)


def global_source(name: str, globals_var: str = GLOBALS_VAR, module: str | None = None) -> Source:
    shown = f"G[{name!r}]" if module is None else f"G[{module!r}][{name!r}]"
    return Source(shown, f"{globals_var}[{name!r}]")


def cell_source(name: str, cell_var: str) -> Source:
    return Source(f"C[{name!r}]", f"{cell_var}.cell_contents")
