"""Which inputs live on a GPU, whether a CUDA target is there, and host stand-ins for capture.

Nothing here imports numba unless a device array could exist (numba already loaded) or the CUDA
target is asked for: selecting the target for ``device=None`` costs a few attribute checks.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
from typing import Any

import numpy as np


class CudaUnavailableError(RuntimeError):
    """``device="cuda"`` (or a device-array input) without a GPU and without the simulator."""


HOW_TO_ENABLE = (
    "astcompiler's CUDA target needs either a CUDA GPU with its driver and numba-cuda "
    "(`pip install astcompiler[cuda]`, plus `numba-cuda[cu12]` or `[cu13]` for NVVM), or numba's "
    "CUDA simulator: set NUMBA_ENABLE_CUDASIM=1 in the environment before numba is imported "
    "(slow: for tests only)")


def is_device_array(value: Any) -> bool:
    """A CUDA device array: it exposes ``__cuda_array_interface__`` (CuPy, numba), or numba
    recognises it (the simulator's ``FakeCUDAArray`` has no interface)."""
    if isinstance(value, np.ndarray):
        return False
    if hasattr(type(value), "__cuda_array_interface__"):
        return True
    if "numba.cuda" not in sys.modules:  # no numba device array can exist yet
        return False
    from numba.cuda import devicearray  # an attribute: the simulator has no such module
    return bool(devicearray.is_cuda_ndarray(value))


def simulator_enabled() -> bool:
    """numba's CUDA simulator is on (read from numba when it is loaded, else the environment)."""
    if "numba" in sys.modules:
        from numba.core import config as numba_config
        return bool(numba_config.ENABLE_CUDASIM)
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def require_cuda() -> None:
    """Raise ``CudaUnavailableError`` (with how to enable a target) unless kernels can run."""
    try:
        from numba import cuda
    except ImportError as error:  # numba without its CUDA package
        raise CudaUnavailableError(f"numba.cuda cannot be imported ({error}). "
                                   + HOW_TO_ENABLE) from None
    if simulator_enabled():
        make_simulator_shared_arrays_thread_safe()
        return
    try:
        available = bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver is "no GPU" too
        available = False
    if not available:
        raise CudaUnavailableError("no CUDA GPU is available and numba's CUDA simulator is off. "
                                   + HOW_TO_ENABLE)


_SHARED_ALLOCATION = threading.Lock()


def make_simulator_shared_arrays_thread_safe() -> None:
    """Serialise the simulator's ``cuda.shared.array`` allocations (idempotent).

    numba's simulator runs a block's threads as Python threads and gives them one shared array
    per source line by a look-up then a store without a lock: two threads can each miss and each
    make an array, so part of the block writes where the rest never reads (a tree reduction
    then loses those threads' values: measured 56 of 200 eight-thread launches). The same
    allocation under one lock gives every thread of the block the same array, as on a GPU.
    """
    from numba.cuda.simulator import kernelapi
    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, "astcompiler_thread_safe", False):
        return
    unlocked = shared.array

    def array(self: Any, shape: Any, dtype: Any) -> Any:
        if shape == 0:  # dynamic shared memory: one buffer made with the launch, no race
            return unlocked(self, shape, dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)  # the simulator's key: file, line
        with _SHARED_ALLOCATION:
            found = self._allocations.get(key)
            if found is None:
                found = self._allocations[key] = np.empty(shape, _numpy_dtype(dtype))
        return found

    array.astcompiler_thread_safe = True  # type: ignore[attr-defined]
    shared.array = array


