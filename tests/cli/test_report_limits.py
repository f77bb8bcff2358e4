"""The compile trace records recompile-limit hits (``run/trace.record_limit_hit``: which guards
failed, what the call did next) and the report shows them; the report's Graphviz path runs
against a fake ``dot`` on ``PATH`` (a small script), and falls back to its own layout when
``dot`` fails or draws nothing.
"""

from __future__ import annotations

import html
import json
import os
import re
import stat
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.exc import FailOnRecompileLimitHit
from astcompiler.report import build_report, group
from astcompiler.report.graphsvg import dot_source, graph_svg, own_svg
from astcompiler.run.trace import LIMIT_FILE, load_limit_hits, load_trace


def scaled(x):
    return x * 2.0 + 1.0


def shifted(x):
    return x - 1.0


INPUTS = (np.arange(3.0), np.arange(3, dtype=np.float32), np.arange(3, dtype=np.int32))


def test_a_recompile_limit_hit_is_recorded_once_with_the_failed_guards(tmp_path):
    trace = tmp_path / "trace"
    compiled = ac.compile(scaled, backend="eager")
    with ac.config.patch(trace_dir=str(trace), recompile_limit=1), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in INPUTS:  # one entry; the next two inputs pass no guard
            out = compiled(x)
            assert out.dtype == scaled(x).dtype and out.tobytes() == scaled(x).tobytes()
    assert [str(w.message).split(";")[0] for w in caught if "recompile_limit" in str(w.message)] \
        == [f"astcompiler: scaled ({Path(__file__).name}:{scaled.__code__.co_firstlineno}) hit "
            "config.recompile_limit (1)"]
    hits = load_limit_hits(str(trace))
    assert len(hits) == 1  # the first hit only: later ones run eagerly the same way
    hit = hits[0]
    assert (hit["function"], hit["limit"], hit["entries"], hit["outcome"]) == \
        ("scaled", 1, 1, "eager")
    assert hit["failed_guards"] == ["0/0: array 'x' dtype mismatch. expected float64, actual "
                                   "float32"]  # entry 0's guard, in words
    assert [(i["name"], i["dtype"], i["shape"]) for i in hit["inputs"]] == [("x", "float32", [3])]
    assert len(load_trace(str(trace))) == 1  # the one compile; the hit is no compile
    assert os.listdir(hit["folder"]) == [LIMIT_FILE]


def test_fail_on_recompile_limit_hit_is_recorded_as_raised(tmp_path):
    trace = tmp_path / "trace"
    compiled = ac.compile(shifted, backend="eager")
    with ac.config.patch(trace_dir=str(trace), recompile_limit=1,
                         fail_on_recompile_limit_hit=True):
        compiled(INPUTS[0])
        with pytest.raises(FailOnRecompileLimitHit, match="hit config.recompile_limit"):
            compiled(INPUTS[1])
    (hit,) = load_limit_hits(str(trace))
    assert (hit["function"], hit["outcome"]) == ("shifted", "raised")


def test_the_report_shows_the_hit_and_counts_it(tmp_path):
    trace = tmp_path / "trace"
    compiled = ac.compile(scaled, backend="eager")
    with ac.config.patch(trace_dir=str(trace), recompile_limit=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in INPUTS[:2]:
            compiled(x)
    (function,) = group(load_trace(str(trace)), load_limit_hits(str(trace)))
    assert (len(function.compiles), len(function.limit_hits)) == (1, 1)
    text = build_report(str(trace), layout="own", use_pygments=False)
    (block,) = re.findall(r'<div class="limit-hit">(.*?)</div>', text)
    assert "hit config.recompile_limit (1) with 1 entries: the call ran the plain function" in block
    (failed,) = re.findall(r"<li>(0/0: .*?)</li>", block)
    assert html.unescape(failed) == load_limit_hits(str(trace))[0]["failed_guards"][0]
    row = re.search(r'<tr data-fn="fn-0">(.*?)</tr>', text).group(1)
    counts = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)]
    assert counts == [1, 0, 0, 1]  # compiles, recompiles, graph breaks, limit hits


NODES = [{"name": "a", "op": "placeholder", "target": "L['a']", "inputs": [], "meta": "f64[3]"},
         {"name": "neg", "op": "call", "target": "negative", "inputs": ["a"], "meta": "f64[3]"},
         {"name": "output", "op": "output", "target": "output", "inputs": ["neg"]}]

FAKE_DOT = '''\
#!{python}
"""A stand-in for Graphviz's dot: saves its input and arguments, answers as MODE says."""
import json, sys
source = sys.stdin.read()
with open({record!r}, "w") as handle:
    json.dump({{"argv": sys.argv[1:], "source": source}}, handle)
mode = {mode!r}
if mode == "fail":
    sys.exit(3)
if mode == "draw":
    sys.stdout.write('<?xml version="1.0"?>\\n<!DOCTYPE svg>\\n<svg width="80pt" height="40pt">'
                     '<g class="node"><title>a</title></g></svg>\\n')
'''


def fake_dot(folder: Path, mode: str) -> Path:
    """An executable ``dot`` in ``folder``; its input lands in ``folder/record.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "dot"
    script.write_text(FAKE_DOT.format(python=sys.executable, record=str(folder / "record.json"),
                                      mode=mode), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder / "record.json"


@pytest.mark.skipif(os.name != "posix", reason="the fake dot is a script with a #! line")
@pytest.mark.parametrize("mode", ["draw", "fail", "silent"])
def test_graphviz_is_called_with_the_dot_source_and_its_failures_fall_back(tmp_path, monkeypatch,
                                                                          mode):
    record = fake_dot(tmp_path / "bin", mode)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    for layout in ("auto", "dot"):
        drawn = graph_svg(NODES, layout)
        sent = json.loads(record.read_text())
        assert sent == {"argv": ["-Tsvg"], "source": dot_source(NODES)}
        if mode == "draw":  # Graphviz's drawing, its XML header cut, marked as a graph
            assert drawn == ('<svg class="graph" width="80pt" height="40pt"><g class="node">'
                             "<title>a</title></g></svg>\n")
        else:  # dot failed or drew nothing: the own layout
            assert drawn == own_svg(NODES)
    record.unlink()
    assert graph_svg(NODES, "own") == own_svg(NODES) and not record.exists()  # dot not called
