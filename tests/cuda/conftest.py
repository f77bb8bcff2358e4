"""The CUDA tests run in their own pytest process (``make test`` starts it) with numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``, set before numba is imported) or, on a machine with a GPU, with
``ASTCOMPILER_CUDA_TESTS=1``. Any other process (the CPU suite) skips this folder: the simulator
cannot be switched on once numba is loaded."""

import os

_ON = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0") \
    or os.environ.get("ASTCOMPILER_CUDA_TESTS") == "1"

collect_ignore_glob = [] if _ON else ["test_*.py"]
