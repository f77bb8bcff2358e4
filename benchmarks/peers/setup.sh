#!/usr/bin/env bash
# Side virtual environment with the benchmark peers: jax (jax.jit, CPU) and torch (torch.compile).
#
#   bash benchmarks/peers/setup.sh            # or: make peers
#   ASTCOMPILER_PEERS_ENV=/some/dir bash benchmarks/peers/setup.sh
#
# The peers live outside the project's .venv so that they never replace its NumPy: the benchmark
# worker (benchmarks/peers/worker.py) runs with the project's python and APPENDS this
# environment's site-packages to sys.path (the project's packages win).
#
# torch: a CPU wheel from $ASTCOMPILER_TORCH_WHEEL (default: the one in /opt/wheels, if present),
# else `pip install torch` from PyPI (several GB with its CUDA libraries; a CPU-only build is
# `pip install torch --index-url https://download.pytorch.org/whl/cpu` where that index is reachable).
# torch.compile on the CPU needs a C++ compiler (g++).
set -euo pipefail

ENV_DIR="${ASTCOMPILER_PEERS_ENV:-$HOME/.cache/astcompiler-peers}"
PYTHON="${PYTHON:-python3}"
WHEEL="${ASTCOMPILER_TORCH_WHEEL:-$(ls /opt/wheels/torch-*+cpu-*.whl 2>/dev/null | head -n 1 || true)}"

if [ ! -x "$ENV_DIR/bin/python" ]; then
    echo "creating $ENV_DIR"
    "$PYTHON" -m venv "$ENV_DIR"
fi
PIP=("$ENV_DIR/bin/python" -m pip --disable-pip-version-check --no-input -q)
echo "installing jax[cpu] into $ENV_DIR"
"${PIP[@]}" install "jax[cpu]"
if [ -n "$WHEEL" ] && [ -f "$WHEEL" ]; then
    echo "installing torch from $WHEEL"
    "${PIP[@]}" install "$WHEEL"
else
    echo "installing torch from PyPI"
    "${PIP[@]}" install torch
fi
"$ENV_DIR/bin/python" - <<'PY'
import jax, torch
print(f"peers ready: jax {jax.__version__}, torch {torch.__version__}")
PY
project_py="$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/python"
if [ -x "$project_py" ]; then
    ours="$("$project_py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    theirs="$("$ENV_DIR/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    if [ "$ours" != "$theirs" ]; then
        echo "warning: the project's python is $ours, the peers' $theirs: benchmarks/run.py needs" \
             "the same minor version (set PYTHON=python$ours and rerun)" >&2
    fi
fi
