"""Generated files are verified, written atomically into private directories, and an unusable
cache directory never breaks a call.

- A generated file's name carries the hash of its content: a file edited in the cache directory
  (a kernel, a guard, a run function) is rewritten before it is imported, never executed; a file
  whose content does not match its name is refused.
- numba's disk cache beside a rewritten kernel never serves the kernel compiled from the edit.
- Directories the compiler creates are mode 0700; a user's existing directory keeps its mode.
- A cache directory that cannot be used gives one warning and a private temporary directory.
"""

from __future__ import annotations

import builtins
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.source import load_generated_module, write_generated_file
from astcompiler.source import loading
from astcompiler.source.loading import GeneratedFileError

MARK = "\nimport builtins as _b; _b.AC_TAMPERED_RAN = True\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setattr(ac.config, "cache_dir", str(path))
    ac.reset()
    yield path
    ac.reset()
    if hasattr(builtins, "AC_TAMPERED_RAN"):
        del builtins.AC_TAMPERED_RAN


def scale(x):
    return x * 3.0 + 1.0


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _tamper(path: str, edit) -> str:
    with open(path, encoding="utf-8") as handle:
        original = handle.read()
    tampered = edit(original)
    assert tampered != original
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(tampered)
    return original


def _as_new_process(paths: list[str]) -> None:
    """What a new process sees: nothing compiled, none of the generated modules imported."""
    ac.reset()
    for path in paths:
        sys.modules.pop(_stem(path), None)


# ----- verification ----------------------------------------------------------------------------

def test_edited_guard_and_run_files_are_rewritten_not_executed(cache_dir):
    compiled = ac.compile(scale, backend="eager")
    x = np.arange(4.0)
    np.testing.assert_array_equal(compiled(x), scale(x))
    (entry,) = compiled.entries
    targets = [f for f in entry.files if os.sep + "guards" + os.sep in f
               or os.sep + "run" + os.sep in f]
    assert len(targets) == 2
    originals = {f: _tamper(f, lambda text: text + MARK) for f in targets}
    _as_new_process(targets)
    again = ac.compile(scale, backend="eager")
    np.testing.assert_array_equal(again(x), scale(x))
    assert not hasattr(builtins, "AC_TAMPERED_RAN")
    for path, text in originals.items():
        with open(path, encoding="utf-8") as handle:
            assert handle.read() == text  # rewritten with the content its name promises


def test_edited_file_is_rewritten_even_while_its_module_is_loaded(cache_dir):
    compiled = ac.compile(scale, backend="eager")
    x = np.arange(3.0)
    compiled(x)
    run_file = next(f for f in compiled.entries[0].files if os.sep + "run" + os.sep in f)
    original = _tamper(run_file, lambda text: text + MARK)
    ac.reset()
    np.testing.assert_array_equal(ac.compile(scale, backend="eager")(x), scale(x))
    assert open(run_file, encoding="utf-8").read() == original


def test_a_file_that_does_not_match_its_name_is_refused(tmp_path):
    path = write_generated_file(str(tmp_path), "probe", "VALUE = 1\n")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("VALUE = 2" + MARK)
    with pytest.raises(GeneratedFileError, match="does not match the hash in its name"):
        load_generated_module(path)
    assert not hasattr(builtins, "AC_TAMPERED_RAN")
    assert _stem(path) not in sys.modules
    assert write_generated_file(str(tmp_path), "probe", "VALUE = 1\n") == path  # rewritten
    assert load_generated_module(path).VALUE == 1


def test_modules_run_from_the_verified_text_without_bytecode_files(tmp_path):
    path = write_generated_file(str(tmp_path), "probe", "VALUE = 3\n")
    module = load_generated_module(path)
    assert module.VALUE == 3 and module.__file__ == path
    assert sys.modules[_stem(path)] is module
    assert not (tmp_path / "__pycache__").exists()  # no .pyc that could go stale


def kernel_fn(x):
    return x + 1.5


def test_edited_kernel_is_rewritten_and_numba_cache_is_not_stale(cache_dir):
    import importlib.util

    compiled = ac.compile(kernel_fn, backend="numba")
    x = np.arange(6.0)
    np.testing.assert_array_equal(compiled(x), kernel_fn(x))
    kernels = [f for f in compiled.entries[0].files
               if os.path.basename(f).startswith("kernel_")]
    assert len(kernels) == 1
    (kernel,) = kernels
    original = _tamper(kernel, lambda text: text.replace("1.5", "7.5"))
    # an older process that trusted the edited file compiled it into numba's cache
    sys.modules.pop(_stem(kernel), None)
    spec = importlib.util.spec_from_file_location(_stem(kernel), kernel)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_stem(kernel)] = module
    spec.loader.exec_module(module)
    name = next(n for n in dir(module) if n.startswith("kernel_") and not n.endswith("parallel"))
    out = np.empty_like(x)
    getattr(module, name)(x, out)
    np.testing.assert_array_equal(out, x + 7.5)  # the edit is in numba's cache now
    _as_new_process(compiled.entries[0].files)
    again = ac.compile(kernel_fn, backend="numba")
    np.testing.assert_array_equal(again(x), kernel_fn(x))
    assert open(kernel, encoding="utf-8").read() == original


