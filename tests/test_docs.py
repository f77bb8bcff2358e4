"""Every ```python block of the feature docs runs as written (blocks of a page share a namespace)."""

from __future__ import annotations

import pathlib
import re
import sys
import types

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
PAGES = ["dynamic_shapes.md", "control_flow.md", "graph_breaks.md", "nonstrict_trace.md"]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


@pytest.mark.parametrize("page", PAGES)
def test_examples_run(page, tmp_path):
    blocks = BLOCK.findall((DOCS / page).read_text())
    assert blocks, f"{page} has no runnable examples"
    source = "\n\n".join(blocks)
    path = tmp_path / f"{page}.py"  # a real file: the compiler reads the examples' source
    path.write_text(source)
    module = types.ModuleType(f"docs_{path.stem.replace('.', '_')}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
