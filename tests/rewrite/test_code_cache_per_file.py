"""Two files defining the same function at the same line get their own rewrite.

CPython's code equality leaves ``co_filename`` out, so a cache keyed by code objects alone gave the
second file the first file's rewritten code (its line tags named the other file).
"""

from __future__ import annotations

import importlib.util

import numpy as np

import astcompiler as ac

SOURCE = "import numpy as np\n\n\ndef twice_cos(x):\n    return np.cos(np.cos(x))\n"


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.twice_cos


def test_same_function_in_two_files_is_tagged_with_its_own_file(tmp_path):
    first, second = tmp_path / "first_model.py", tmp_path / "second_model.py"
    first.write_text(SOURCE)
    second.write_text(SOURCE)
    fa, fb = _load(first), _load(second)
    assert fa.__code__ == fb.__code__  # the trap: equal code objects from two files
    ca, cb = ac.compile(fa, backend="eager"), ac.compile(fb, backend="eager")
    x = np.linspace(0, 1, 3)
    np.testing.assert_array_equal(ca(x), fa(x))
    np.testing.assert_array_equal(cb(x), fb(x))
    assert "# first_model.py:5" in ca.entries[0].rewritten_code
    assert "# second_model.py:5" in cb.entries[0].rewritten_code
    assert "first_model.py" not in cb.entries[0].rewritten_code
