"""``astcompiler export`` of a function split at graph breaks (``run/export.py``,
``split_sections``): each compiled piece runs in a namespace of its own read from the module's
text with its own line numbers, the statement that broke runs as plain Python, and the module
still imports only NumPy and numba. Also the split runner's hint that carries dynamic sizes to
the resume (``run/splitting.carry_dynamic_sizes``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.run.export import ExportError, export_entry

from .export_support import BLOCKED_HEADER

USER_FILE = '''\
import numpy as np

SCALE = 2.0


def twice_broken(x, y=3):
    """Two prints: the resume splits again."""
    a = np.exp(x) * SCALE
    s = float(a.sum())
    print("total", round(s, 3))
    b = a + y * x
    print("middle", b.shape)
    return b.sum() + s


def broken_first(x):
    print("start", x.shape)
    return (x * 2.0).sum()


def helper(v):
    print("inside", v.shape)
    return v


def breaks_in_a_callee(x):
    y = x + 1.0
    z = helper(y)
    return z * 2.0
'''

IMPORTER = BLOCKED_HEADER + '''\
import contextlib, io
import aot_twice, aot_first

out = {}
for n in (8, 13, 40):
    x = np.random.default_rng(n).standard_normal(n)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        value = aot_twice.twice_broken(x)
        first = aot_first.broken_first(x)
    out[n] = [value, type(value).__name__, first, type(first).__name__, printed.getvalue()]
errors = []
for bad in (np.ones(8, np.float32), np.ones((2, 8))):
    try:
        aot_twice.twice_broken(bad)
        errors.append(["no error", ""])
    except (TypeError, ValueError) as error:
        errors.append([type(error).__name__, str(error)])
try:
    aot_twice.twice_broken(np.ones(8), 4)
except ValueError as error:
    errors.append([type(error).__name__, str(error)])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("astcompiler", "libcst", "sympy"))
pieces = [v for k, v in vars(aot_twice).items() if k.startswith("___piece_")]
print(json.dumps({"out": out, "errors": errors, "loaded": loaded, "pieces": len(pieces),
                  "sources": [inspect.getsource(p) for p in pieces],
                  "defaults": aot_twice.twice_broken.__defaults__,
                  "doc": aot_twice.twice_broken.__doc__}))
'''


def _export(root: Path, func: str, out: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "astcompiler", "export",
                           f"{root / 'model.py'}:{func}", "--example", "x=f64[N]",
                           "-o", str(root / out)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ASTCOMPILER_SLOW_COMPILE_NOTICE_S": "0"})


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("export_split")
    (root / "model.py").write_text(USER_FILE, encoding="utf-8")
    for func, out in (("twice_broken", "aot_twice.py"), ("broken_first", "aot_first.py")):
        done = _export(root, func, out)
        assert done.returncode == 0, done.stderr
        # the example call prints as the function does; then the CLI's line
        assert done.stdout.splitlines()[-1].startswith(f"{root / out}: {func}(x: float64[8] (dim 0 = N")
    (root / "importer.py").write_text(IMPORTER, encoding="utf-8")
    results = []
    for _ in range(2):  # the second process loads the pieces' kernels from numba's cache
        run = subprocess.run([sys.executable, str(root / "importer.py"), str(root)],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        results.append(json.loads(run.stdout))
    return root, results


def _plain(name: str):
    namespace: dict = {}
    exec(compile(USER_FILE, "model.py", "exec"), namespace)
    return namespace[name]


def test_split_modules_answer_as_the_plain_function_with_its_prints(exported):
    root, results = exported
    twice, first = _plain("twice_broken"), _plain("broken_first")
    for result in results:
        assert result["loaded"] == []
        for n in (8, 13, 40):
            x = np.random.default_rng(n).standard_normal(n)
            value, kind, got_first, first_kind, printed = result["out"][str(n)]
            expected = twice(x)
            assert kind == type(expected).__name__ == "float64"
            assert value == pytest.approx(expected, rel=1e-12)  # sums in 64 lanes, not pairwise
            assert first_kind == type(first(x)).__name__
            assert got_first == pytest.approx(first(x), rel=1e-12)
            assert printed == (f"total {round(float((np.exp(x) * 2.0).sum()), 3)}\n"
                               f"middle ({n},)\nstart ({n},)\n")


def test_outside_the_guards_the_user_gets_typeerror_and_valueerror(exported):
    _, results = exported
    assert results[0]["errors"] == [
        ["TypeError", "twice_broken(): x must have dtype float64 (x: float64[N]), got float32"],
        ["ValueError", "twice_broken(): x must have 1 dimensions (x: float64[N]), got shape (2, 8)"],
        ["ValueError", "twice_broken(): y must be 3 (the value it was exported for), got 4"]]
    assert results[0]["defaults"] == [3] and results[0]["doc"] == "Two prints: the resume splits again."


def test_pieces_keep_their_lines_in_the_module_and_numbas_cache(exported):
    root, results = exported
    text = (root / "aot_twice.py").read_text()
    assert "import astcompiler" not in text and "@numba.njit(cache=True" in text
    assert results[0]["pieces"] == 3  # prefix; the resume's prefix and resume (it splits again)
    for source in results[0]["sources"]:  # inspect reads each piece's def at its own lines
        assert source.startswith("def twice_broken__") and "___guarded(" in source
    assert "def twice_broken__break_3(x, y, a, s):\n    print(\"total\", round(s, 3))" in text
    cached = [name for name in os.listdir(root / "__pycache__") if name.startswith("aot_twice.")
              and name.endswith(".nbi")]
    assert len(cached) >= 3, cached  # kernels of every piece, by their lines in aot_twice.py


def test_a_break_inside_a_called_function_is_refused_by_name(tmp_path):
    (tmp_path / "model.py").write_text(USER_FILE, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import model  # noqa: PLC0415
        compiled = ac.compile(model.breaks_in_a_callee)
        compiled(np.ones(3))
        with pytest.raises(ExportError) as refused:
            export_entry(model.breaks_in_a_callee, compiled.entries[-1], origin="t",
                         example="x=f64[3]", shown={})
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("model", None)
    assert "not in a function it calls" in str(refused.value)
    assert f"{tmp_path / 'model.py'}:22" in str(refused.value)


def test_the_resume_of_a_marked_dynamic_size_compiles_once(capsys):
    def scaled(x):
        a = np.exp(x)
        print("n", a.shape[0])
        return (a + x).sum()

    compiled = ac.compile(scaled)
    for n in (8, 13, 21):
        x = np.linspace(0.0, 1.0, n)
        ac.mark_dynamic(x, 0)  # a is computed from x: the resume sees both dynamic
        assert compiled(x) == pytest.approx(scaled(x), rel=1e-12)
    entry = compiled.entries[-1]
    assert len(compiled.entries) == 1 and entry.pieces
    assert [len(piece.entries) for piece in entry.pieces] == [1, 1]
    assert capsys.readouterr().out == "n 8\nn 8\nn 13\nn 13\nn 21\nn 21\n"
