"""Run the CPU test suite in parallel pytest processes, balanced by measured file durations.

``make test`` calls this: the suite is bound by numba's compiler, which is single-threaded, so on
a machine with two cores two pytest processes take about half the time of one. Test files are
dealt to the shards longest first (by the seconds recorded in ``tests/durations.json``; a file
not listed there is estimated from its length), each shard is one ``pytest -q -x`` process with its own
temporary directory, and the first failing shard stops the others, as ``-x`` would.

Tests marked ``slow`` (the full numba op-info matrix, the slow corpus kernels, layout sweeps) are
left out unless ``--full`` is given: CI (``make test``) must stay under 30 minutes on 2 cores, and
``make test-full`` runs everything.

    python tools/run_tests.py                 # as many shards as cores (at least 1, at most 4)
    python tools/run_tests.py --jobs 1        # one process, exactly like plain pytest
    python tools/run_tests.py --record        # also rewrite tests/durations.json from this run
    python tools/run_tests.py --keep-going    # every test, even after a failure (no -x)
    python tools/run_tests.py --full          # the ``slow`` tests too (``make test-full``)
    python tools/run_tests.py -- -k guards    # arguments after -- go to every pytest process

A hang cannot eat CI's budget silently: every few minutes a progress line names each shard's
share done; a test running longer than ``HANG_SECONDS`` dumps the stacks of all its threads into
its shard's log (pytest's ``faulthandler_timeout``); a shard still running after
``--shard-minutes`` is stopped and fails the run; and a run stopped from outside (SIGTERM, as CI
does at its time limit) prints what every shard had written before it ends.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
DURATIONS = TESTS / "durations.json"
NO_TESTS_COLLECTED = 5  # pytest's exit status when a shard selects no test
SEPARATE = ("cuda",)  # folders that run in their own process (``make test-cuda``)
HANG_SECONDS = 300  # a single test this long dumps every thread's stack into its shard's log
PROGRESS_SECONDS = 180  # how often a progress line is printed
SHARD_MINUTES = 45  # a shard still running after this long is stopped (CI allows 90 in all)
TIMED_OUT = 124  # the status of a run with a stopped shard (as timeout(1) exits)


@dataclass
class Shard:
    """One pytest process: the test files it runs and what became of it."""

    number: int
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    process: subprocess.Popen | None = None
    log: Path | None = None
    started: float = 0.0
    elapsed: float = 0.0


def test_files() -> list[str]:
    """Every ``test_*.py`` under tests/, relative to the repository, except the separate folders."""
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        relative = path.relative_to(TESTS)
        if relative.parts[0] not in SEPARATE:
            found.append(str(path.relative_to(ROOT)))
    return found


def recorded_durations() -> dict[str, float]:
    if not DURATIONS.is_file():
        return {}
    return {name: float(seconds) for name, seconds in json.loads(DURATIONS.read_text()).items()}


def estimated_seconds(files: list[str], durations: dict[str, float]) -> dict[str, float]:
    """Recorded seconds per file; a file not recorded is estimated from its number of lines."""
    lines = {name: len((ROOT / name).read_text().splitlines()) for name in files}
    known = [name for name in files if name in durations]
    per_line = (sum(durations[name] for name in known) / max(1, sum(lines[name] for name in known))
                if known else 0.01)
    return {name: durations.get(name, lines[name] * per_line) for name in files}


def deal(files: list[str], durations: dict[str, float], jobs: int) -> list[Shard]:
    """Longest-first greedy assignment: each file goes to the shard with the least work so far."""
    seconds = estimated_seconds(files, durations)
    shards = [Shard(number + 1) for number in range(jobs)]
    for name in sorted(files, key=lambda name: (-seconds[name], name)):
        lightest = min(shards, key=lambda shard: shard.seconds)
        lightest.files.append(name)
        lightest.seconds += seconds[name]
    return [shard for shard in shards if shard.files]


def start(shard: Shard, workdir: Path, pytest_args: list[str], record: bool, first_failure: bool
          ) -> None:
    shard.log = workdir / f"shard{shard.number}.log"
    command = [sys.executable, "-m", "pytest", "-q", *(["-x"] if first_failure else []),
               "-p", "no:cacheprovider",
               "-o", f"faulthandler_timeout={HANG_SECONDS}",
               f"--basetemp={workdir / f'tmp{shard.number}'}", *pytest_args]
    if record:
        command.append(f"--junitxml={workdir / f'shard{shard.number}.xml'}")
    command += shard.files
    shard.started = time.monotonic()
    shard.process = subprocess.Popen(command, cwd=ROOT, stdout=shard.log.open("w"),
                                     stderr=subprocess.STDOUT)


def progress(shard: Shard) -> str:
    """The share of a running shard's tests done, from the last ``[ NN%]`` pytest printed."""
    found = re.findall(r"\[\s*(\d+)%\]", shard.log.read_text(errors="replace")) if shard.log else []
    return f"{found[-1]}%" if found else "starting"