def _numpy_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype for a numba type or anything ``np.dtype`` reads."""
    from numba.core import types
    from numba.np import numpy_support
    return numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else np.dtype(dtype)


def wants_cuda(device: str | None, args: tuple, kwargs: dict) -> bool:
    """The CUDA target: ``device="cuda"``, or ``device=None`` with a device array among the
    arguments (top level)."""
    if device == "cuda":
        return True
    if device is not None:
        return False
    return any(is_device_array(v) for v in args) or any(is_device_array(v)
                                                         for v in kwargs.values())


def unnamed_device_arrays(fn: Any, args: tuple, kwargs: dict) -> bool:
    """Device arrays among the values of ``*args`` or ``**kwargs`` parameters: capture's host
    stand-ins cover named parameters only, so such calls run eagerly (``HostRun`` copies every
    device array of the call, these too)."""
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return False
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL and any(is_device_array(v) for v in value):
            return True
        if kind is inspect.Parameter.VAR_KEYWORD and any(is_device_array(v)
                                                         for v in value.values()):
            return True
    return False


class HostStandIns:
    """Host copies of the device arrays among a call's named arguments, for capture (which
    models NumPy arrays); the guard facts on those arguments then check the device type."""

    def __init__(self, fn: Any, args: tuple, kwargs: dict):
        self.device_types: dict[str, type] = {}  # source name (``L['x']``) -> device type
        copies: dict[int, np.ndarray] = {}  # one copy per device object: aliasing is kept
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except (TypeError, ValueError):
            self.args, self.kwargs = args, kwargs
            return
        from ....capture.sizes.dynamic import MARKERS
        self.device_ids: dict[str, int] = {}  # parameter name -> the GPU it lives on
        for name, value in list(bound.arguments.items()):
            if is_device_array(value):
                if id(value) not in copies:
                    copies[id(value)] = to_host(value)
                    for dim, marker in MARKERS.get(value).items():  # mark_dynamic on it
                        MARKERS.mark(copies[id(value)], dim, marker)
                bound.arguments[name] = copies[id(value)]
                self.device_types[f"L[{name!r}]"] = type(value)
                self.device_ids[name] = device_id(value)
        self.args, self.kwargs = bound.args, bound.kwargs
        self.cupy = any(is_cupy(kind) for kind in self.device_types.values())

    def guards(self, guards: Any) -> Any:
        """``guards`` (a ``GuardSet``) with the array facts of device arguments checking their
        device type (and a type fact for each, so that an argument the code never read still
        decides where results go); ``writeable`` facts on them dropped (device arrays are
        always writeable)."""
        if not self.device_types:
            return guards
        from ....capture.sources import local_source
        fixed = type(guards)()
        for name, device in self.device_types.items():  # each argument's kind, read or not
            fixed.add("type", local_source(name[3:-2]), device)
        for fact in guards.facts:
            device = self.device_types.get(fact.source.name)
            if device is None:
                fixed.add(fact.kind, fact.source, fact.value, fact.extra)
            elif fact.kind == "array":
                dtype, shape, _ = fact.value
                fixed.add("array", fact.source, (dtype, shape, device), fact.extra)
            elif fact.kind != "writeable" or not fact.value:
                fixed.add(fact.kind, fact.source, fact.value, fact.extra)
        return fixed


def _interface(value: Any) -> dict | None:
    """A device array's ``__cuda_array_interface__`` (the simulator's device arrays show their
    host array's ``__array_interface__``: its "device" memory is host memory), None if none."""
    face = getattr(value, "__cuda_array_interface__", None)
    if face is None:
        try:
            face = getattr(value, "__array_interface__")
        except AttributeError:
            return None
    return face


def _extent(value: Any) -> tuple[int, int] | None:
    """The byte range an array's elements span (device or host pointer), None if unknown or
    empty."""
    face = _interface(value)
    if face is None:
        return None
    shape = tuple(face["shape"])
    if any(size == 0 for size in shape):
        return None
    itemsize = np.dtype(face["typestr"]).itemsize
    strides = face.get("strides")
    if strides is None:  # C-contiguous
        strides, step = [], itemsize
        for size in reversed(shape):
            strides.insert(0, step)
            step *= size
    low = high = int(face["data"][0])
    for size, stride in zip(shape, strides):
        if stride < 0:
            low += (size - 1) * stride
        else:
            high += (size - 1) * stride
    return low, high + itemsize


def device_overlap(args: tuple, kwargs: dict) -> bool:
    """Two different device-array arguments whose memory overlaps (views of one buffer): capture
    works on host copies, which could not see a write through one in the other."""
    arrays = [v for v in (*args, *kwargs.values()) if is_device_array(v)]
    if len(arrays) < 2:
        return False
    spans = []
    for array in {id(a): a for a in arrays}.values():
        if 0 in tuple(getattr(array, "shape", ())):
            continue  # no elements: nothing to share
        extent = _extent(array)
        if extent is None:
            return True  # unknown: assume the worst
        spans.append(extent)
    spans.sort()
    return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))


def to_host(value: Any) -> np.ndarray:
    """A host copy of a device array (numba's, CuPy's, or any ``__cuda_array_interface__``)."""
    if hasattr(value, "copy_to_host"):
        return np.asarray(value.copy_to_host())
    if hasattr(value, "get"):  # CuPy
        return np.asarray(value.get())
    if hasattr(type(value), "__cuda_array_interface__"):
        return np.asarray(as_numba_array(value).copy_to_host())
    raise TypeError(f"cannot copy a {type(value).__name__} to the host")


def write_back(device: Any, host: np.ndarray) -> None:
    """Copy ``host`` (a written host copy) into the device array it was copied from."""
    if hasattr(device, "copy_to_device"):
        device.copy_to_device(host)
    elif hasattr(device, "set"):  # CuPy
        device.set(host)
    elif hasattr(type(device), "__cuda_array_interface__"):
        as_numba_array(device).copy_to_device(host)
    else:
        raise TypeError(f"cannot copy into a {type(device).__name__}")


