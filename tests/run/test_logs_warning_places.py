"""Warnings the compiler gives users name the user's call site (``stacklevel``), not a file of
astcompiler or a generated one, so ``warnings.filterwarnings(module=...)`` works per module."""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.capture.runtime import calls

THIS_FILE = __file__


def caller_line(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[tuple], int]:
    """``fn(*args)`` recording its warnings (category, message, file, line), and the line of
    that call: this file, not ``tests/helpers.py`` (whose ``outcome`` would be the caller)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        value = fn(*args)
    return value, [(w.category, str(w.message), w.filename, w.lineno) for w in caught], line


def only_astcompiler(found: list[tuple]) -> list[tuple]:
    return [w for w in found if str(w[1]).startswith("astcompiler:")]


def test_recompile_limit_warning_names_the_caller():
    fn = ac.compile(lambda x: x * 2, backend="eager", dynamic=False)
    with ac.config.patch(recompile_limit=1):
        fn(np.ones(1))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            out = fn(np.ones(2))
    np.testing.assert_array_equal(out, np.ones(2) * 2)
    [warning] = [w for w in caught if "recompile_limit" in str(w.message)]
    assert (warning.filename, warning.lineno) == (THIS_FILE, line)


def test_no_source_warning_names_the_caller():
    namespace: dict[str, Any] = {}
    exec("def made(x):\n    return x + 1\n", namespace)  # no source file: runs eagerly
    fn = ac.compile(namespace["made"], backend="eager")
    value, found, line = caller_line(fn, np.ones(3))
    np.testing.assert_array_equal(value, namespace["made"](np.ones(3)))
    [warning] = only_astcompiler(found)
    assert "no source code" in warning[1]
    assert warning[2:] == (THIS_FILE, line)


def test_eager_only_method_warning_names_the_caller(monkeypatch):
    monkeypatch.setattr(calls, "_WARNED_EAGER", set())  # warned once per process: forget it
    model = ac.nn.Linear(3, 2)

    def run(mod, x):
        return mod(x) * len(mod.state_dict())

    value, found, line = caller_line(ac.compile(run, backend="eager"), model, np.ones((1, 3)))
    np.testing.assert_allclose(value, run(model, np.ones((1, 3))))
    [warning] = only_astcompiler(found)
    assert "docs/modules.md" in warning[1]
    assert warning[2:] == (THIS_FILE, line)


def failing_backend(graph: Any, example_inputs: list) -> Any:
    raise RuntimeError("this backend cannot lower anything")


failing_backend.__module__ = "astcompiler.lower.failing"  # a built-in backend's failure: a fallback


def test_backend_failure_warning_names_the_caller():
    def f(x):
        return np.sin(x) + 1

    value, found, line = caller_line(ac.compile(f, backend=failing_backend), np.ones(4))
    np.testing.assert_array_equal(value, f(np.ones(4)))
    [warning] = only_astcompiler(found)
    assert "backend failed (RuntimeError: this backend cannot lower anything)" in warning[1]
    assert warning[2:] == (THIS_FILE, line)


def test_filterwarnings_by_the_users_module_silences_them():
    fn = ac.compile(lambda x: x - 1, backend="eager", dynamic=False)
    with ac.config.patch(recompile_limit=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module=re.escape(__name__))
        fn(np.ones(1))
        fn(np.ones(2))
    assert [str(w.message) for w in caught] == []


def test_without_the_module_filter_the_same_calls_warn():
    """The control of the test above: the filter, not a missing warning, made it silent."""
    fn = ac.compile(lambda x: x - 1, backend="eager", dynamic=False)
    with ac.config.patch(recompile_limit=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="some_other_module")
        fn(np.ones(1))
        fn(np.ones(2))
    assert [w.category for w in caught] == [RuntimeWarning]


@pytest.mark.parametrize("stage", ["capture", "run"])
def test_warnings_never_point_into_astcompiler(stage):
    """Whatever path warns, the file is never astcompiler's own nor a generated one."""
    import os
    package = os.path.dirname(ac.__file__)
    namespace: dict[str, Any] = {}
    exec("def made(x):\n    return x * 3\n", namespace)
    fn = ac.compile(namespace["made"] if stage == "capture" else (lambda x: x * 3),
                    backend="eager", dynamic=False)
    with ac.config.patch(recompile_limit=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(np.ones(1))
        fn(np.ones(2))
    assert caught, "expected a warning"
    for warning in caught:
        assert not warning.filename.startswith(package), warning.filename
        assert not warning.filename.startswith(ac.config.cache_dir), warning.filename
