"""How a lowered graph's callable is built again from its generated files alone (no graph), for
the persistent entry cache (``run/persist.py``).

A ``CompiledGraph.rebuild`` is a ``WrapperRebuild`` (kernels plus a generated wrapper) or a
``StructuredRebuild`` (one structured njit function and the output fixing around it). Each names
its files in load order (``files``), the objects it binds (``consts``: the cache finds them again
by name), JSON-able ``settings``, and ``build(paths, consts, settings, eager)`` makes the callable
in a new process. ``eager(inputs)`` stands for running the graph with NumPy, which a rebuilt
callable cannot do (the cache's run code then runs the user's function instead).

Light on purpose: no plan, no op registry (a warm start imports this module).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...graph import Node
from ...source import load_generated_module
from ..base import PasteTemplate, RunFallback
from . import runtime


@dataclass
class WrapperRebuild:
    """A generated wrapper module: import ``kernels`` (in order), then the wrapper at ``path``,
    and call its ``make_forward(*consts, fallback)``; the fallback's settings as they were."""

    path: str
    kernels: list[str]
    consts: list[Any]
    mutated: tuple[int, ...] = ()
    effects_from: tuple[str, int] | None = None
    title: str = "graph"
    fallback: RunFallback | None = None  # the live one (a failed wrapper is not persisted)
    paste: PasteTemplate | None = None  # the forward's body to paste (``forward.paste``)

    kind = "wrapper"

    def failed(self) -> bool:
        return self.fallback is not None and self.fallback.failure is not None

    def files(self) -> list[str]:
        return [*self.kernels, self.path]

    def settings(self, relative: Callable[[str], str | None]) -> dict:
        effects = self.effects_from
        return {"title": self.title, "mutated": list(self.mutated),
                "effects_from": None if effects is None else [relative(effects[0]), effects[1]],
                "paste": None if self.paste is None else self.paste.as_json()}


@dataclass
class StructuredRebuild:
    """One structured njit function (``path``, after the loop-kernel modules it imports),
    called with the graph's inputs and ``consts``; ``fixes`` restore the outputs' Python types
    (``fix_spec``); ``python_ints``: (input position, low, high) of Python int inputs."""

    path: str
    kernels: list[str]
    consts: list[Any]
    python_ints: list[tuple[int, int, int]]
    fixes: list[tuple]
    mutates: bool
    title: str = "the structured numba kernel of a graph"
    fallback: RunFallback | None = None
    mutated: tuple[int, ...] | None = None  # inputs it may write (None: every array input)
    watches_zeros: bool = False  # it computes float max/min results (``runtime.zero_watch``)
    # it computes Python ints (64-bit, overflow-checked) or int() of floats: written inputs are
    # saved for the rerun in Python whatever the FP modes
    overflows: bool = False

    kind = "structured"

    def failed(self) -> bool:
        return self.fallback is not None and self.fallback.failure is not None

    def files(self) -> list[str]:
        return [*self.kernels, self.path]

    def settings(self, relative: Callable[[str], str | None]) -> dict:
        return {"title": self.title, "python_ints": [list(t) for t in self.python_ints],
                "mutates": self.mutates,
                "mutated": None if self.mutated is None else list(self.mutated),
                "watches_zeros": self.watches_zeros, "overflows": self.overflows}

    def runner(self, kernel: Callable, eager: Callable[[tuple], tuple]) -> Callable[..., tuple]:
        """The graph's callable: the kernel, Python ints checked first, outputs fixed."""
        return structured_runner(kernel, tuple(self.consts), self.python_ints,
                                 [fixer(spec) for spec in self.fixes], self.mutates, eager,
                                 self.mutated, self.watches_zeros, self.overflows)


