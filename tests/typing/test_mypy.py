"""``mypy --strict`` on a user's script (``user_script.py``): astcompiler ships ``py.typed``,
``@ac.compile`` (with and without arguments) keeps the function's signature, ``ac.config.patch``
types as decorator and context manager, and ``compiled.entries`` is a list of cache entries."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ARRAY = "numpy.ndarray[tuple[Any, ...], numpy.dtype[numpy.float64]]"


def run_mypy(script: pathlib.Path, work: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """mypy with this folder's settings (strict; astcompiler's own code silent), its cache in
    ``work`` (shared by the tests of this module: the second run reuses numpy's)."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(HERE / "mypy.ini"),
         "--cache-dir", str(work / "cache"), "--no-error-summary", "--show-error-codes",
         str(script)],
        cwd=work, env={**os.environ, "MYPYPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=300)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("mypy")


@pytest.fixture(scope="module")
def mypy_output(work: pathlib.Path) -> str:
    done = run_mypy(HERE / "user_script.py", work)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def revealed(output: str) -> list[str]:
    return re.findall(r'Revealed type is "(.*)"', output)


def test_py_typed_is_shipped() -> None:
    assert (ROOT / "astcompiler" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


def test_strict_mypy_reports_no_error(mypy_output: str) -> None:
    errors = [line for line in mypy_output.splitlines() if ": error:" in line]
    assert errors == []


def test_decorated_functions_keep_their_signatures(mypy_output: str) -> None:
    compiled = "astcompiler.run.compiled.CompiledFunction"
    assert revealed(mypy_output) == [
        f"{compiled}[[x: {ARRAY}, axis: int =], {ARRAY}]",  # @ac.compile
        f"{compiled}[[x: {ARRAY}, factor: float], {ARRAY}]",  # @ac.compile(fullgraph=True, ...)
        f"{compiled}[[x: {ARRAY}], {ARRAY}]",  # ac.compile(plain, backend="eager")
        ARRAY,  # a call returns what the function returns
        "list[astcompiler.run.entry.CacheEntry]",  # compiled.entries
        f"def (x: {ARRAY}) -> {ARRAY}",  # @ac.config.patch(...) keeps the signature
    ]


def test_a_wrong_call_is_a_type_error(work: pathlib.Path, mypy_output: str) -> None:
    """The signature is checked, not just shown: a call with a wrong argument fails mypy."""
    script = work / "wrong.py"
    script.write_text("import astcompiler as ac\n\n\n@ac.compile\ndef f(x: int) -> int:\n"
                      "    return x\n\n\nf('one')\n")
    done = run_mypy(script, work)
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Argument 1 to "__call__" of "CompiledFunction" has incompatible type "str"; ' \
           'expected "int"' in done.stdout
