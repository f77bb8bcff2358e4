"""``tools/run_tests.py``, the parallel runner behind ``make test``: how it deals test files."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("run_tests", ROOT / "tools" / "run_tests.py")
run_tests = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("run_tests", run_tests)
_spec.loader.exec_module(run_tests)


def test_every_cpu_test_file_is_dealt_once_and_cuda_stays_apart():
    files = run_tests.test_files()
    shards = run_tests.deal(files, run_tests.recorded_durations(), 2)
    dealt = [name for shard in shards for name in shard.files]
    assert sorted(dealt) == sorted(files)
    assert "tests/test_run_tests_tool.py" in dealt
    assert not any(name.startswith("tests/cuda/") for name in dealt)


def test_longest_files_go_first_to_the_lightest_shard():
    files = run_tests.test_files()[:5]
    durations = dict(zip(files, [50.0, 40.0, 30.0, 20.0, 10.0]))
    first, second = run_tests.deal(files, durations, 2)
    assert first.files == [files[0], files[3], files[4]]
    assert second.files == [files[1], files[2]]
    assert (first.seconds, second.seconds) == (80.0, 70.0)


def test_more_shards_than_files_leaves_no_empty_shard():
    files = run_tests.test_files()[:2]
    assert len(run_tests.deal(files, {}, 4)) == 2


def test_file_seconds_sums_the_cases_of_each_file(tmp_path):
    report = tmp_path / "report.xml"
    report.write_text(textwrap.dedent("""\
        <testsuites><testsuite>
          <testcase classname="tests.run.test_a" name="test_x" time="1.5"/>
          <testcase classname="tests.run.test_a.TestGroup" name="test_y" time="2.0"/>
          <testcase classname="tests.test_b" name="test_z" time="0.25"/>
        </testsuite></testsuites>"""))
    assert run_tests.file_seconds(report) == {"tests/run/test_a.py": 3.5, "tests/test_b.py": 0.25}


def test_a_shard_past_its_minutes_is_stopped_and_fails_the_run(tmp_path):
    import subprocess
    import time

    shard = run_tests.Shard(1, ["tests/test_hangs.py"])
    shard.log = tmp_path / "shard1.log"
    shard.log.write_text("........ [ 40%]\n....")
    assert run_tests.progress(shard) == "40%"
    shard.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    shard.started = time.monotonic()
    status = run_tests.wait_all([shard], True, shard_minutes=0.02)  # 1.2 s
    assert status == run_tests.TIMED_OUT
    assert shard.process.returncode is not None  # killed, not left running
    assert 1.0 < shard.elapsed < 60