def structured_runner(kernel: Callable, constants: tuple, python_ints: list, fix: list,
                      mutates: bool, eager: Callable[[tuple], tuple],
                      mutated: tuple[int, ...] | None = None,
                      watches_zeros: bool = False, overflows: bool = False
                      ) -> Callable[..., tuple]:
    """FP flags: the function raises them in its loops as NumPy's ufuncs would. When one warns
    or raises (``np.seterr``), the call runs again with NumPy, which warns per op and per trip
    as the plain call; a function that writes its inputs first saves them (while some mode is
    not ``"ignore"``) and puts them back before that run. A ``ValueError``/``IndexError`` the
    function raises (numba's words, e.g. "unable to broadcast argument 1 to output array")
    does the same: NumPy then raises its own, after the same writes. ``watches_zeros``: a float max/min
    result that is a zero (``runtime.zero_watch``) does the same, inputs always saved: NumPy's
    sign of that zero is its SIMD lane order's. ``overflows``: a Python int that outgrows 64 bits
    (or ``int()`` of inf) reruns in Python, written inputs always saved."""
    def run(*inputs: Any) -> tuple:
        for i, low, high in python_ints:  # a Python int argument the kernel cannot represent
            if not low <= inputs[i] <= high:
                return eager(inputs)
        saved = None
        if mutates and (watches_zeros or overflows or runtime.fp_watch()):
            saved = [(a, a.copy()) for i, a in enumerate(inputs) if isinstance(a, np.ndarray)
                     and (mutated is None or i in mutated)]
        runtime.fp_clear()
        count = runtime.ZEROS.value if watches_zeros else 0
        try:
            results = kernel(*inputs, *constants)
        except runtime.StoreOverflow as error:  # NumPy's own error, after NumPy's writes
            raise OverflowError(str(error)) from None
        except runtime.StoreNaN as error:
            raise ValueError(str(error)) from None
        except (OverflowError, np.linalg.LinAlgError):  # LinAlgError: only where nothing mutates
            if mutates and mutated != () and saved is None:  # inputs half-updated, no copies
                raise OverflowError("a Python int in a compiled loop outgrew 64 bits (or int() "
                                    "met an infinite or huge float) after the loop had written "
                                    "to its inputs; run this function eagerly "
                                    "(astcompiler.disable) or use NumPy integers") from None
            for array, copy in saved or ():
                np.copyto(array, copy)
            return eager(inputs)  # Python's arbitrary-precision ints, Python's own errors
        except (ValueError, IndexError) as error:  # numba's wording (X14): NumPy's own error
            if type(error).__module__.startswith("numba") or (mutates and saved is None):
                raise  # (a compile error: RunFallback's; inputs not saved: numba's message)
            for array, copy in saved or ():
                np.copyto(array, copy)
            return eager(inputs)  # NumPy raises its error after the same writes
        if runtime.fp_test(runtime.FP_ALL) and runtime.fp_raised() and (
                not mutates or saved is not None):
            for array, copy in saved or ():
                np.copyto(array, copy)
            return eager(inputs)  # NumPy's warnings and FloatingPointError, trip by trip
        if watches_zeros and runtime.ZEROS.value != count:  # a float max/min is a zero: NumPy's sign
            for array, copy in saved or ():
                np.copyto(array, copy)
            return eager(inputs)
        return tuple(f(r, inputs) for f, r in zip(fix, results))
    return run


def fix_spec(node: Any, placeholders: list[Node]) -> tuple:
    """How one output of a structured kernel is restored: numba returns Python floats for NumPy
    scalars and new objects for inputs. ``("input", position)``, ``("call", type)`` (a Python or
    NumPy scalar type), ``("zerod", dtype)`` or ``("same",)``."""
    if isinstance(node, Node) and node in placeholders:
        return ("input", placeholders.index(node))
    meta = node.meta if isinstance(node, Node) else None
    if meta is not None and meta.pytype is not None:
        return ("call", meta.pytype)
    if meta is not None and meta.scalar:
        return ("call", meta.dtype.type)
    if meta is not None and meta.ndim == 0:
        return ("zerod", meta.dtype)
    return ("same",)


def fixer(spec: tuple) -> Callable[[Any, tuple], Any]:
    kind = spec[0]
    if kind == "input":
        position = spec[1]
        return lambda value, inputs: inputs[position]
    if kind == "call":
        make = spec[1]
        return lambda value, inputs: make(value)
    if kind == "zerod":
        dtype = spec[1]
        return lambda value, inputs: np.asarray(value, dtype)
    return lambda value, inputs: value


def build(rebuild_kind: str, paths: list[str], consts: list, settings: dict,
          eager: Callable[..., tuple], is_backend_error: Callable[[BaseException], bool],
          fixes: list[tuple] | None = None) -> Callable[..., tuple]:
    """The callable of a persisted lowering, from its verified files (``paths``, in load order:
    the last one is the wrapper or the structured module) and its constants found again."""
    modules = [load_generated_module(path) for path in paths]
    if rebuild_kind == "wrapper":
        effects = settings["effects_from"]
        fallback = RunFallback(eager, is_backend_error, title=settings["title"],
                               instead="as the original function (a persisted entry has no graph)",
                               mutated=tuple(settings["mutated"]),
                               effects_from=None if effects is None else tuple(effects))
        forward = modules[-1].make_forward(*consts, fallback)
        if settings.get("paste") is not None:  # (run/dispatch.py pastes its body)
            forward.paste = PasteTemplate.from_json(settings["paste"])
        return forward
    spec = StructuredRebuild(paths[-1], paths[:-1], consts,
                             [tuple(t) for t in settings["python_ints"]], list(fixes or []),
                             settings["mutates"], settings["title"],
                             mutated=None if settings.get("mutated") is None
                             else tuple(settings["mutated"]),
                             watches_zeros=settings.get("watches_zeros", False),
                             overflows=settings.get("overflows", False))
    fallback = RunFallback(eager, is_backend_error, title=spec.title,
                           instead="as the original function (a persisted entry has no graph)")
    return fallback.wrap(spec.runner(modules[-1].structured_kernel, lambda inputs: eager(*inputs)))