def test_a_new_process_never_runs_edited_generated_files(tmp_path):
    program = textwrap.dedent(f"""
        import builtins, os, sys, numpy as np
        import astcompiler as ac
        ac.config.cache_dir = {str(tmp_path / "cache")!r}
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_cache_safety import kernel_fn
        compiled = ac.compile(kernel_fn, backend="numba")
        print(compiled(np.arange(4.0)).tolist(), hasattr(builtins, "AC_TAMPERED_RAN"))
        print("\\n".join(compiled.entries[0].files))
    """)

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                              check=True)
        return done.stdout.splitlines()

    first = run()
    assert first[0] == "[1.5, 2.5, 3.5, 4.5] False"
    files = first[1:]
    assert {os.path.basename(os.path.dirname(f)) for f in files} >= {"kernels", "guards", "run",
                                                                      "rewritten"}
    originals = {}
    for path in files:
        originals[path] = _tamper(path, lambda text: text.replace("1.5", "7.5") + MARK)
    second = run()
    assert second[0] == first[0]
    for path, text in originals.items():
        assert open(path, encoding="utf-8").read() == text


# ----- atomic writes and private directories ---------------------------------------------------

def test_directories_the_compiler_creates_are_private(tmp_path, monkeypatch):
    existing = tmp_path / "mine"
    existing.mkdir()
    os.chmod(existing, 0o755)
    monkeypatch.setattr(ac.config, "cache_dir", str(existing))
    ac.reset()
    compiled = ac.compile(scale, backend="eager")
    compiled(np.arange(3.0))
    assert _mode(existing) == 0o755  # the user's directory is left as it is
    made = {os.path.dirname(f) for f in compiled.entries[0].files}
    assert made and all(_mode(d) == 0o700 for d in made)
    fresh = tmp_path / "new" / "cache"
    monkeypatch.setattr(ac.config, "cache_dir", str(fresh))
    ac.reset()
    compiled = ac.compile(scale, backend="eager")
    compiled(np.arange(3.0))
    assert _mode(fresh) == 0o700
    assert all(_mode(os.path.dirname(f)) == 0o700 for f in compiled.entries[0].files)
    ac.reset()


def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path, monkeypatch):
    path = write_generated_file(str(tmp_path), "probe", "VALUE = 1\n")
    assert os.listdir(tmp_path) == [os.path.basename(path)]
    assert _mode(path) == 0o600

    def interrupted(src, dst):
        raise RuntimeError("interrupted before the rename")

    monkeypatch.setattr(loading.os, "replace", interrupted)
    with pytest.raises(RuntimeError, match="interrupted"):
        write_generated_file(str(tmp_path), "other", "VALUE = 2\n")
    assert os.listdir(tmp_path) == [os.path.basename(path)]  # nothing half-written is left


# ----- unusable cache directories ---------------------------------------------------------------

def _check_fallback(bad: str, reason: str) -> None:
    compiled = ac.compile(scale, backend="eager")
    x = np.arange(5.0)
    with pytest.warns(RuntimeWarning, match=reason) as caught:
        np.testing.assert_array_equal(compiled(x), scale(x))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert repr(bad) in message and "private temporary directory" in message
    assert "What to do" in message
    files = compiled.entries[0].files
    assert files and not any(f.startswith(bad) for f in files)
    private = os.path.commonpath(files)
    while os.path.basename(private) in ("guards", "run", "rewritten"):
        private = os.path.dirname(private)
    assert _mode(private) == 0o700 and private.startswith(tempfile.gettempdir())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning for the process, not one per compile
        ac.reset()
        other = ac.compile(lambda y: y - 2.0, backend="eager")
        np.testing.assert_array_equal(other(x), x - 2.0)
        assert all(f.startswith(private) for f in other.entries[0].files)


def test_cache_dir_under_a_regular_file(tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    bad = str(blocker / "cache")
    monkeypatch.setattr(ac.config, "cache_dir", bad)
    ac.reset()
    _check_fallback(bad, "NotADirectoryError")


def test_cache_dir_that_is_a_regular_file(tmp_path, monkeypatch):
    bad = tmp_path / "cache-file"
    bad.write_text("not a directory")
    monkeypatch.setattr(ac.config, "cache_dir", str(bad))
    ac.reset()
    _check_fallback(str(bad), "FileExistsError|NotADirectoryError")


def test_cache_dir_without_write_permission(tmp_path, monkeypatch):
    bad = tmp_path / "read-only"
    bad.mkdir()
    os.chmod(bad, 0o500)
    if os.geteuid() == 0:  # root writes anyway: refuse writes below it as the kernel would
        real_mkstemp, real_makedirs = loading.tempfile.mkstemp, loading.os.makedirs

        def under_bad(path) -> bool:
            return os.path.abspath(path).startswith(str(bad))

        def mkstemp(*args, dir=None, **kwargs):
            if dir is not None and under_bad(dir):
                raise PermissionError(13, "Permission denied", dir)
            return real_mkstemp(*args, dir=dir, **kwargs)

        def makedirs(path, *args, **kwargs):
            if under_bad(path) and not os.path.isdir(path):
                raise PermissionError(13, "Permission denied", path)
            return real_makedirs(path, *args, **kwargs)

        monkeypatch.setattr(loading.tempfile, "mkstemp", mkstemp)
        monkeypatch.setattr(loading.os, "makedirs", makedirs)
    monkeypatch.setattr(ac.config, "cache_dir", str(bad))
    ac.reset()
    try:
        _check_fallback(str(bad), "PermissionError")
    finally:
        os.chmod(bad, 0o700)


def test_a_new_cache_dir_is_used_again_after_a_bad_one(tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    monkeypatch.setattr(ac.config, "cache_dir", str(blocker / "cache"))
    ac.reset()
    with pytest.warns(RuntimeWarning):
        ac.compile(scale, backend="eager")(np.arange(2.0))
    good = tmp_path / "good"
    monkeypatch.setattr(ac.config, "cache_dir", str(good))
    ac.reset()
    compiled = ac.compile(scale, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(np.arange(2.0))
    assert all(f.startswith(str(good)) for f in compiled.entries[0].files)
    ac.reset()
