# astcompiler: set-up, tests, demo and benchmarks.
#
#   make demo    create .venv if missing, install the package (editable, with tests and dask), run the quickstart
#   make test    same set-up, then run the test suite in JOBS=2 parallel pytest processes (extra pytest
#                arguments, one process: make test ARGS='-k cli'), then the CUDA tests in their own process under numba's simulator (make test-cuda)
#   make test-full  the same with the tests marked slow too (make test leaves them out: CI < 30 min)
#   make test-cuda  only the CUDA tests (tests/cuda), NUMBA_ENABLE_CUDASIM=1 unless CUDA_SIM=0
#                (CUDA_SIM=0 on a machine with a GPU runs them on it: ASTCOMPILER_CUDA_TESTS=1)
#   make bench   same set-up plus numexpr and matplotlib, then run the benchmarks, with the peers
#                (jax.jit, torch.compile) when `make peers` installed them (make bench ARGS='--quick')
#   make peers   install the peers into a side venv, $(PEERS_ENV) (benchmarks/peers/setup.sh)
#
# An existing .venv is never deleted; the install step re-runs only when pyproject.toml changes
# (or the venv is new), so repeated calls are cheap.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check --no-input -q
ARGS   ?=
PEERS_ENV ?= $(HOME)/.cache/astcompiler-peers

TEST_STAMP  := $(VENV)/.astcompiler-test.stamp
BENCH_STAMP := $(VENV)/.astcompiler-bench.stamp

.DEFAULT_GOAL := help
.PHONY: help demo test test-full test-cuda bench peers install

help:
	@echo "make demo    set up .venv and run examples/quickstart.py"
	@echo "make test    set up .venv and run the tests (ARGS='...' goes to pytest), then make test-cuda"
	@echo "make test-full  make test with the tests marked slow too"
	@echo "make test-cuda  the CUDA tests under numba's simulator (CUDA_SIM=0: on a real GPU)"
	@echo "make bench   set up .venv with numexpr and run benchmarks/run.py (ARGS='--quick')"
	@echo "make peers   install jax and torch into a side venv (PEERS_ENV=$(PEERS_ENV))"

# The virtual environment: created once, only when its interpreter is missing.
$(PY):
	$(PYTHON) -m venv $(VENV)

# Editable install with the test and dask extras; redone when pyproject.toml is newer than the stamp.
$(TEST_STAMP): pyproject.toml | $(PY)
	$(PIP) install -e '.[test,dask]'
	@touch $@

$(BENCH_STAMP): pyproject.toml $(TEST_STAMP) | $(PY)
	$(PIP) install -e '.[test,dask,bench]'
	@touch $@

install: $(TEST_STAMP)

demo: $(TEST_STAMP)
	$(PY) examples/quickstart.py

# Without ARGS the CPU suite runs as $(JOBS) parallel pytest processes (tools/run_tests.py deals the
# test files by their recorded durations, tests/durations.json; TEST_FLAGS='--keep-going --record'
# runs every test and refreshes that file); with ARGS, one pytest process.
JOBS ?= 2
TEST_FLAGS ?=
test: $(TEST_STAMP)
ifeq ($(strip $(ARGS)),)
	$(PY) tools/run_tests.py --jobs $(JOBS) $(TEST_FLAGS)
else
	$(PY) -m pytest -q -x -p no:cacheprovider $(ARGS)
endif
	$(MAKE) --no-print-directory test-cuda

# Every test, the ones marked slow too (make test leaves them out to keep CI under 30 minutes).
test-full: $(TEST_STAMP)
	$(PY) tools/run_tests.py --jobs $(JOBS) --full $(TEST_FLAGS)
	$(MAKE) --no-print-directory test-cuda

# The CUDA tests need the simulator switched on before numba is imported: their own process.
CUDA_SIM ?= 1
test-cuda: $(TEST_STAMP)
ifeq ($(CUDA_SIM),0)
	ASTCOMPILER_CUDA_TESTS=1 $(PY) -m pytest -q -x -p no:cacheprovider tests/cuda
else
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q -x -p no:cacheprovider tests/cuda
endif

bench: $(BENCH_STAMP)
	ASTCOMPILER_PEERS_ENV=$(PEERS_ENV) $(PY) benchmarks/run.py $(ARGS)

# The peers live in their own venv (never in .venv: they would replace its NumPy); the project's
# python must be the same minor version, so the side venv is built with the same interpreter.
peers: | $(PY)
	ASTCOMPILER_PEERS_ENV=$(PEERS_ENV) PYTHON=$(PYTHON) bash benchmarks/peers/setup.sh