def as_numba_array(value: Any) -> Any:
    """A numba device array viewing ``value``'s memory (no copy): itself when numba made it;
    ``numba.cuda.as_cuda_array`` of an object with ``__cuda_array_interface__`` (CuPy and
    others) on a GPU; under the simulator, whose "device" memory is host memory and which does
    not read the interface, the simulator's array wrapping a host view of the same pointer."""
    from numba import cuda
    from numba.cuda import devicearray
    if devicearray.is_cuda_ndarray(value):
        return value
    if not simulator_enabled():
        return cuda.as_cuda_array(value)
    face = value.__cuda_array_interface__
    dtype, shape = np.dtype(face["typestr"]), tuple(face["shape"])
    strides = face.get("strides")
    steps = list(strides) if strides is not None else \
        [dtype.itemsize * int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    if any(step < 0 for step in steps):
        raise TypeError("negative strides in a __cuda_array_interface__ are not supported")
    nbytes = 0 if 0 in shape else dtype.itemsize + sum(
        (size - 1) * step for size, step in zip(shape, steps))
    import ctypes
    buffer = (ctypes.c_char * max(nbytes, 1)).from_address(int(face["data"][0]))
    host = np.ndarray(shape, dtype, buffer=buffer, strides=strides)
    return devicearray.FakeCUDAArray(host)


def array_layout(value: Any) -> tuple[tuple, tuple, np.dtype] | None:
    """A device array's (shape, byte strides, dtype), None if it shows none (C-contiguous
    when its interface has no strides)."""
    face = _interface(value)
    if face is None:
        return None
    shape, dtype = tuple(int(n) for n in face["shape"]), np.dtype(face["typestr"])
    strides = getattr(value, "strides", None) or face.get("strides")
    return shape, tuple(int(s) for s in strides) if strides is not None \
        else c_strides(shape, dtype.itemsize), dtype


def c_strides(shape: tuple, itemsize: int) -> tuple:
    """The byte strides of a C-contiguous array of ``shape``."""
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.insert(0, step)
        step *= max(int(size), 1)
    return tuple(strides)


def device_view(root: Any, offset: int, shape: tuple, strides: tuple, dtype: np.dtype) -> Any:
    """A numba device array viewing the memory of ``root`` (a C-contiguous device array) from
    byte ``offset`` (its first element) with ``shape`` and non-negative ``strides``: no copy,
    writes through it reach ``root``. On a GPU this is numba's own slicing (a view of the
    allocation, ``gpu_data.view``); under the simulator a NumPy view of the host memory."""
    from numba.cuda import devicearray
    array = as_numba_array(root)
    if simulator_enabled():
        host = np.ndarray(shape, dtype, buffer=np.asarray(array).reshape(-1), offset=offset,
                          strides=strides)
        return devicearray.FakeCUDAArray(host)
    extent = dtype.itemsize + sum((size - 1) * step for size, step in zip(shape, strides))
    return devicearray.DeviceNDArray(shape, strides, dtype, stream=array.stream,
                                     gpu_data=array.gpu_data.view(offset, offset + extent))


def device_id(value: Any) -> int:
    """The ordinal of the GPU an array lives on: CuPy's ``.device.id``, numba's context device;
    0 when the array does not say (the simulator has one device)."""
    device = getattr(value, "device", None)
    if device is not None and isinstance(getattr(device, "id", None), int):
        return int(device.id)
    data = getattr(value, "gpu_data", None)
    context = getattr(data, "context", None)
    found = getattr(getattr(context, "device", None), "id", None)
    return int(found) if isinstance(found, int) else 0


def is_cupy(kind: type) -> bool:
    """A CuPy array type (results of calls on CuPy arrays are CuPy arrays)."""
    return kind.__module__.split(".")[0] == "cupy"


def as_cupy(value: Any) -> Any:
    """A CuPy array viewing a device array (no copy; CuPy reads the interface)."""
    import cupy  # only reached when the call's inputs were CuPy arrays
    return cupy.asarray(value)


class MixedDevicesError(ValueError):
    """Device arguments of one call live on different GPUs."""


def gpu_of(ids: dict[str, int]) -> int | None:
    """The GPU a call's device arguments live on (``ids``: parameter name -> ordinal), None for
    none; ``MixedDevicesError`` when they live on different GPUs (no kernel reads two GPUs'
    memory, and NumPy's semantics do not say which one the result belongs to)."""
    found = sorted(set(ids.values()))
    if len(found) > 1:
        where = ", ".join(f"{name} on GPU {gpu}" for name, gpu in ids.items())
        raise MixedDevicesError(
            f"astcompiler's CUDA target: the device arrays of one call must live on one GPU "
            f"({where}); copy them to one GPU first (e.g. with `cuda.gpus[i]` and "
            "`copy_to_device`)")
    return found[0] if found else None


def launching_on(gpu: int) -> Any:
    """The context manager that makes ``gpu`` the current device (``numba.cuda.gpus[gpu]``):
    kernels launch, and device arrays are allocated, on the GPU the arguments live on."""
    from numba import cuda
    return cuda.gpus[gpu]


class HostRun:
    """The eager fallback of a device call (a graph break, or a capture that raised): ``fn`` on
    host copies of its device arguments, so NumPy runs it (its values, warnings and exceptions,
    as the plain call on host arrays). Afterwards, also when it raised, each host copy is
    copied back into its device array (a mutation is visible to the caller); returned arrays
    are device arrays again (a returned argument: the caller's device array itself; CuPy
    arrays when the inputs were), 0-d results NumPy scalars, tuples element by element."""

    def __init__(self, fn: Any, cupy: bool):
        self.fn, self.cupy = fn, cupy
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        copies = HostCopies([v for v in (*args, *kwargs.values()) if is_device_array(v)])
        host_args = tuple(copies.host(v) for v in args)
        host_kwargs = {k: copies.host(v) for k, v in kwargs.items()}
        try:
            result = self.fn(*host_args, **host_kwargs)
        finally:
            copies.write_back()
        return self.output(result, copies.originals())

    def output(self, value: Any, originals: dict[int, Any]) -> Any:
        if type(value) is tuple:
            return tuple(self.output(v, originals) for v in value)
        if not isinstance(value, np.ndarray) or value.ndim == 0:
            return value
        if id(value) in originals:  # an argument returned: the caller's own device array
            return originals[id(value)]
        from numba import cuda
        device = cuda.to_device(np.ascontiguousarray(value))
        return as_cupy(device) if self.cupy else device


class _ByteSpan:
    """``__cuda_array_interface__`` of the bytes ``[low, high)`` of device memory (viewed with
    ``as_numba_array``); ``owner`` keeps the memory alive while the view lives."""

    def __init__(self, low: int, high: int, owner: Any):
        self.owner = owner
        self.__cuda_array_interface__ = {"shape": (high - low,), "typestr": "|u1",
                                         "data": (low, False), "strides": None, "version": 3}


class HostCopies:
    """Host copies of a call's device arrays that keep their aliasing: one copy per device
    object (an array passed twice is one host array), and device arrays whose memory overlaps
    (views of one buffer: ``d[1:]``, ``d[:-1]``) become views of ONE host copy of the bytes
    they span together, laid out as on the device, so a write through one is seen in the other
    as NumPy would see it. ``write_back`` copies each copy (each span) back afterwards."""

    def __init__(self, arrays: list) -> None:
        self.copies: dict[int, tuple[Any, np.ndarray]] = {}  # id(device) -> (device, host)
        self.backs: list[tuple[Any, np.ndarray]] = []  # (device array or span, host copy)
        unique = list({id(a): a for a in arrays}.values())
        spans: list[tuple[int, int, int]] = []  # (low, high, index into unique)
        alone = []  # empty (or no interface): nothing to share
        for index, array in enumerate(unique):
            extent = _extent(array)
            if extent is None:
                alone.append(array)
            else:
                spans.append((*extent, index))
        groups: list[list] = []  # [low, high, members] of overlapping arrays, by address
        for low, high, index in sorted(spans):
            if groups and low < groups[-1][1]:
                groups[-1][1] = max(groups[-1][1], high)
                groups[-1][2].append(unique[index])
            else:
                groups.append([low, high, [unique[index]]])
        alone += [group[2][0] for group in groups if len(group[2]) == 1]
        for array in alone:
            copy = to_host(array)
            self.copies[id(array)] = (array, copy)
            self.backs.append((array, copy))
        for low, high, members in (g for g in groups if len(g[2]) > 1):
            span = as_numba_array(_ByteSpan(low, high, members[0]))
            raw = np.asarray(span.copy_to_host())
            for array in members:
                face = _interface(array) or {}
                host = np.ndarray(tuple(face["shape"]), np.dtype(face["typestr"]), buffer=raw,
                                  offset=int(face["data"][0]) - low, strides=face.get("strides"))
                self.copies[id(array)] = (array, host)
            self.backs.append((span, raw))

    def host(self, value: Any) -> Any:
        """``value``'s host copy (itself unless it is one of the device arrays)."""
        known = self.copies.get(id(value))
        return value if known is None or known[0] is not value else known[1]

    def write_back(self) -> None:
        """Every host copy (written or not) back into the device memory it came from."""
        for device, copy in self.backs:
            write_back(device, copy)

    def originals(self) -> dict[int, Any]:
        """id(host copy) -> its device array (a returned argument is the caller's own)."""
        return {id(copy): device for device, copy in self.copies.values()}
