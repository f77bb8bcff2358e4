"""Comparing a result with NumPy's, and summarising how astcompiler ran a kernel."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np


def compare(result: Any, expected: Any, rtol: float = 1e-9, strict_types: bool = True) -> Optional[str]:
    """None when ``result`` equals NumPy's ``expected``, else what differs.

    Tuples are compared item by item. Arrays and NumPy scalars must match in dtype and shape and
    agree within ``rtol`` (1e-4 for float32/complex64) with an absolute tolerance scaled by the
    largest value; integers and booleans must be equal. With ``strict_types`` the Python type must
    match as well (``np.float64`` is not ``float``); plain ``numba.njit`` is checked without it.
    """
    if isinstance(expected, tuple):
        if not isinstance(result, tuple) or len(result) != len(expected):
            return f"returned {type(result).__name__}, NumPy a {len(expected)}-tuple"
        for index, (got, want) in enumerate(zip(result, expected)):
            problem = compare(got, want, rtol, strict_types)
            if problem:
                return f"item {index}: {problem}"
        return None
    if strict_types and type(result) is not type(expected):
        return f"type {type(result).__name__}, NumPy {type(expected).__name__}"
    got, want = np.asarray(result), np.asarray(expected)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, NumPy {want.dtype}"
    if want.dtype.kind not in "fc":
        if not np.array_equal(got, want):
            return f"values differ at {int(np.sum(got != want))} of {want.size} elements"
        return None
    if want.dtype in (np.float32, np.complex64, np.float16):
        rtol = max(rtol, 1e-4)
    atol = rtol * float(np.max(np.abs(want), initial=0.0))
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        err = float(np.max(np.abs(got - want), initial=0.0))
        return f"values differ: max abs error {err:.3g} (largest value {atol / rtol:.3g})"
    return None


def ac_mode(compiled: Any) -> tuple[str, str]:
    """``(mode, reason)`` of a compiled function's last cache entry.

    mode: "kernels" (numba code only: fused kernels, structured numba functions, NumPy/BLAS
    calls from the wrapper), "host loop" (a loop stays Python in the wrapper and calls kernels
    per iteration), "op by op" (a graph, or part of one, runs op by op with NumPy), "eager" (the
    whole function runs as plain Python), "split" (a graph break: compiled pieces around a
    statement that runs in Python). reason: astcompiler's own words, from the summary at the top
    of ``output_code`` (or the graph break).
    """
    entries = getattr(compiled, "entries", None)
    if not entries:
        return "not compiled", ""
    entry = entries[-1]
    summary = _summary(entry.output_code or "")
    if entry.pieces:
        reason = entry.break_reason.reason if entry.break_reason is not None else summary[0]
        return "split", _first_line(reason)
    if getattr(entry, "is_eager", False):
        reason = entry.break_reason.reason if entry.break_reason is not None else summary[0]
        return "eager", _first_line(reason.removeprefix("# runs eagerly: "))
    for mode, marker in (("op by op", "op by op"), ("host loop", "host loop")):
        lines = [line for line in summary if marker in line]
        if lines:
            return mode, "; ".join(dict.fromkeys(_parenthesised(line) for line in lines))
    return "kernels", ""


def _summary(code: str) -> list[str]:
    """The comment lines at the top of ``output_code`` (the backend's summary), at least one."""
    lines = []
    for line in code.strip().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").rstrip())
    return lines or [""]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _parenthesised(line: str) -> str:
    """The text inside the outermost parentheses of ``line`` (the fallback reason)."""
    start = line.find("(")
    return line[start + 1:line.rfind(")")] if start >= 0 else line
