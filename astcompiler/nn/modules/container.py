"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``.

Children are stored in ``_modules`` under their index as a string (``"0"``, ``"1"``, ...) for the
two sequences, so they appear in ``state_dict`` as ``"0.weight"``; deleting an item renumbers the
rest, as torch does.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping

from .._utils import add_indent
from .module import Module, ModuleRegistry

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


def _absolute_index(index: Any, size: int) -> int:
    """``index`` in ``range(size)`` (negative counts from the end), or IndexError."""
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of range")
    return index % size


def _renumber(container: Module) -> None:
    """Keys "0", "1", ... in the current order (after a deletion)."""
    container._modules = ModuleRegistry(
        (str(i), module) for i, module in enumerate(container._modules.values()))


def _insert(container: Module, index: int, module: Module) -> None:
    """Insert ``module`` at ``index`` (negative counts from the end), shifting the rest."""
    if not isinstance(module, Module):
        raise TypeError(f"module should be of type: {Module}")
    size = len(container._modules)
    if not -size <= index <= size:
        raise IndexError(f"Index out of range: {index}")
    if index < 0:
        index += size
    for i in range(size, index, -1):
        container._modules[str(i)] = container._modules[str(i - 1)]
    container._modules[str(index)] = module


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    ``Sequential(a, b, c)`` names the children "0", "1", "2"; ``Sequential(OrderedDict(...))``
    keeps the given names.
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return list(self._modules.values())[_absolute_index(index, len(self))]

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[_absolute_index(index, len(self))]
        setattr(self, key, module)

    def __delitem__(self, index: int | slice) -> None:
        keys = list(self._modules)
        if isinstance(index, slice):
            doomed = keys[index]
        else:
            doomed = [keys[_absolute_index(index, len(keys))]]
        for key in doomed:
            delattr(self, key)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        combined = Sequential()
        for module in list(self) + list(other):
            combined.append(module)
        return combined

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(list(other))

    def append(self, module: Module) -> "Sequential":
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Insert ``module`` before position ``index``."""
        _insert(self, index, module)
        return self

    def extend(self, modules: Iterable[Module]) -> "Sequential":
        """Append every module of ``modules``."""
        for module in modules:
            self.append(module)
        return self

    def pop(self, index: int | slice) -> Any:
        """Remove and return the module(s) at ``index``."""
        value = self[index]
        del self[index]
        return value


class ModuleList(Module):
    """A list of modules, registered as children ("0", "1", ...). It has no ``forward``."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[str(_absolute_index(index, len(self)))]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, str(_absolute_index(index, len(self))), module)

    def __delitem__(self, index: int | slice) -> None:
        if isinstance(index, slice):
            for i in range(len(self._modules))[index]:
                delattr(self, str(i))
        else:
            delattr(self, str(_absolute_index(index, len(self))))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        combined = ModuleList()
        for module in list(self) + list(other):
            combined.append(module)
        return combined

    def append(self, module: Module) -> "ModuleList":
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        _insert(self, index, module)

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append every module of ``modules``."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for module in modules:
            self.append(module)
        return self

    def pop(self, index: int | slice) -> Any:
        """Remove and return the module(s) at ``index``."""
        value = self[index]
        del self[index]
        return value

    def __repr__(self) -> str:
        """Runs of equal children are printed once: ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        lines = []
        start = 0
        for end in range(1, len(reprs) + 1):
            if end < len(reprs) and reprs[end] == reprs[start]:
                continue
            count = end - start
            label = f"({start})" if count == 1 else f"({start}-{end - 1})"
            times = "" if count == 1 else f"{count} x "
            lines.append(add_indent(f"{label}: {times}{reprs[start]}", 2))
            start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered as children under their keys. No ``forward``."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``."""
        value = self[key]
        del self[key]
        return value

    def keys(self) -> Any:
        return self._modules.keys()

    def items(self) -> Any:
        return self._modules.items()

    def values(self) -> Any:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) modules from a mapping or from (key, module) pairs, in order."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is "
                                + type(pair).__name__)
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]
