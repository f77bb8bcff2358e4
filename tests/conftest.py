"""Test-session set-up shared by every test folder.

One thing only: the whole session compiles into a fresh temporary cache directory, so tests never
read or write the user's ``~/.cache/astcompiler`` and two test runs never see each other's files.
``astcompiler.config.cache_dir`` is pointed at it for this process, and ``ASTCOMPILER_CACHE_DIR``
for subprocesses the tests start (the CLI tests run ``python -m astcompiler``).

Numba settings are left at their defaults on purpose: numba's own disk cache of generated kernels
lives beside the generated files (inside the temporary directory), which is what the backend's
caching tests expect to find.

The slow-compile notice (``config.slow_compile_notice_s``) is off for the session: numba's first
compiles take seconds, and the tests that check the notice switch it on.

``numpy_simd_math`` is off for the session: whether NumPy's SIMD loops beat a kernel depends on
the CPU (``lower/numba/numpy_simd.py``), and the tests' kernels must not; its tests
(``tests/lower/test_numpy_simd_policy.py``) switch it on.

Hypothesis runs derandomized (profile ``ci``, the default): every run searches the same examples, so
CI never fails on a case a previous run did not see. ``HYPOTHESIS_PROFILE=explore`` searches afresh
(with the example database) when hunting for bugs.

Tests listed in ``tests/slow_tests.txt`` (one pytest node id per line) are marked ``slow`` at
collection, like a ``@pytest.mark.slow`` in their file: they are the ones measured at 6 s or more
on a 2-core machine, which ``make test`` leaves out to keep CI under 30 minutes (``make test-full``
runs them). ``python tools/run_tests.py --record`` prints the slowest tests still outside the list.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def listed_slow_tests() -> frozenset[str]:
    """The node ids in ``tests/slow_tests.txt`` (blank lines and ``#`` comments skipped)."""
    if not SLOW_LIST.is_file():
        return frozenset()
    lines = (line.split("#", 1)[0].strip() for line in SLOW_LIST.read_text().splitlines())
    return frozenset(line for line in lines if line)


@pytest.hookimpl(tryfirst=True)  # before ``-m "not slow"`` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = listed_slow_tests()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def astcompiler_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Point astcompiler's cache directory at a temporary folder for the whole test session."""
    from astcompiler.config import config  # the settings object that ``ac.config`` names

    path = str(tmp_path_factory.mktemp("astcompiler-cache"))
    saved_env = os.environ.get("ASTCOMPILER_CACHE_DIR")
    saved_dir, saved_simd = config.cache_dir, config.numpy_simd_math
    saved_notice = config.slow_compile_notice_s
    os.environ["ASTCOMPILER_CACHE_DIR"] = path
    saved_notice_env = os.environ.get("ASTCOMPILER_SLOW_COMPILE_NOTICE_S")
    os.environ["ASTCOMPILER_SLOW_COMPILE_NOTICE_S"] = "0"  # subprocesses (the CLI tests) too
    config.cache_dir = path
    config.numpy_simd_math = False
    config.slow_compile_notice_s = 0  # no "spent N s compiling" notice in test output
    try:
        yield path
    finally:
        config.cache_dir, config.numpy_simd_math = saved_dir, saved_simd
        config.slow_compile_notice_s = saved_notice
        if saved_notice_env is None:
            os.environ.pop("ASTCOMPILER_SLOW_COMPILE_NOTICE_S", None)
        else:
            os.environ["ASTCOMPILER_SLOW_COMPILE_NOTICE_S"] = saved_notice_env
        if saved_env is None:
            os.environ.pop("ASTCOMPILER_CACHE_DIR", None)
        else:
            os.environ["ASTCOMPILER_CACHE_DIR"] = saved_env
