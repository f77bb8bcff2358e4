#!/usr/bin/env bash
# On a machine with a CUDA GPU, one command, under 5 minutes: the CUDA tests on the GPU (every
# kernel is compiled by NVVM there, so the op-info table runs its float64 cases only), then
# workloads 1-7 and the GPU rows (tiled matmul, column reductions, a host loop) at GPU sizes
# (benchmarks/gpu_bench.py: NumPy, astcompiler on device arrays, CuPy and torch.compile on CUDA
# when installed). Each part has its own time limit; a failing part is reported and the next runs.
# Usage: bash benchmarks/gpu_check.sh [--quick]    (run from the repository root)
set -uo pipefail
PY=${PY:-.venv/bin/python}
simulated=${NUMBA_ENABLE_CUDASIM:-0}
unset NUMBA_ENABLE_CUDASIM
if ! "$PY" -c "from numba import cuda; assert cuda.is_available(); print('GPU:', cuda.get_current_device().name)" 2>/dev/null; then
    if [ "$simulated" != "0" ] && [ -n "$simulated" ]; then  # a dry run: say what is skipped
        echo "gpu_check: skipped (dry run): NUMBA_ENABLE_CUDASIM is set and no CUDA GPU is usable;" \
             "the GPU parts (CUDA tests on the device, op-info, differential, workloads table) need a" \
             "real GPU. The simulator runs the CUDA tests with: make test-cuda"
        exit 0
    fi
    echo "gpu_check: no usable CUDA GPU (driver, or numba-cuda[cu12]/[cu13] for NVVM): nothing run" >&2
    exit 2
fi
status=0
run() {  # run LIMIT LABEL COMMAND...
    local limit=$1 label=$2; shift 2
    echo "== $label (limit ${limit}s)"
    timeout "$limit" "$@"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "== $label: exit $rc$([ $rc -eq 124 ] && echo ' (time limit)')"
        status=1
    fi
}
export ASTCOMPILER_CUDA_TESTS=1
run 100 "CUDA tests" "$PY" -m pytest -q -p no:cacheprovider tests/cuda \
    --ignore=tests/cuda/test_cuda_opinfo.py --ignore=tests/cuda/test_cuda_differential.py
run 60 "op-info table, float64" "$PY" -m pytest -q -p no:cacheprovider \
    tests/cuda/test_cuda_opinfo.py -k "float64 or coverage"
run 30 "differential test" "$PY" -m pytest -q -p no:cacheprovider tests/cuda/test_cuda_differential.py
run 90 "workloads" "$PY" benchmarks/gpu_bench.py "$@"
exit $status
