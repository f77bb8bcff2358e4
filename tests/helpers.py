"""Shared test helpers: backends to run, and comparing compiled against eager results."""

from __future__ import annotations

import copy
import importlib.util
import os
import signal
import subprocess
import tempfile
import warnings
from typing import Any, Callable

import numpy as np

import astcompiler as ac


def available_backends() -> list[str]:
    backends = ["eager", "aot_eager"]
    if importlib.util.find_spec("astcompiler.lower.numba") is not None:
        backends.append("numba")
    return backends


BACKENDS = available_backends()


def clone(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        # keep the layout: non-contiguous inputs stay non-contiguous
        base = np.empty_like(value, order="K")
        base[...] = value
        if not value.flags.c_contiguous and not value.flags.f_contiguous:
            big = np.zeros(tuple(2 * d + 1 for d in value.shape), value.dtype)
            view = big[tuple(slice(None, None, 2) for _ in value.shape)]
            view = view[tuple(slice(0, d) for d in value.shape)]
            view[...] = value
            return view
        return base
    return copy.deepcopy(value)


def assert_same_bits(got: Any, want: Any) -> None:
    """Type, dtype, shape and bytes (NaN sign bits included), recursive for tuples and lists."""
    assert type(got) is type(want), f"{type(got)} != {type(want)}"
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same_bits(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), f"{got!r} != {want!r}"
    else:
        assert repr(got) == repr(want)


def assert_same(actual: Any, expected: Any) -> None:
    """Same type, dtype, shape and values (within float rounding); recursive for containers."""
    assert type(actual) is type(expected), f"type {type(actual)} != {type(expected)}"
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    if isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same(actual[key], expected[key])
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
        assert np.shape(actual) == np.shape(expected)
        if expected.dtype.kind in "fc":
            tol = 1e-5 if expected.dtype.itemsize <= 8 and expected.dtype in (np.float32, np.complex64) else 1e-9
            np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(actual, expected)
        return
    assert actual == expected or (actual != actual and expected != expected)


def check_compiled(fn: Callable, *args: Any, backend: str = "eager", **kwargs: Any) -> Any:
    """Run ``fn`` eagerly and compiled on separate copies of the inputs; compare results and
    the inputs' final contents (mutations). Returns the compiled function."""
    eager_args = [clone(a) for a in args]
    compiled_args = [clone(a) for a in args]
    expected = fn(*eager_args, **kwargs)
    compiled = ac.compile(fn, backend=backend)
    actual = compiled(*compiled_args, **kwargs)
    assert_same(actual, expected)
    for after_eager, after_compiled in zip(eager_args, compiled_args):
        if isinstance(after_eager, np.ndarray):
            np.testing.assert_array_equal(after_compiled, after_eager)
    return compiled


def counted(backend: str = "eager") -> tuple[Any, Callable]:
    """A ``CompileCounter`` and a backend that counts each graph, then lowers it with
    ``backend``: ``counter, run = counted("numba"); ac.compile(fn, backend=run)``."""
    from astcompiler.lower import lookup_backend
    from astcompiler.testing import CompileCounter

    counter = CompileCounter()

    def run(graph: Any, inputs: Any) -> Any:
        counter(graph, inputs)
        return lookup_backend(backend)(graph, inputs)
    return counter, run


def outcome(fn: Callable, args: Any, locations: bool = False) -> tuple:
    """One call under the "always" warnings filter: (value, (exception class, message) or None,
    [(category, message)] or, with ``locations``, [(category, message, file, line)])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, error = fn(*args), None
        except Exception as exc:  # noqa: BLE001 - the exception is the observable
            value, error = None, (type(exc), str(exc))
    found = [(w.category, str(w.message), *((w.filename, w.lineno) if locations else ()))
             for w in caught]
    return value, error, found


def run_process_group(command: list[str], timeout: float, **options: Any) -> Any:
    """``subprocess.run(command, capture_output=True, text=True)`` in a process group of its
    own: on ``timeout`` the whole group is killed and ``subprocess.TimeoutExpired`` raised. A
    program that starts helpers (a browser's renderer and GPU processes) would otherwise keep
    the output pipes open after ``subprocess.run`` killed it, and the test would wait forever."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, start_new_session=True,
                                   **options)

        def kill_group() -> None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group()
            process.wait()
            raise
        finally:
            kill_group()  # helpers it left behind
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, code, out.read().decode(errors="replace"),
                                           err.read().decode(errors="replace"))
