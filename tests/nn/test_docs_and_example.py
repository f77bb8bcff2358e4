"""docs/modules.md's examples and examples/mlp_classifier.py run as written."""

from __future__ import annotations

import pathlib
import re
import runpy

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def test_modules_page_examples_run(tmp_path, capsys) -> None:
    blocks = BLOCK.findall((ROOT / "docs" / "modules.md").read_text())
    assert len(blocks) >= 4
    path = tmp_path / "modules_md.py"   # a real file, so code that reads its source can
    path.write_text("\n\n".join(blocks))
    runpy.run_path(str(path), run_name="modules_md")
    out = capsys.readouterr().out
    assert "MLP(\n  (fc1): Linear(in_features=4, out_features=8, bias=True)" in out
    assert "['Linear', 'GELU', 'Linear', 'Sequential']" in out  # the global hooks example


def test_mlp_classifier_example_runs(capsys) -> None:
    runpy.run_path(str(ROOT / "examples" / "mlp_classifier.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "MLPClassifier(" in out and "sample 5:" in out
    assert "predicts the same" in out
