"""The benchmark script runs end to end on its quick sizes (it reports; it never fails on speed).

The only benchmark in the test suite: ``benchmarks/run.py --quick --only tiny`` (a few seconds).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUN_PY = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def test_bench_quick_tiny_runs() -> None:
    result = subprocess.run([sys.executable, str(RUN_PY), "--quick", "--only", "tiny"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("tiny ") for line in lines), result.stdout
    assert "load average" in result.stdout
    assert "mismatch" not in result.stdout, result.stdout

