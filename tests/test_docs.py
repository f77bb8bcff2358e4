"""Every ```python block of the docs (``docs/*.md``, ``README.md``) runs on its own: each in a
fresh namespace, from a real file of its own (the compiler reads the examples' source), so a block
never relies on an earlier block's imports or names.

A block preceded by the line ``<!-- docs-test: cuda -->`` uses the CUDA target: it runs in a
subprocess under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, which must be set before numba
is imported), or on the GPU when ``NUMBA_ENABLE_CUDASIM=0`` and one is there. No block is skipped.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = sorted(ROOT.glob("docs/*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"(?:^(<!-- docs-test: (?P<marker>[\w-]+) -->)\n)?^```python\n(?P<code>.*?)^```",
                   re.S | re.M)
MARKERS = {"cuda"}


def blocks() -> list:
    found = []
    for page in PAGES:
        for index, match in enumerate(BLOCK.finditer(page.read_text())):
            marker = match.group("marker")
            assert marker in (None, *MARKERS), f"{page.name}: unknown docs-test marker {marker!r}"
            line = page.read_text()[:match.start("code")].count("\n") + 1
            found.append(pytest.param(page, line, match.group("code"), marker,
                                      id=f"{page.name}:{line}"))
    return found


BLOCKS = blocks()


def run_in_fresh_module(path: pathlib.Path, source: str) -> None:
    module = types.ModuleType(f"docs_{path.stem.replace('.', '_').replace('-', '_')}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]


@pytest.mark.parametrize(("page", "line", "code", "marker"), BLOCKS)
def test_block_runs_on_its_own(page, line, code, marker, tmp_path, capsys):
    # the block's lines keep their numbers in the page: errors name the page's line
    source = "\n" * (line - 1) + code
    path = tmp_path / f"{page.stem}-{line}.py"
    path.write_text(source)
    if marker == "cuda":
        env = {**os.environ, "NUMBA_ENABLE_CUDASIM": os.environ.get("NUMBA_ENABLE_CUDASIM", "1")}
        done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{page.name}:{line}:\n{done.stdout}\n{done.stderr}"
        return
    run_in_fresh_module(path, source)


def test_every_page_with_examples_is_checked():
    """The pages whose examples run (a page may have none: its blocks are shell or output)."""
    checked = {page.name for page, *_ in (p.values for p in BLOCKS)}
    for page in PAGES:
        text = page.read_text()
        untagged = re.findall(r"^```\n(?:import|from) ", text, re.M)
        assert not untagged, f"{page.name}: a Python example without ```python is never run"
    assert {"usage.md", "README.md", "dynamic_shapes.md", "graph_breaks.md"} <= checked
