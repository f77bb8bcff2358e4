"""The persistent cache's compiler key hashes the package's sources by content: copies of the
same sources with other mtimes (another worker's venv, a re-install) share cache entries, and
an edited byte gives another key."""

from __future__ import annotations

import os
import pathlib
import shutil

from astcompiler.run import persist

PACKAGE = pathlib.Path(persist.__file__).resolve().parent.parent


def copy_of_package(folder: pathlib.Path) -> pathlib.Path:
    target = folder / "astcompiler"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "*.nb*"))
    for path in target.rglob("*.py"):
        os.utime(path, (1_000_000_000, 1_000_000_000))  # another install's mtimes
    return target


def test_a_copy_with_other_mtimes_has_the_same_digest(tmp_path: pathlib.Path) -> None:
    assert persist.digest_of_tree(str(copy_of_package(tmp_path))) == \
        persist.digest_of_tree(str(PACKAGE))


def test_an_edited_byte_or_a_renamed_file_changes_the_digest(tmp_path: pathlib.Path) -> None:
    copy = copy_of_package(tmp_path)
    original = persist.digest_of_tree(str(copy))
    config = copy / "config.py"
    config.write_bytes(config.read_bytes() + b"\n")
    edited = persist.digest_of_tree(str(copy))
    (copy / "logs.py").rename(copy / "logs2.py")
    assert len({original, edited, persist.digest_of_tree(str(copy))}) == 3


def test_the_build_id_overrides_the_digest(monkeypatch) -> None:
    monkeypatch.setenv("ASTCOMPILER_BUILD_ID", "release-7")
    assert persist.package_digest() == "build:release-7"
