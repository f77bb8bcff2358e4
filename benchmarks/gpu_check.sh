#!/usr/bin/env bash
# On a machine with a CUDA GPU, one command, under 5 minutes: the CUDA tests on the GPU (every
# kernel is compiled by NVVM there, so the op-info table runs its float64 cases only), then
# workloads 1-7 and the GPU rows (tiled matmul, column reductions, a host loop) at GPU sizes
# (benchmarks/gpu_bench.py: NumPy, astcompiler on device arrays, CuPy and torch.compile on CUDA
# when installed). Each part has its own time limit; a failing part is reported and the next runs.
# Usage: bash benchmarks/gpu_check.sh [--quick]    (run from the repository root)
# Under NUMBA_ENABLE_CUDASIM=1 without a GPU it is a dry run: it names each GPU part it skips,
# then runs the workloads script at tiny sizes under the simulator (about 30 s).
set -uo pipefail
PY=${PY:-.venv/bin/python}
simulated=${NUMBA_ENABLE_CUDASIM:-0}
unset NUMBA_ENABLE_CUDASIM
dry=""
if ! "$PY" -c "from numba import cuda; assert cuda.is_available(); print('GPU:', cuda.get_current_device().name)" 2>/dev/null; then
    if [ "$simulated" = "0" ] || [ -z "$simulated" ]; then
        echo "gpu_check: no usable CUDA GPU (driver, or numba-cuda[cu12]/[cu13] for NVVM): nothing run" >&2
        exit 2
    fi
    dry=1  # a dry run: say what each part would run, and that it is skipped
    echo "gpu_check: dry run (NUMBA_ENABLE_CUDASIM is set and no CUDA GPU is usable): every part" \
         "below needs a real GPU and is skipped. The simulator runs the CUDA tests with: make test-cuda"
fi
status=0
run() {  # run LIMIT LABEL COMMAND...
    local limit=$1 label=$2; shift 2
    if [ -n "$dry" ]; then
        echo "== $label (limit ${limit}s): skipped: $*"
        return
    fi
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
if [ -n "$dry" ]; then  # the one part the simulator can check: the table's script, tiny sizes
    echo "== workloads table at 8 elements per dim under the simulator (checks the script" \
         "and each row's agreement with NumPy; the times mean nothing; limit 120s)"
    NUMBA_ENABLE_CUDASIM=1 timeout 120 "$PY" benchmarks/gpu_bench.py --tiny --repeat 1 || status=1
    echo "gpu_check: dry run done: the GPU parts above were skipped (their limits total 280s)"
fi
exit $status
