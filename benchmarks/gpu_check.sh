#!/usr/bin/env bash
# On a machine with a CUDA GPU: the CUDA tests on the GPU, then workloads 1-7 at GPU sizes
# (benchmarks/gpu_bench.py: NumPy, astcompiler on device arrays, CuPy when installed).
# Usage: bash benchmarks/gpu_check.sh [--quick]    (run from the repository root; under 5 minutes)
set -euo pipefail
PY=${PY:-.venv/bin/python}
unset NUMBA_ENABLE_CUDASIM
"$PY" -c "from numba import cuda; assert cuda.is_available(), 'no CUDA GPU here'; print(cuda.get_current_device().name)"
ASTCOMPILER_CUDA_TESTS=1 timeout 180 "$PY" -m pytest -q -x -p no:cacheprovider tests/cuda
timeout 120 "$PY" benchmarks/gpu_bench.py "$@"
