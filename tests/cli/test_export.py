"""``astcompiler export FILE.py:FUNC --example ... -o OUT.py`` (``run/export.py``): the module it
writes runs in a process where astcompiler, libcst and sympy cannot be imported (a
``sys.meta_path`` finder raises), answers as the compiled function does (the same kernels: the
same bits) and as NumPy does (within a few float32 ulps: libm's expf), keeps the named size
dynamic, raises ``TypeError``/``ValueError`` outside its guards and warns as NumPy warns.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import cli
from astcompiler.run.export import ExportError, export_entry

from .export_support import BLOCKED_HEADER

USER_FILE = '''\
import numpy as np


def softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)
'''

SIZES = (2, 3, 17, 300)

IMPORTER = BLOCKED_HEADER + '''\
import softmax_aot
results = {}
for n in SIZES:
    x = np.random.default_rng(n).random((n, 16)).astype(np.float32)
    np.save(f"{sys.argv[1]}/aot_{n}.npy", softmax_aot.softmax(x))
fortran = np.asfortranarray(np.random.default_rng(5).random((17, 16)).astype(np.float32))
np.save(f"{sys.argv[1]}/aot_F.npy", softmax_aot.softmax(fortran))
errors = []
for bad in ([[0.5] * 16], np.ones((3, 16)), np.ones((3, 15), np.float32), np.ones(16, np.float32),
            np.ones((1, 16), np.float32)):
    try:
        softmax_aot.softmax(bad)
        errors.append(["no error", ""])
    except (TypeError, ValueError) as error:
        errors.append([type(error).__name__, str(error)])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = softmax_aot.softmax(np.full((4, 16), np.inf, np.float32))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("astcompiler", "libcst", "sympy"))
kernels = [v for k, v in vars(softmax_aot).items() if k.startswith("kernel_") and hasattr(v, "stats")]
hits = sum(sum(k.stats.cache_hits.values()) for k in kernels)
print(json.dumps({"errors": errors,
                  "warnings": [[w.category.__name__, str(w.message)] for w in caught],
                  "nan": bool(np.isnan(out).all()), "loaded": loaded,
                  "name": softmax_aot.softmax.__name__, "all": softmax_aot.__all__,
                  "cache_hits": hits}))
'''.replace("SIZES", repr(SIZES))


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("export")
    (root / "model.py").write_text(USER_FILE, encoding="utf-8")
    out = root / "softmax_aot.py"
    done = subprocess.run([sys.executable, "-m", "astcompiler", "export",
                           f"{root / 'model.py'}:softmax", "--example", "x=f32[N,16]",
                           "-o", str(out)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ASTCOMPILER_SLOW_COMPILE_NOTICE_S": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{out}: softmax(x: float32[")
    (root / "importer.py").write_text(IMPORTER, encoding="utf-8")
    results = []
    for _ in range(2):  # the second process loads the kernels from numba's cache
        run = subprocess.run([sys.executable, str(root / "importer.py"), str(root)],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        results.append(json.loads(run.stdout))
    return root, {**results[1], "first_cache_hits": results[0]["cache_hits"]}


def imports_of(text: str) -> set[str]:
    """The top-level packages a module's import statements name."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add((node.module or ".").split(".")[0])
    return found


def plain_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def test_the_module_imports_only_numpy_and_numba(exported):
    root, result = exported
    assert result["loaded"] == []
    text = (root / "softmax_aot.py").read_text()
    assert imports_of(text) <= {"numpy", "numba", "llvmlite", "ctypes", "contextvars", "platform",
                                "warnings", "dataclasses", "typing", "sys", "types"}, \
        imports_of(text)  # (llvmlite: numba's own, in the runtime's zero counter)
    assert "@numba.njit(cache=True" in text
    assert (result["name"], result["all"]) == ("softmax", ["softmax"])


def test_it_answers_as_the_compiled_function_and_numpy_on_several_sizes(exported):
    root, _ = exported
    # as export compiles, in a process of its own: libm in the kernels, sums in 64 lanes,
    # NumPy's SIMD ufuncs on (the session turns them off)
    with ac.config.patch(vector_math=False, pairwise_sums=False, numpy_simd_math=True):
        compiled = ac.compile(plain_softmax)
        for n in SIZES:
            x = np.random.default_rng(n).random((n, 16)).astype(np.float32)
            ac.mark_dynamic(x, 0)  # N: one entry for every size, as the export's
            aot = np.load(root / f"aot_{n}.npy")
            expected = plain_softmax(x)
            assert aot.dtype == expected.dtype and aot.shape == expected.shape
            np.testing.assert_array_equal(aot, compiled(x))  # the same kernels
            # libm's expf (within an ulp of NumPy's), summed and divided: a few ulps of float32
            np.testing.assert_allclose(aot, expected, rtol=1e-6, atol=0)
        assert len(compiled.entries) == 1


