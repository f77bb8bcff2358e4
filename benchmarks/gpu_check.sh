#!/usr/bin/env bash
# On a machine with a CUDA GPU, one command (about 2.5 minutes on an H200 without the torch.compile
# part; each part's limit caps it): a smoke test, then the CUDA tests on the GPU (every
# kernel is compiled by NVVM there, so the op-info table runs its float64 cases only), then
# workloads 1-7 and the GPU rows (tiled matmul, column reductions, a host loop) at GPU sizes
# (benchmarks/gpu_bench.py: NumPy, astcompiler on device arrays and CuPy in one process, then
# torch.compile on CUDA in a process of its own, when installed). Each part has its own time
# limit; a failing part is reported and the next runs.
# Usage: bash benchmarks/gpu_check.sh [--quick]    (run from the repository root)
# PY: the interpreter (default .venv/bin/python); GPU_CHECK_LOGS: a folder that gets each part's
# log and the workloads' JSON; GPU_CHECK_WORKERS: pytest-xdist workers when xdist is installed
# (default: up to 8; NVVM compiles every kernel, so the tests are compile-bound);
# GPU_CHECK_TORCH=0: no torch.compile part.
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
logs=${GPU_CHECK_LOGS:-}
[ -n "$logs" ] && mkdir -p "$logs"
run() {  # run LIMIT LABEL COMMAND...
    local limit=$1 label=$2; shift 2
    if [ -n "$dry" ]; then
        echo "== $label (limit ${limit}s): skipped: $*"
        return
    fi
    echo "== $label (limit ${limit}s)"
    local start=$SECONDS
    if [ -n "$logs" ]; then
        timeout "$limit" "$@" 2>&1 | tee "$logs/$(echo "$label" | tr -c 'a-zA-Z0-9\n' _).log"
    else
        timeout "$limit" "$@"
    fi
    local rc=${PIPESTATUS[0]}
    echo "== $label: $((SECONDS - start)) s"
    if [ $rc -ne 0 ]; then
        echo "== $label: exit $rc$([ $rc -eq 124 ] && echo ' (time limit)')"
        status=1
    fi
}
export ASTCOMPILER_CUDA_TESTS=1
pytest=("$PY" -m pytest -q -p no:cacheprovider)
if [ -z "$dry" ] && "$PY" -c "import xdist" 2>/dev/null; then
    workers=${GPU_CHECK_WORKERS:-$(( $(nproc) < 8 ? $(nproc) : 8 ))}
    pytest+=(-n "$workers")
fi
"$PY" -c "import pytest_timeout" 2>/dev/null && pytest+=(--timeout 120)
json=()
[ -n "$logs" ] && json=(--json "$logs/gpu_bench.json")
run 60 "smoke test" "$PY" benchmarks/gpu_smoke.py
if [ -z "$dry" ] && [ $status -ne 0 ]; then
    echo "gpu_check: the smoke test failed: the other parts are not run" >&2
    exit 1
fi
run 150 "CUDA tests" "${pytest[@]}" tests/cuda \
    --ignore=tests/cuda/test_cuda_opinfo.py --ignore=tests/cuda/test_cuda_differential.py
run 90 "op-info table, float64" "${pytest[@]}" tests/cuda/test_cuda_opinfo.py -k "float64 or coverage"
run 45 "differential test" "${pytest[@]}" tests/cuda/test_cuda_differential.py
run 120 "workloads" "$PY" benchmarks/gpu_bench.py --columns astcompiler,cupy "${json[@]}" "$@"
[ -n "$logs" ] && json=(--json "$logs/gpu_bench_torch.json")
[ "${GPU_CHECK_TORCH:-1}" = "0" ] || run 200 "workloads, torch.compile" "$PY" benchmarks/gpu_bench.py --columns torch "${json[@]}" "$@"
if [ -n "$dry" ]; then  # the one part the simulator can check: the table's script, tiny sizes
    echo "== workloads table at 8 elements per dim under the simulator (checks the script" \
         "and each row's agreement with NumPy; the times mean nothing; limit 120s)"
    NUMBA_ENABLE_CUDASIM=1 timeout 120 "$PY" benchmarks/gpu_bench.py --tiny --repeat 1 || status=1
    echo "gpu_check: dry run done: the GPU parts above were skipped (their limits total 665s)"
fi
exit $status