def wait_all(shards: list[Shard], first_failure: bool, shard_minutes: float) -> int:
    """Wait for every shard; when one fails, stop the others (with ``first_failure``); a shard
    past ``shard_minutes`` is stopped and fails with ``TIMED_OUT``. Returns the first failing
    status (pytest's "no tests collected" only when no shard ran a test)."""
    running = list(shards)
    status = 0
    began = last_report = time.monotonic()
    while running:
        time.sleep(0.5)
        now = time.monotonic()
        if now - last_report >= PROGRESS_SECONDS:
            last_report = now
            print(f"[{(now - began) / 60:.0f} min] " + ", ".join(
                f"shard {s.number}: {progress(s)}" for s in running), flush=True)
        for shard in list(running):
            code = shard.process.poll()
            if code is None and now - shard.started > shard_minutes * 60:
                print(f"shard {shard.number} still running after {shard_minutes:.0f} min: "
                      "stopped (its log below ends where it hung)", flush=True)
                shard.process.kill()
                shard.process.wait()
                code = TIMED_OUT
            if code is None:
                continue
            shard.elapsed = now - shard.started
            running.remove(shard)
            if code == NO_TESTS_COLLECTED:  # a -k filter can leave one shard nothing to run
                continue
            if code and not status:
                status = code
                for other in running if first_failure else []:
                    other.process.terminate()
    if not status and all(shard.process.returncode == NO_TESTS_COLLECTED for shard in shards):
        return NO_TESTS_COLLECTED
    return status


def stop_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM (CI's time limit) ends the run like Ctrl-C: the shards' logs are still printed."""
    raise KeyboardInterrupt(f"signal {signum}")


def file_seconds(report: Path) -> dict[str, float]:
    """Seconds per test file from a JUnit XML report (setup, call and teardown of its tests)."""
    totals: dict[str, float] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        parts = [part for part in module if not part[:1].isupper()]
        name = "/".join(parts) + ".py"
        totals[name] = totals.get(name, 0.0) + float(case.get("time", 0.0))
    return totals


SLOW_SECONDS = 6.0  # a test this long here belongs in tests/slow_tests.txt


def test_seconds(report: Path) -> dict[str, float]:
    """Seconds per test node id (``tests/x/test_y.py::test_z[p]``) from a JUnit XML report."""
    seconds: dict[str, float] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        classes = [part for part in module if part[:1].isupper()]
        path = "/".join(part for part in module if not part[:1].isupper()) + ".py"
        seconds["::".join([path, *classes, case.get("name", "")])] = float(case.get("time", 0.0))
    return seconds


def print_slowest(shards: list[Shard], workdir: Path) -> None:
    """The tests that ran for ``SLOW_SECONDS`` or more: candidates for tests/slow_tests.txt."""
    seconds: dict[str, float] = {}
    for shard in shards:
        report = workdir / f"shard{shard.number}.xml"
        if report.is_file():
            seconds.update(test_seconds(report))
    slowest = sorted(((s, name) for name, s in seconds.items() if s >= SLOW_SECONDS), reverse=True)
    if slowest:
        print(f"{len(slowest)} tests ran {SLOW_SECONDS:.0f} s or more (candidates for "
              "tests/slow_tests.txt):")
        for s, name in slowest:
            print(f"  {s:6.1f} s  {name}")


def record_durations(shards: list[Shard], workdir: Path) -> None:
    durations = recorded_durations()
    for shard in shards:
        report = workdir / f"shard{shard.number}.xml"
        if report.is_file():
            durations.update({name: round(seconds, 1)
                              for name, seconds in file_seconds(report).items()})
    known = set(test_files())
    kept = {name: durations[name] for name in sorted(durations) if name in known}
    DURATIONS.write_text(json.dumps(kept, indent=1) + "\n")
    print(f"recorded the durations of {len(kept)} test files in {DURATIONS.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=min(4, max(1, os.cpu_count() or 1)),
                        help="number of pytest processes (default: the number of cores, at most 4)")
    parser.add_argument("--record", action="store_true",
                        help="rewrite tests/durations.json from this run's timings")
    parser.add_argument("--keep-going", action="store_true",
                        help="run every test (no -x) and let the other shards finish after a failure")
    parser.add_argument("--full", action="store_true",
                        help="also run the tests marked slow (left out by default)")
    parser.add_argument("--shard-minutes", type=float, default=SHARD_MINUTES,
                        help=f"stop a shard running longer (default {SHARD_MINUTES})")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    options = parser.parse_args(argv)
    if not options.full and "-m" not in options.pytest_args:
        options.pytest_args = ["-m", "not slow", *options.pytest_args]
    shards = deal(test_files(), recorded_durations(), max(1, options.jobs))
    with tempfile.TemporaryDirectory(prefix="astcompiler-tests-") as tmp:
        workdir = Path(tmp)
        for shard in shards:
            start(shard, workdir, options.pytest_args, options.record, not options.keep_going)
        print(f"running {len(shards)} pytest processes: "
              + ", ".join(f"shard {s.number} ({len(s.files)} files, ~{s.seconds / 60:.0f} min)"
                          for s in shards), flush=True)
        signal.signal(signal.SIGTERM, stop_on_sigterm)
        status = 130
        try:
            status = wait_all(shards, not options.keep_going, options.shard_minutes)
        finally:
            for shard in shards:
                if shard.process.poll() is None:
                    shard.process.kill()
                    shard.elapsed = time.monotonic() - shard.started
            for shard in shards:
                print(f"\n===== shard {shard.number}: {len(shard.files)} files, "
                      f"{shard.elapsed:.0f} s =====")
                print(shard.log.read_text(errors="replace"), end="", flush=True)
        if options.record and (options.keep_going or not status):
            record_durations(shards, workdir)
            print_slowest(shards, workdir)
    print(f"\n{'FAILED' if status else 'passed'}: {len(shards)} shards, "
          + ", ".join(f"{s.elapsed:.0f} s" for s in shards))
    return status


if __name__ == "__main__":
    sys.exit(main())
