"""The ``device`` of a compiled function: which calls compile for the CUDA target.

``device="cuda"``, or ``device=None`` with a device array among the arguments, and the numba
backend: capture runs on host copies of the device arrays (``HostStandIns``; compile time only),
the guard checks each such argument's device type (host and device calls are separate entries),
and the graph is lowered by the CUDA target (``lower/numba/gpu``). Such entries are not written
to the persistent entry cache. Each entry runs inside ``cuda.gpus[id]`` of its device arguments'
GPU (arguments on two GPUs: ``MixedDevicesError``); an eager entry of a device call (a graph
break, a capture that raised) and every eager call with device arrays (past the recompile
limit, device arrays that share memory, the eager stances, ``disable=True``: ``eager_call``) run
the function with NumPy on host copies of the device arrays (``HostRun``), never on the device
arrays themselves (NumPy cannot run on them), so every stance gives the compiled call's results.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from typing import Any, Callable

from ..logs import get_logger


EAGER = "eager"  # ``cuda_entry``: run this call eagerly, compile nothing


def cuda_entry(fn: types.FunctionType, args: tuple, kwargs: dict, device: str | None,
               backend: Any, build: Callable[..., Any]) -> Any:
    """The CUDA target's entry for this call (``build``: ``entry.build_entry`` with the other
    options bound), None when the call is not for the CUDA target, or ``EAGER`` when device
    arguments overlap in memory or come in ``*args``/``**kwargs`` (the call runs with NumPy on
    host copies, which overlap as the device arrays do: ``eager_call``; no entry). Backends
    other than numba get an entry built and run on host copies (``_host_entry``)."""
    if device == "cpu":
        return None
    from ..lower.numba.gpu.devices import (HostStandIns, device_overlap, require_cuda,
                                            unnamed_device_arrays, wants_cuda)
    if not wants_cuda(device, args, kwargs):
        return None
    if backend != "numba":  # NumPy backends: the entry on host copies (``HostRun``)
        return _host_entry(fn, args, kwargs, backend, build)
    require_cuda()
    from ..lower.numba.gpu.devices import HostRun, device_id, gpu_of
    if device_overlap(args, kwargs) or unnamed_device_arrays(fn, args, kwargs):
        get_logger("graph_breaks").info("%s: device arrays that share memory, or in *args or "
                                        "**kwargs, were passed; the call runs eagerly",
                                        getattr(fn, "__qualname__", fn))
        return EAGER
    from ..lower.numba.gpu import cuda_backend
    inputs = HostStandIns(fn, args, kwargs)
    gpu = gpu_of(inputs.device_ids)  # raises when device arguments live on different GPUs
    on_device: bool | str = "cupy" if inputs.cupy else bool(inputs.device_types)
    backend = functools.partial(cuda_backend, on_device=on_device)
    # no split at a graph break: its Python statement would run on the device arrays
    split = {"make_piece": None} if inputs.device_types else {}
    entry = build(fn, inputs.args, inputs.kwargs, backend, adjust_guards=inputs.guards, **split)
    if inputs.device_types and entry.is_eager:  # NumPy on host copies, copied back
        _replace_run(entry, HostRun(fn, inputs.cupy))
    if gpu is not None:  # kernels launch on the GPU the arrays live on
        _replace_run(entry, _on_gpu(entry.run, gpu))
    tests = []
    if len(inputs.device_types) >= 2:
        tests.append(lambda a, k: not device_overlap(a, k))
    if inputs.device_ids:  # which GPU each device argument lives on
        tests.append(_same_devices(fn, inputs.device_ids, device_id))
    if tests:
        _also_require(entry, tests)
    return entry


def _host_entry(fn: types.FunctionType, args: tuple, kwargs: dict, backend: Any,
                build: Callable[..., Any]) -> Any:
    """A call with device arrays for a backend that runs NumPy on the host (``eager``,
    ``aot_eager``, a callable): built on host copies, run on host copies (``HostRun``: written
    copies go back, results are device arrays). None without device arguments."""
    from ..lower import lookup_backend
    from ..lower.numba.gpu.devices import (HostRun, HostStandIns, device_overlap,
                                            unnamed_device_arrays)
    if device_overlap(args, kwargs) or unnamed_device_arrays(fn, args, kwargs):
        return EAGER
    inputs = HostStandIns(fn, args, kwargs)
    if not inputs.device_types:
        return None
    entry = build(fn, inputs.args, inputs.kwargs, lookup_backend(backend),
                  adjust_guards=inputs.guards)
    _replace_run(entry, HostRun(entry.run, inputs.cupy))
    if len(inputs.device_types) >= 2:
        _also_require(entry, [lambda a, k: not device_overlap(a, k)])
    return entry


def eager_call(fn: types.FunctionType, device: str | None, args: tuple, kwargs: dict) -> Any:
    """Run ``fn`` eagerly (no entry: the recompile limit, device arrays that share memory, the
    ``force_eager``/``eager_on_recompile``/``eager_then_compile`` stances, ``disable=True``):
    with NumPy on host copies of its device arguments when it has some (``HostRun``; copies of
    arrays that share memory share it too), else as called. Nothing imports numba for host
    calls."""
    values = (*args, *kwargs.values())
    if device == "cpu" or not ("numba.cuda" in sys.modules or any(
            hasattr(type(v), "__cuda_array_interface__") for v in values)):
        return fn(*args, **kwargs)  # no device array can exist: nothing imported
    from ..lower.numba.gpu.devices import is_device_array
    if not any(is_device_array(v) for v in values):
        return fn(*args, **kwargs)
    from ..lower.numba.gpu.devices import HostRun, device_id, is_cupy, launching_on
    arrays = [v for v in values if is_device_array(v)]
    run = HostRun(fn, any(is_cupy(type(v)) for v in arrays))
    gpus = {device_id(v) for v in arrays}
    if len(gpus) != 1:  # (arrays on two GPUs: NumPy on their host copies, results here)
        return run(*args, **kwargs)
    with launching_on(gpus.pop()):  # results on the arguments' GPU
        return run(*args, **kwargs)


def _replace_run(entry: Any, run: Callable[..., Any]) -> None:
    """``entry`` runs ``run`` (its guarded run too) under its own guard."""
    from .sentinels import MISS
    check = entry.guard.check

    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            ok = check(*args, **kwargs)
        except Exception:  # noqa: BLE001 - as ``CacheEntry.guarded``: not this entry
            return MISS
        return run(*args, **kwargs) if ok else MISS
    entry.run, entry.guarded = run, guarded


def _on_gpu(run: Callable[..., Any], gpu: int) -> Callable[..., Any]:
    """``run`` inside ``cuda.gpus[gpu]`` (``devices.launching_on``): launches and allocations
    happen on the GPU the device arguments live on."""
    from ..lower.numba.gpu.devices import launching_on

    def on_gpu(*args: Any, **kwargs: Any) -> Any:
        with launching_on(gpu):
            return run(*args, **kwargs)
    return on_gpu


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
