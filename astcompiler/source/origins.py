"""Source maps from generated files back to the user's file and line.

Each generated line ends with an origin tag ``# model.py:12``; ``SOURCE_MAPS`` maps a generated
file's path to ``{generated line: (user file, user line)}`` so tracebacks, node origins and
error messages name the user's code.
"""

from __future__ import annotations

import linecache
import re
import sys
import threading
from types import FrameType

# generated path -> {generated line -> (user filename, user line)}
SOURCE_MAPS: dict[str, dict[int, tuple[str, int]]] = {}
_LOCK = threading.Lock()

TAG = re.compile(r"\s+# (?P<file>[^#\s][^#]*?):(?P<line>\d+)$")


def build_line_map(generated: str, tag_files: dict[str, str]) -> dict[int, tuple[str, int]]:
    """Map each generated line to the user line named by its tag (untagged continuation lines
    take the tag of the next tagged line). ``tag_files`` maps display names to real paths."""
    result: dict[int, tuple[str, int]] = {}
    pending: list[int] = []
    for number, text in enumerate(generated.splitlines(), start=1):
        match = TAG.search(text)
        if match is None:
            pending.append(number)
            continue
        origin = (tag_files.get(match["file"], match["file"]), int(match["line"]))
        for waiting in pending:
            result[waiting] = origin
        pending.clear()
        result[number] = origin
    return result


def register_source_map(path: str, line_map: dict[int, tuple[str, int]]) -> None:
    with _LOCK:
        SOURCE_MAPS[path] = line_map


def user_location(frame: FrameType) -> tuple[str, int] | None:
    line_map = SOURCE_MAPS.get(frame.f_code.co_filename)
    if line_map is None:
        return None
    return line_map.get(frame.f_lineno)


def user_stack(start: FrameType | None = None, limit: int = 32) -> list[tuple[str, int, str]]:
    """The user frames (outermost first) of generated code currently running on this thread."""
    frame = start if start is not None else sys._getframe(1)
    stack: list[tuple[str, int, str]] = []
    while frame is not None and len(stack) < limit:
        location = user_location(frame)
        if location is not None:
            filename, lineno = location
            stack.append((filename, lineno, linecache.getline(filename, lineno).rstrip()))
        frame = frame.f_back
    stack.reverse()
    return stack


def current_origin(display: bool = True) -> str | None:
    """``model.py:12`` for the innermost generated frame on this thread, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        location = user_location(frame)
        if location is not None:
            filename, lineno = location
            if display:
                from .loader import display_name
                return f"{display_name(filename)}:{lineno}"
            return f"{filename}:{lineno}"
        frame = frame.f_back
    return None
