"""``gpu_check.sh``'s first part: one compiled function on a device array, in seconds.

Prints the versions that matter (numba, numba-cuda, NumPy, the device), compiles a pointwise
function and a sum for ``device="cuda"``, checks both against NumPy and prints the kernel's
source head. A failure here (no NVVM, a driver too old for numba-cuda) stops the check before
the long parts run.
"""

from __future__ import annotations

import importlib.metadata
import sys
import time

import numpy as np


def scaled_sine(x):
    return np.sin(x) * 2.0 + 1.0


def total(x):
    return (x * x).sum()


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def device_name() -> str:
    """The current CUDA device's name ("simulator" under numba's CUDA simulator)."""
    from numba import cuda
    if not hasattr(cuda, "get_current_device"):
        return "simulator"
    name = getattr(cuda.get_current_device(), "name", None)
    if name is None:  # numba-cuda's simulator device has no name
        return "simulator"
    return name.decode() if isinstance(name, bytes) else str(name)


def ufunc_table_report() -> str:
    """How numba-cuda's ufunc table fills with this NumPy (with NumPy 2.5.2 and numba-cuda
    0.30.4 every kernel holding a ufunc failed with ``KeyError: <ufunc ...>``): the number of
    ufuncs, or the traceback of the fill (numba-cuda's private ``_fill_ufunc_db``, called on a
    fresh dict: a diagnosis only, it changes nothing)."""
    import traceback
    try:
        from numba.cuda.np import ufunc_db
    except ImportError:
        return "numba-cuda's ufunc table: not this numba (no numba.cuda.np.ufunc_db)"
    from astcompiler.lower.numba.gpu.compat import numpy_names_for_numba_cuda
    table: dict = {}
    try:
        with numpy_names_for_numba_cuda():
            ufunc_db._fill_ufunc_db(table)
    except Exception:  # noqa: BLE001 - the report is the point
        return ("numba-cuda's ufunc table fails to fill after "
                f"{len(table)} ufuncs:\n{traceback.format_exc()}")
    return f"numba-cuda's ufunc table: {len(table)} ufuncs"


def main() -> int:
    from numba import cuda
    import numba

    import astcompiler as ac
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__},"
          f" numba-cuda {version('numba-cuda')}, device {device_name()}")
    if device_name() != "simulator":
        print(ufunc_table_report())
    x = np.linspace(-3.0, 3.0, 100_000)
    device_x = cuda.to_device(x)
    for fn, want in ((scaled_sine, scaled_sine(x)), (total, total(x))):
        compiled = ac.compile(fn)
        start = time.perf_counter()
        got = compiled(device_x)
        got = got.copy_to_host() if hasattr(got, "copy_to_host") else got
        seconds = time.perf_counter() - start
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            print(f"gpu_smoke: {fn.__name__} disagrees with NumPy", file=sys.stderr)
            return 1
        print(f"{fn.__name__}: agrees with NumPy (first call {seconds:.2f} s)")
    print("\n".join(compiled.entries[-1].output_code.splitlines()[:12]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
