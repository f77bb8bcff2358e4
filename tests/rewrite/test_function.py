"""Whole-function rewriting: prologue, origin tags, files, factories."""

from __future__ import annotations

import importlib
import os

import numpy as np

from astcompiler.rewrite import rewrite_function, rewrite_module_source
from astcompiler.source.origins import SOURCE_MAPS

SCALE = 2.0


def helper(x):
    return x * 2


def model(x, n=3, *, flag: bool = True) -> np.ndarray:
    """A docstring stays first."""
    y = np.sin(x) * SCALE
    if n > 2 and x.shape[0] > 4:
        y = y + helper(x)
    return y.sum()


def test_generated_module_shape(tmp_path):
    rewritten = rewrite_function(model, str(tmp_path))
    src = rewritten.source
    assert "def __ac_make(__ac):" in src
    assert "def model(x, n, *, flag):" in src  # defaults/annotations dropped: the runtime binds
    lines = src.splitlines()
    doc = next(i for i, line in enumerate(lines) if "A docstring" in line)
    assert "__ac.load_globals('np', 'SCALE', 'helper')" in lines[doc + 1]
    assert "y = __ac.call(np.sin, x) * SCALE" in src
    # only the truth of the test is used: and_test (rewrite/boolean.py)
    assert "__ac.if_stmt(__ac.and_test(lambda: n > 2, lambda: x.shape[0] > 4), if_true_" in src
    assert "return __ac.call(y.sum)" in src
    assert rewritten.global_names == ["np", "SCALE", "helper"]


def test_every_statement_line_is_tagged_with_its_origin(tmp_path):
    rewritten = rewrite_function(model, str(tmp_path))
    first = model.__code__.co_firstlineno
    body = rewritten.source.split("def __ac_make(__ac):\n")[1].splitlines()[:-1]
    for line in body:
        assert line.rstrip().split("# ")[-1].startswith("test_function.py:"), line
    assert f"# test_function.py:{first + 2}" in rewritten.source  # y = np.sin(...)


def test_written_to_a_real_content_addressed_file(tmp_path):
    rewritten = rewrite_function(model, str(tmp_path))
    assert os.path.isfile(rewritten.path)
    assert rewritten.path.startswith(str(tmp_path / "rewritten"))
    with open(rewritten.path) as handle:
        assert handle.read() == rewritten.source
    line_map = SOURCE_MAPS[rewritten.path]
    assert set(line_map.values()) >= {(__file__, model.__code__.co_firstlineno + 2)}


def test_factory_is_bound_to_the_original_globals(tmp_path):
    rewritten = rewrite_function(model, str(tmp_path))
    assert rewritten.factory.__globals__ is model.__globals__


def test_rewrite_module_source_finds_decorated_functions():
    text = (
        "import astcompiler as ac\nimport numpy as np\n\n"
        "@ac.compile\ndef a(x):\n    return np.exp(x)\n\n"
        "def b(x):\n    return x\n\n"
        "@ac.compile(backend='eager')\ndef c(x):\n    return x if x.ndim else -x\n")
    out = rewrite_module_source(text, "/somewhere/model.py")
    assert "def a(x):" in out and "def c(x):" in out and "def b(" not in out
    assert "__ac.call(np.exp, x)" in out and "# model.py:6" in out
    assert "__ac.ifexp(x.ndim" in out


def test_one_line_function(tmp_path):
    def one(x): y = x + 1; return y  # noqa: E702
    src = rewrite_function(one, str(tmp_path)).source
    assert "y = x + 1; return y" in src