def test_f_ordered_rows(exported):
    """F-ordered rows: where the compiler would build a transposed twin on demand the exported
    module has none (it runs the function as written); it answers as NumPy does."""
    root, _ = exported
    fortran = np.asfortranarray(np.random.default_rng(5).random((17, 16)).astype(np.float32))
    aot, expected = np.load(root / "aot_F.npy"), plain_softmax(fortran)
    assert aot.dtype == expected.dtype and aot.shape == expected.shape
    np.testing.assert_allclose(aot, expected, rtol=1e-6, atol=0)


def test_one_kernel_serves_every_size_and_numba_caches_it(exported):
    root, _ = exported
    text = (root / "softmax_aot.py").read_text()
    assert text.count("# ======== kernel ========") == 1
    assert list((root / "__pycache__").glob("softmax_aot.kernel_0_*.nbi"))  # numba's cache index
    assert exported[1]["first_cache_hits"] == 0 and exported[1]["cache_hits"] > 0


def test_inputs_outside_the_guards_raise_clear_errors(exported):
    _, result = exported
    kinds = [kind for kind, _ in result["errors"]]
    assert kinds == ["TypeError", "TypeError", "ValueError", "ValueError", "ValueError"]
    messages = [message for _, message in result["errors"]]
    assert messages[0] == "softmax(): x must be a numpy.ndarray (x: float32[N, 16]), got list"
    assert messages[1] == "softmax(): x must have dtype float32 (x: float32[N, 16]), got float64"
    assert messages[2] == ("softmax(): x must have size 16 in dimension 1 (x: float32[N, 16]), "
                           "got shape (3, 15)")
    assert messages[3] == "softmax(): x must have 2 dimensions (x: float32[N, 16]), got shape (16,)"
    assert messages[4] == ("softmax(): x must have a size of at least 2 in dimension 0 (sizes 0 "
                           "and 1 compile apart), got shape (1, 16)")  # as in the compiler


def test_floating_point_warnings_are_numpys(exported):
    _, result = exported
    with pytest.warns(RuntimeWarning) as caught:
        out = plain_softmax(np.full((4, 16), np.inf, np.float32))
    assert result["nan"] and np.isnan(out).all()
    assert result["warnings"] == [[w.category.__name__, str(w.message)] for w in caught]


def test_an_entry_without_numba_files_or_with_a_break_is_refused(tmp_path):
    def with_cell(x):
        y = x + 1
        get = lambda: y  # noqa: E731 - a cell the split would tear apart: no split, eager
        print("side effect")
        y = y * 2
        return get()

    broken = ac.compile(with_cell)
    broken(np.ones(3))
    assert broken.entries[-1].graph is None and not broken.entries[-1].pieces
    with pytest.raises(ExportError) as refused:
        export_entry(with_cell, broken.entries[-1], origin="t", example="x=f64[3]", shown={})
    line = with_cell.__code__.co_firstlineno + 3
    assert str(refused.value).endswith(
        f"graph break at {__file__}:{line} (print(\"side effect\")): print() is a side effect "
        "(I/O) that compiled code cannot replay; move it out of the compiled function")
    eager = ac.compile(plain_softmax, backend="eager")
    eager(np.ones((2, 16), np.float32))
    with pytest.raises(ExportError, match="export needs backend='numba'"):
        export_entry(plain_softmax, eager.entries[-1], origin="t", example="x=f32[2,16]", shown={})

    def with_print(x):  # split (tests/cli/test_export_split.py), but its pieces run eagerly
        y = x + 1
        print("side effect")
        return y

    split = ac.compile(with_print, backend="eager")
    split(np.ones(3))
    assert split.entries[-1].pieces
    with pytest.raises(ExportError, match="export needs backend='numba'"):
        export_entry(with_print, split.entries[-1], origin="t", example="x=f64[3]", shown={})


def test_cli_export_of_a_missing_function_is_a_usage_error(tmp_path, capsys):
    model = tmp_path / "m.py"
    model.write_text(textwrap.dedent(USER_FILE))
    code = cli.main(["export", f"{model}:nope", "--example", "x=f32[N,16]",
                     "-o", str(tmp_path / "o.py")])
    err = capsys.readouterr().err
    assert code == 2 and "has no function 'nope'" in err and "softmax" in err
    assert not (tmp_path / "o.py").exists()


def test_generated_code_that_imports_astcompiler_is_refused_by_name():
    from astcompiler.run.export import strip_imports

    wrapper = ("import numpy as np\nimport astcompiler.lower.numba.runtime as ___rt\n"
               "from kernel_0_add_0123 import kernel_0_add\nx = 1\n")
    assert strip_imports(wrapper, "wrapper") == "import numpy as np\nx = 1\n"
    with pytest.raises(ExportError, match=r"the kernel imports astcompiler \(from astcompiler"
                                          r"\.lower\.numba\.pairwise import pairwise_sum\)"):
        strip_imports("from astcompiler.lower.numba.pairwise import pairwise_sum\n", "kernel")
    assert strip_imports("from ..places import warn_at\n", "runtime") == "\n"  # a section
    with pytest.raises(ExportError, match="the runtime imports astcompiler"):
        strip_imports("from ..graph import Node\n", "runtime")
