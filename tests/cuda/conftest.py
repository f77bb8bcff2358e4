"""The CUDA tests run in their own pytest process (``make test`` starts it) with numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``, set before numba is imported) or, on a machine with a GPU, with
``ASTCOMPILER_CUDA_TESTS=1``. Any other process (the CPU suite) skips this folder: the simulator
cannot be switched on once numba is loaded."""

import os

_ON = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0") \
    or os.environ.get("ASTCOMPILER_CUDA_TESTS") == "1"

collect_ignore_glob = [] if _ON else ["test_*.py"]


if _ON:
    import pytest

    @pytest.fixture
    def copies(monkeypatch):
        """Counts the host->device and device->host array copies of the wrappers' transfers."""
        from numba import cuda

        from astcompiler.lower.numba.gpu import runtime

        counts = {"up": 0, "down": 0}
        real_up, real_down = cuda.to_device, runtime.to_host

        def up(value, *args, **kwargs):
            counts["up"] += 1
            return real_up(value, *args, **kwargs)

        def down(value):
            counts["down"] += 1
            return real_down(value)
        monkeypatch.setattr(cuda, "to_device", up)
        monkeypatch.setattr(runtime, "to_host", down)
        return counts
