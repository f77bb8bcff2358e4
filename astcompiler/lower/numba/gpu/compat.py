"""Habits of numba-cuda (the ``cuda`` extra) that a compiled call must not show its user.

1. **NumPy names numba-cuda registers that this NumPy removed.** numba-cuda 0.30 declares an
   overload of ``np.row_stack`` when its array typing (``numba.cuda.np.arrayobj``) loads, at
   the first kernel compile; NumPy 2.5 removed that alias of ``np.vstack``, so on NumPy 2.5
   every kernel failed to compile (``AttributeError: module 'numpy' has no attribute
   'row_stack'``, seen on an H200 machine with numba-cuda 0.30.4 and NumPy 2.5.2) and ran on
   the host. ``numpy_names_for_numba_cuda`` lends a stand-in for each missing name around
   launches until that module has loaded, then takes them away again: NumPy looks as it did,
   and the overload numba-cuda registers is for the stand-in, never called.
2. **Low-occupancy warnings.** numba-cuda warns (``NumbaPerformanceWarning``: "Grid size 4
   will likely result in GPU under-utilization") on every launch of fewer than 128 blocks:
   a reduction's second pass, one block per row of a small array, a device loop. NumPy does
   not warn there, and the user cannot act on a grid the compiler chose: ``quiet_launches``
   turns numba-cuda's switch for that warning off around this target's launches only.
3. **An unfilled ufunc table.** With NumPy 2.5.2, numba-cuda 0.30.4 compiled no kernel that
   holds a ufunc (``KeyError: <ufunc 'multiply'>``; cause inside numba-cuda not found yet):
   such kernels run on the host, and ``failure_text`` says in the warning what to do.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any, Iterator

import numpy as np

REMOVED_NUMPY_NAMES = ("row_stack",)  # NumPy 2.5 removed them; numba-cuda 0.30 overloads them
_LENDING = threading.RLock()


def _typing_loaded() -> bool:
    return any(name.endswith("cuda.np.arrayobj") for name in sys.modules)


@contextlib.contextmanager
def numpy_names_for_numba_cuda() -> Iterator[None]:
    """Around a launch (a kernel's first launch compiles it): until numba-cuda's array typing
    has loaded, the NumPy names it registers overloads for that this NumPy removed are lent
    to ``numpy`` (stand-ins that are never called), then taken away again. Lending around the
    launch, not importing that module ourselves, keeps numba-cuda's own import order."""
    if _typing_loaded() or all(hasattr(np, name) for name in REMOVED_NUMPY_NAMES):
        yield
        return
    with _LENDING:
        lent = [name for name in REMOVED_NUMPY_NAMES if not hasattr(np, name)]
        for name in lent:
            setattr(np, name, _stand_in(name))
        try:
            yield
        finally:
            for name in lent:
                delattr(np, name)


def _stand_in(name: str) -> Any:
    def removed(*args: Any, **kwargs: Any) -> Any:
        raise AttributeError(f"numpy has no attribute {name!r}")
    removed.__name__ = removed.__qualname__ = name
    return removed


def _launch_config_module() -> Any:
    """numba-cuda's (or numba's) config module that holds ``CUDA_LOW_OCCUPANCY_WARNINGS``."""
    for name in ("numba.cuda.core.config", "numba.core.config"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "CUDA_LOW_OCCUPANCY_WARNINGS"):
            return module
    return None


@contextlib.contextmanager
def quiet_launches() -> Iterator[None]:
    """No low-occupancy ``NumbaPerformanceWarning`` from the launches inside (the switch is
    numba-cuda's own; it is restored after; a launch of the user's own kernel in another thread
    at that moment misses that warning too)."""
    config = _launch_config_module()
    if config is None or not config.CUDA_LOW_OCCUPANCY_WARNINGS:
        yield
        return
    before, config.CUDA_LOW_OCCUPANCY_WARNINGS = config.CUDA_LOW_OCCUPANCY_WARNINGS, 0
    try:
        yield
    finally:
        config.CUDA_LOW_OCCUPANCY_WARNINGS = before


def failure_text(error: BaseException, summary: str) -> str:
    """``"KeyError: ..."`` for a kernel's compile failure, with what to do where the cause is a
    known mismatch of numba-cuda and NumPy rather than the kernel."""
    text = f"{type(error).__name__}: {summary}"
    if isinstance(error, KeyError) and error.args and isinstance(error.args[0], np.ufunc):
        text += (f"; numba-cuda's ufunc table lacks it under NumPy {np.__version__} (seen with "
                 "numba-cuda 0.30.4 and NumPy 2.5.2: every kernel with a ufunc fails): install a "
                 "NumPy release your numba-cuda supports, e.g. pip install 'numpy<2.5'")
    return text
