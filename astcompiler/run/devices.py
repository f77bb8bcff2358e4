"""The ``device`` of a compiled function: which calls compile for the CUDA target.

``device="cuda"``, or ``device=None`` with a device array among the arguments, and the numba
backend: capture runs on host copies of the device arrays (``HostStandIns``; compile time only),
the guard checks each such argument's device type (host and device calls are separate entries),
and the graph is lowered by the CUDA target (``lower/numba/cuda``). Such entries are not written
to the persistent entry cache.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

from ..logs import get_logger


EAGER = "eager"  # ``cuda_entry``: run this call eagerly, compile nothing


def cuda_entry(fn: types.FunctionType, args: tuple, kwargs: dict, device: str | None,
               backend: Any, build: Callable[..., Any]) -> Any:
    """The CUDA target's entry for this call (``build``: ``entry.build_entry`` with the other
    options bound), None when the call is not for the CUDA target, or ``EAGER`` when device
    arguments overlap in memory (the call runs the original function; no entry)."""
    if backend != "numba" or device == "cpu":
        return None
    from ..lower.numba.cuda.devices import HostStandIns, device_overlap, require_cuda, wants_cuda
    if not wants_cuda(device, args, kwargs):
        return None
    require_cuda()
    if device_overlap(args, kwargs):
        get_logger("graph_breaks").info("%s: device arrays that share memory were passed; the "
                                        "call runs eagerly", getattr(fn, "__qualname__", fn))
        return EAGER
    from ..lower.numba.cuda import cuda_backend
    from ..lower.numba.cuda.devices import device_id
    inputs = HostStandIns(fn, args, kwargs)
    on_device: bool | str = "cupy" if inputs.cupy else bool(inputs.device_types)
    backend = functools.partial(cuda_backend, on_device=on_device)
    entry = build(fn, inputs.args, inputs.kwargs, backend, adjust_guards=inputs.guards)
    tests = []
    if len(inputs.device_types) >= 2:
        tests.append(lambda a, k: not device_overlap(a, k))
    if inputs.device_ids:  # which GPU each device argument lives on
        tests.append(_same_devices(fn, inputs.device_ids, device_id))
    if tests:
        _also_require(entry, tests)
    return entry


def _same_devices(fn: types.FunctionType, ids: dict[str, int],
                  device_id: Callable[[Any], int]) -> Callable[[tuple, dict], bool]:
    """A test that each device argument lives on the GPU it lived on at compile time."""
    names = list(inspect.signature(fn).parameters)
    where = [(names.index(name) if name in names else -1, name, want)
             for name, want in ids.items()]

    def same(args: tuple, kwargs: dict) -> bool:
        for position, name, want in where:
            value = args[position] if 0 <= position < len(args) else kwargs.get(name)
            if device_id(value) != want:
                return False
        return True
    return same


def _also_require(entry: Any, tests: list[Callable[[tuple, dict], bool]]) -> None:
    """The entry's guard also requires ``tests`` (device arguments that do not share memory,
    the GPU each argument lives on). The entry's own guard pins the arguments' kinds already;
    which GPU a device array is on is not a fact capture records (one ordinal per array)."""
    from .sentinels import MISS
    check, guarded = entry.guard.check, entry.guarded

    def holds(args: tuple, kwargs: dict) -> bool:
        return all(test(args, kwargs) for test in tests)

    def also_check(*args: Any, **kwargs: Any) -> bool:
        return check(*args, **kwargs) and holds(args, kwargs)

    def also_guarded(*args: Any, **kwargs: Any) -> Any:
        return guarded(*args, **kwargs) if holds(args, kwargs) else MISS
    entry.guard.check, entry.guarded = also_check, also_guarded
