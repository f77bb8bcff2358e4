"""``ASTCOMPILER_LOGS`` / ``astcompiler.logs.set_logs``: unknown names are refused with the valid
ones listed, every artefact logs something, ``+name`` adds detail, ``compile`` logs each phase
with its time, names are the user's (no generated helper names), graph-break pieces keep their
origins, and a slow first compile gives a one-line notice."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
from typing import Iterator

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import logs

VALID = "all, rewritten_code, graph_code, guards, output_code, recompiles, graph_breaks, compile"


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self, artifact: str, level: int | None = None) -> list[str]:
        return [r.getMessage() for r in self.records if r.name == f"astcompiler.{artifact}"
                and (level is None or r.levelno == level)]


@contextlib.contextmanager
def logging_of(spec: str) -> Iterator[Records]:
    """``set_logs(spec)`` with every astcompiler logger's records collected."""
    records = Records()
    loggers = [logging.getLogger(f"astcompiler.{name}") for name in logs.ARTIFACTS]
    logs.set_logs(spec)
    for logger in loggers:
        logger.addHandler(records)
    try:
        yield records
    finally:
        for logger in loggers:
            logger.removeHandler(records)
        logs.set_logs("")


def two_breaks(x, flag):
    if flag:
        return x * 3
    y = np.sin(x) * 2
    ac.graph_break()
    return y + 1


# ----- names --------------------------------------------------------------------------------
def test_unknown_name_is_an_error_listing_the_valid_ones():
    with pytest.raises(ValueError) as info:
        logs.set_logs("guards,grpah_code,+recompile")
    assert str(info.value) == (
        f"unknown astcompiler log name(s) 'grpah_code', '+recompile'; valid names: {VALID} "
        "(comma separated; '+name' for debug level)")


def test_unknown_name_in_the_environment_is_one_warning_and_the_rest_applies(tmp_path):
    script = tmp_path / "user.py"
    script.write_text("import warnings, logging, numpy as np\n"
                      "warnings.simplefilter('always')\n"
                      "import astcompiler as ac\n"
                      "ac.compile(lambda x: x + 1, backend='eager')(np.ones(2))\n"
                      "print(logging.getLogger('astcompiler.guards').level)\n")
    env = {**os.environ, "ASTCOMPILER_LOGS": "guards,bogus"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]
    assert warned == [f"{script}:3: RuntimeWarning: ASTCOMPILER_LOGS: unknown astcompiler log "
                      f"name(s) 'bogus'; valid names: {VALID} (comma separated; '+name' for "
                      "debug level)"]
    assert done.stdout.split()[-1] == str(logging.INFO)
    assert "[astcompiler.guards] guards for <lambda>" in done.stderr  # the format: the logger


def test_all_and_plus_set_levels():
    assert logs.parse("all") == dict.fromkeys(logs.ARTIFACTS, logging.INFO)
    assert logs.parse("all,+guards")["guards"] == logging.DEBUG
    assert logs.parse(" +compile , ") == {"compile": logging.DEBUG}
    assert logs.parse("") == {}


def test_set_logs_turns_off_what_it_turned_on():
    with logging_of("guards"):
        assert logging.getLogger("astcompiler.guards").isEnabledFor(logging.INFO)
    assert logging.getLogger("astcompiler.guards").propagate is True
    assert logging.getLogger("astcompiler.guards").level == logging.NOTSET


# ----- every artefact logs ------------------------------------------------------------------
def test_every_artifact_logs_something():
    fn = ac.compile(two_breaks, backend="eager", dynamic=False)
    with logging_of("all") as records:
        fn(np.ones(3), False)
        fn(np.ones(4), False)  # a recompile
    for artifact in logs.ARTIFACTS:
        assert records.messages(artifact), f"{artifact} logged nothing"


def test_compile_logs_each_phase_with_its_time():
    fn = ac.compile(lambda x: np.cos(x) + 1, backend="eager")
    with logging_of("compile") as records:
        fn(np.ones(3))
    lines = records.messages("compile")
    title = fn.title
    phases = [line.split(": ", 1)[1].split(" ")[0] for line in lines[:-1]]
    assert phases == ["capture", "guards", "lower", "run_code"]
    assert all(line.startswith(f"{title}: ") and line.endswith(" ms") or line.endswith(" s")
               for line in lines[:-1])
    assert lines[-1].startswith(f"{title}: compiled (2 ops) in ")
    for phase in ("capture", "guards", "lower", "run_code", "setup"):
        assert f"{phase} " in lines[-1]
    assert "; first call " in lines[-1]


def test_plus_adds_detail_at_debug_level():
    fn = ac.compile(lambda x: x * 2, backend="eager")
    with logging_of("guards,graph_code,output_code,rewritten_code") as info:
        fn(np.ones(3))
    fn = ac.compile(lambda x: x * 2, backend="eager")
    with logging_of("+guards,+graph_code,+output_code,+rewritten_code") as debug:
        fn(np.ones(3))
    for artifact in ("guards", "graph_code", "output_code", "rewritten_code"):
        assert info.messages(artifact, logging.DEBUG) == []
        [detail] = debug.messages(artifact, logging.DEBUG)
        assert "in detail:" in detail
    [facts] = debug.messages("guards", logging.DEBUG)
    assert "L['x']" in facts and "(3,)" in facts
    [graph] = debug.messages("graph_code", logging.DEBUG)
    assert "1 ops, 1 inputs" in graph


