"""The package layout the architecture promises: stages import only earlier stages, no private
names cross modules, and the run stage has no import circle."""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "astcompiler"
STAGES = ["source", "rewrite", "graph", "ops", "capture", "autodiff", "guards", "lower", "run"]


def _modules() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def _imports(path: pathlib.Path) -> list[tuple[int, str, list[str]]]:
    """(line, absolute dotted module, imported names) of every package import, lazy ones too."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if package[-1] == "__init__":
        package = package[:-1]
    else:
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("astcompiler"):
                found.append((node.lineno, module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("astcompiler"):
                    found.append((node.lineno, alias.name, []))
    return found


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STAGES else None


def test_the_package_is_a_top_level_folder():
    assert (PACKAGE / "__init__.py").is_file()
    assert not (PACKAGE.parent / "src").exists()


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_stage_imports_a_later_one(path):
    own = _stage(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
    if own is None:
        return
    later = set(STAGES[STAGES.index(own) + 1:])
    bad = [(line, module) for line, module, _ in _imports(path) if _stage(module) in later]
    assert not bad, f"{path.name} ({own}) imports later stages: {bad}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_names_cross_modules(path):
    bad = [(line, module, name) for line, module, names in _imports(path) for name in names
           if name.startswith("_") and not name.startswith("__")]
    assert not bad, f"{path.name} imports private names: {bad}"


def test_run_compiled_and_entry_do_not_import_each_other_both_ways():
    entry = {m for _, m, _ in _imports(PACKAGE / "run" / "entry.py")}
    assert "astcompiler.run.compiled" not in entry


def test_no_module_name_holds_numba_dot_cuda():
    """numba-cuda (the ``cuda`` extra) puts an import hook first on ``sys.meta_path`` that
    redirects every module whose dotted name contains ``numba.cuda`` to its own package, and
    recurses without end on a name it cannot map (seen on a GPU machine: ``RecursionError`` on
    importing ``astcompiler.lower.numba.cuda.devices``). So the CUDA target is ``gpu/``."""
    names = [".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in _modules()]
    assert not [n for n in names if "numba.cuda" in n]
