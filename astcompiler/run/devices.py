"""The ``device`` of a compiled function: which calls compile for the CUDA target.

``device="cuda"``, or ``device=None`` with a device array among the arguments, and the numba
backend: capture runs on host copies of the device arrays (``HostStandIns``; compile time only),
the guard checks each such argument's device type (host and device calls are separate entries),
and the graph is lowered by the CUDA target (``lower/numba/cuda``). Such entries are not written
to the persistent entry cache.
"""

from __future__ import annotations

import functools
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
    inputs = HostStandIns(fn, args, kwargs)
    backend = functools.partial(cuda_backend, on_device=bool(inputs.device_types))
    entry = build(fn, inputs.args, inputs.kwargs, backend, adjust_guards=inputs.guards)
    if len(inputs.device_types) >= 2:
        _exclusive(entry, device_overlap)
    return entry


def _exclusive(entry: Any, overlap: Callable[[tuple, dict], bool]) -> None:
    """The entry's guard also requires its device arguments not to share memory."""
    from .sentinels import MISS
    check, guarded = entry.guard.check, entry.guarded

    def exclusive_check(*args: Any, **kwargs: Any) -> bool:
        return check(*args, **kwargs) and not overlap(args, kwargs)

    def exclusive_guarded(*args: Any, **kwargs: Any) -> Any:
        return MISS if overlap(args, kwargs) else guarded(*args, **kwargs)
    entry.guard.check, entry.guarded = exclusive_check, exclusive_guarded
