"""Timing and result checks shared by ``benchmarks/run.py`` and the peer worker.

Standard library only at import time (NumPy is imported inside the functions), so that the runner
can set thread-pool environment variables before anything loads NumPy.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Optional

Call = tuple[Callable, tuple]  # a function and the arguments it is timed with


def time_calls(fn: Callable, args: tuple, number: int) -> float:
    """Seconds for ``number`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return time.perf_counter() - start


def calls_per_sample(fn: Callable, args: tuple, min_time: float) -> int:
    """How many calls make one sample last at least ``min_time`` (like timeit's autorange)."""
    number = 1
    while True:
        elapsed = time_calls(fn, args, number)
        if elapsed >= min_time or number >= 1_000_000:
            return number
        grow = min_time / max(elapsed, 1e-9) * 1.2
        number = max(number * 2, min(int(number * grow) + 1, number * 100))


def medians(calls: list[Call], repeats: int, min_time: float) -> list[float]:
    """Median seconds per call of each ``(fn, args)``, interleaved round by round.

    The implementation that goes first rotates from round to round, so a change in machine load
    hits all of them alike.
    """
    numbers = [calls_per_sample(fn, args, min_time) for fn, args in calls]
    samples: list[list[float]] = [[] for _ in calls]
    for round_index in range(repeats):
        order = list(range(len(calls)))
        shift = round_index % max(len(order), 1)
        for k in order[shift:] + order[:shift]:
            fn, args = calls[k]
            samples[k].append(time_calls(fn, args, numbers[k]) / numbers[k])
    return [statistics.median(times) for times in samples]


def check_result(result: Any, expected: Any) -> Optional[str]:
    """None when ``result`` matches NumPy's, else why not.

    Arrays: same shape and dtype, values within rounding (``rtol`` 1e-9, 1e-4 for float32 and
    complex64, with an absolute tolerance scaled by the largest value). Tuples: a tuple of the
    same length, item by item.
    """
    if isinstance(expected, tuple):
        if not isinstance(result, tuple) or len(result) != len(expected):
            return f"{type(result).__name__} result, NumPy a tuple of {len(expected)}"
        for index, (got, want) in enumerate(zip(result, expected)):
            problem = check_result(got, want)
            if problem:
                return f"item {index}: {problem}"
        return None
    return _check_array(result, expected)


def _check_array(result: Any, expected: Any) -> Optional[str]:
    import numpy as np

    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return f"shape {result.shape}, NumPy {expected.shape}"
    if result.dtype != expected.dtype:
        return f"dtype {result.dtype}, NumPy {expected.dtype}"
    single = expected.dtype in (np.float32, np.complex64)
    rtol = 1e-4 if single else 1e-9
    atol = rtol * float(np.max(np.abs(expected), initial=0.0))
    try:
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=atol)
    except AssertionError as err:
        lines = [ln.strip() for ln in str(err).splitlines() if "Max" in ln or "Mismatched" in ln]
        return "values differ: " + "; ".join(lines)
    return None


def short_error(err: BaseException) -> str:
    """``"TypeError: first line of the message"``, at most 200 characters."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:200]


def format_time(seconds: float, unit: str) -> str:
    """``"20.1 ms"`` or ``"0.81 us"``: three significant digits at most."""
    value = seconds * (1e6 if unit == "us" else 1e3)
    digits = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:.{digits}f} {unit}"