def test_plus_recompiles_lists_every_failed_guard():
    fn = ac.compile(lambda x, y: x + y, backend="eager", dynamic=False)
    fn(np.ones(3), np.ones(3))
    with logging_of("+recompiles") as records:
        fn(np.ones(4), np.ones(4))
    [first] = records.messages("recompiles", logging.INFO)
    [every] = records.messages("recompiles", logging.DEBUG)
    assert first.count("\n    - ") == 1  # the first failure of each entry
    assert "'x' size mismatch" in every and "'y' size mismatch" in every


# ----- names and origins --------------------------------------------------------------------
def test_pieces_of_a_split_function_are_named_as_the_user_knows_them():
    fn = ac.compile(two_breaks, backend="eager")
    fn(np.ones(3), False)
    fn(np.ones(4), False)
    with logging_of("recompiles,compile,graph_breaks") as records:
        fn(np.ones(5), False)  # the pieces recompile on their own
    text = "\n".join(r.getMessage() for r in records.records)
    assert "two_breaks__graph" not in text and "two_breaks__resume" not in text
    assert "__ac" not in text and "<locals>" not in text
    assert "Recompiling function two_breaks.<prefix_1> in test_logs.py:" in text


def test_a_prefix_with_an_early_return_keeps_its_origins():
    """The prefix of a split whose statements return (flagged, so rebuilt) names the user's
    lines, not ``?``."""
    fn = ac.compile(two_breaks, backend="eager")
    with logging_of("rewritten_code,graph_code") as records:
        fn(np.ones(3), False)
    first_line = two_breaks.__code__.co_firstlineno
    heads = [m.split("\n", 1)[0] for m in records.messages("rewritten_code")]
    assert f"rewritten_code for two_breaks.<prefix_1> (test_logs.py:{first_line + 1}):" in heads
    assert not any(":?" in head for head in heads)
    prefix = next(m for m in records.messages("rewritten_code") if "<prefix_1>" in m)
    assert f"# test_logs.py:{first_line + 2}" in prefix  # return x * 3: its own line


# ----- the slow-compile notice --------------------------------------------------------------
def test_slow_first_compile_gives_one_notice(monkeypatch):
    fn = ac.compile(lambda x: x - 1, backend="eager")
    with logging_of("") as records, ac.config.patch(slow_compile_notice_s=1e-9):
        fn(np.ones(3))
        fn(np.ones(3))  # a hit: no notice
    [notice] = records.messages("compile", logging.WARNING)
    assert notice.startswith(f"astcompiler: {fn.title} spent ")
    assert "compiling on its first call" in notice and "slow_compile_notice_s" in notice


def test_split_function_gives_one_notice_not_one_per_piece():
    fn = ac.compile(two_breaks, backend="eager")
    with logging_of("") as records, ac.config.patch(slow_compile_notice_s=1e-9):
        fn(np.ones(3), False)
    [notice] = records.messages("compile", logging.WARNING)
    assert notice.startswith(f"astcompiler: {fn.title} spent ")


class Doubler(ac.nn.Module):
    def forward(self, x):
        return x * 2


def test_module_notice_names_the_modules_forward():
    """A compiled module call runs the shared ``module_call``; its notice names the module."""
    module = ac.compile(Doubler(), backend="eager")
    with logging_of("") as records, ac.config.patch(slow_compile_notice_s=1e-9):
        module(np.ones(3))
    [notice] = records.messages("compile", logging.WARNING)
    line = Doubler.forward.__code__.co_firstlineno
    assert notice.startswith(f"astcompiler: Doubler.forward (test_logs.py:{line}) spent ")
    assert "module_call" not in notice


def test_no_notice_when_off_or_fast():
    fn = ac.compile(lambda x: x + 2, backend="eager")
    with logging_of("") as records, ac.config.patch(slow_compile_notice_s=0):
        fn(np.ones(3))
    g = ac.compile(lambda x: x + 3, backend="eager")
    with logging_of("") as more, ac.config.patch(slow_compile_notice_s=3600):
        g(np.ones(3))
    assert records.messages("compile", logging.WARNING) == []
    assert more.messages("compile", logging.WARNING) == []


def test_plus_graph_breaks_adds_the_traceback():
    fn = ac.compile(two_breaks, backend="eager")
    with logging_of("+graph_breaks") as records:
        fn(np.ones(3), False)
    [tb, *_] = [m for m in records.messages("graph_breaks", logging.DEBUG)
                if m.startswith("traceback of the graph break")]
    assert "Traceback (most recent call last)" in tb and "GraphBreak" in tb
    assert any(m.startswith("graph break in") for m in records.messages("graph_breaks",
                                                                        logging.INFO))


def squared_loss(x):
    return (x * x).sum()


def test_gradient_notice_names_the_users_function():
    """``ac.compile(ac.value_and_grad(f))``: the notice names ``f`` and its line, not gradients.py."""
    fn = ac.compile(ac.value_and_grad(squared_loss), backend="eager")
    with logging_of("") as records, ac.config.patch(slow_compile_notice_s=1e-9):
        fn(np.ones(3))
    [notice] = records.messages("compile", logging.WARNING)
    line = squared_loss.__code__.co_firstlineno
    assert notice.startswith(f"astcompiler: value_and_grad(squared_loss) (test_logs.py:{line}) ")
