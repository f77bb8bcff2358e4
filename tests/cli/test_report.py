"""The compile trace (``ASTCOMPILER_TRACE_DIR``, ``config.trace_dir``: ``run/trace.py``) and the
HTML report built from it (``astcompiler report``), checked without a browser.

``build_trace`` (also used by ``test_report_browser.py``) records two functions in a fresh
process, as a user would with the environment variable: one with a graph break, one that
recompiles for a new leading size; the process checks each compiled result against the plain
call.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import textwrap
import threading
import warnings
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import cli
from astcompiler.report import build_report, group
from astcompiler.report import graphsvg
from astcompiler.report.graphsvg import dot_source, graph_svg, layers, own_svg
from astcompiler.report.highlight import highlight_lines, own_highlight_lines, pygments_available
from astcompiler.run.trace import load_trace

USER_FILE = '''\
import numpy as np
import astcompiler as ac


@ac.compile
def with_break(x):
    y = x * 2
    print("between the graphs")
    return y + 1


@ac.compile
def recompiling(x):
    m = x.max(axis=-1, keepdims=True)
    return (x - m) * 0.5
'''

DRIVER = '''\
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import model
for shape in [(4, 16), (5, 16)]:
    x = np.random.default_rng(0).random(shape).astype(np.float32)
    np.testing.assert_array_equal(model.recompiling(x), model.recompiling.__wrapped__(x))
x = np.linspace(0.0, 1.0, 7)
np.testing.assert_array_equal(model.with_break(x), model.with_break.__wrapped__(x))
'''


def build_trace(root: Path) -> tuple[Path, Path]:
    """Record the two functions of ``USER_FILE`` under ``root/trace``; returns (trace, model.py)."""
    root.mkdir(parents=True, exist_ok=True)
    model = root / "model.py"
    model.write_text(USER_FILE, encoding="utf-8")
    driver = root / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    trace = root / "trace"
    env = {**os.environ, "ASTCOMPILER_TRACE_DIR": str(trace)}
    done = subprocess.run([sys.executable, str(driver), str(root)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "between the graphs\n" * 2  # compiled, then plain: once each
    return trace, model


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_trace(tmp_path_factory.mktemp("report"))


def records_of(trace: Path, function: str) -> list[dict]:
    return [r for r in load_trace(str(trace)) if r["function"] == function]


# ------------------------------------------------------------------------------------------
# the trace directory
# ------------------------------------------------------------------------------------------


def test_a_recompile_is_recorded_with_its_failed_guard_in_words(traced):
    trace, model = traced
    first, second = records_of(trace, "recompiling")
    assert (first["index"], second["index"]) == (0, 1)
    decorator_line = USER_FILE.splitlines().index("def recompiling(x):")  # co_firstlineno
    assert (first["file"], first["line"]) == (str(model), decorator_line)
    assert first["recompile_reasons"] == []
    assert len(second["recompile_reasons"]) == 1
    assert "'x'" in second["recompile_reasons"][0] and "expected 4, actual 5" in \
        second["recompile_reasons"][0]
    x0, x1 = first["inputs"][0], second["inputs"][0]
    assert (x0["name"], x0["dtype"], x0["shape"], x0["dynamic_dims"]) == \
        ("x", "float32", [4, 16], [])
    assert (x1["shape"], x1["dynamic_dims"]) == ([5, 16], [0])  # automatic dynamic after the change
    assert first["stance"] == "default" and first["kind"] == "graph"


def test_timings_per_phase_include_numba_jit(traced):
    trace, _ = traced
    for record in records_of(trace, "recompiling"):
        assert {"capture", "guards", "lower", "run_code", "setup", "numba_jit"} <= \
            set(record["phases"])
        assert record["compile_time"] == pytest.approx(sum(record["phases"].values()), abs=1e-3)
        assert record["first_call_time"] >= record["compile_time"] * 0.99


def test_artefacts_are_files_next_to_the_record(traced):
    trace, model = traced
    record = records_of(trace, "recompiling")[0]
    folder = Path(record["folder"])
    assert set(record["artefacts"]) >= {"guards", "graph_code", "output_code", "run_code", "source"}
    assert (folder / "guards.py").read_text() == record["guards"]
    assert (folder / "source.py").read_text() == model.read_text()
    assert record["kernels"] and all((folder / k).is_file() for k in record["kernels"])
    assert [n["op"] for n in record["graph"]][0] == "placeholder"
    assert [n["target"] for n in record["graph"] if n["op"] == "call"] == \
        ["max", "subtract", "multiply"]
    leftovers = [p for p in trace.rglob("*") if p.name.startswith(".tmp-")]
    assert leftovers == []  # every file was renamed into place
    assert all(re.fullmatch(r"\d+-\d{4}-\w+", p.name) for p in trace.iterdir())


def test_a_graph_break_names_the_users_line(traced):
    trace, model = traced
    (record,) = records_of(trace, "with_break")
    assert record["kind"] == "split"
    brk = record["graph_break"]
    assert "print()" in brk["reason"]
    line = USER_FILE.splitlines().index('    print("between the graphs")') + 1
    assert brk["user_stack"][-1] == {"file": str(model), "line": line,
                                     "text": 'print("between the graphs")'}
    assert len(record["pieces"]) == 2  # the prefix and the resume compile on their own
    assert len(load_trace(str(trace))) == 5  # and are recorded too


def test_config_trace_dir_is_per_thread_and_names_do_not_collide(tmp_path):
    def double(x):
        return x * 2

    dirs = [tmp_path / "a", tmp_path / "b"]
    errors: list[BaseException] = []

    def work(folder: Path) -> None:
        try:
            with ac.config.patch(trace_dir=str(folder)):
                for n in (3, 4, 5):
                    fn = ac.compile(double, backend="eager", dynamic=False)
                    x = np.arange(float(n))
                    np.testing.assert_array_equal(fn(x), double(x))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(d,)) for d in dirs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for folder in dirs:
        records = load_trace(str(folder))
        assert sorted(r["inputs"][0]["shape"] for r in records) == [[3], [4], [5]]
    names = [p.name for d in dirs for p in d.iterdir()]
    assert len(set(names)) == 6


def test_an_unwritable_trace_dir_warns_once_and_the_call_still_answers(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")

    def plus(x):
        return x + 1

    with ac.config.patch(trace_dir=str(blocker / "trace")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = [ac.compile(plus, backend="eager")(np.ones(n)) for n in (2, 3)]
    assert [r.tolist() for r in results] == [[2.0, 2.0], [2.0, 2.0, 2.0]]
    messages = [str(w.message) for w in caught if "compile trace" in str(w.message)]
    assert len(messages) == 1 and str(blocker / "trace") in messages[0]


def test_no_trace_dir_records_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def neg(x):
        return -x

    with ac.config.patch(trace_dir=""):
        np.testing.assert_array_equal(ac.compile(neg, backend="eager")(np.ones(2)), -np.ones(2))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------
# the report page
# ------------------------------------------------------------------------------------------


class Collector(HTMLParser):
    """Every start tag with its attributes, and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def having(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and all(
            v in a.get(k.rstrip("_"), "").split() for k, v in attrs.items())]


@pytest.fixture(scope="module")
def page(traced) -> tuple[str, Collector]:
    trace, _ = traced
    text = build_report(str(trace), layout="own")
    parsed = Collector()
    parsed.feed(text)
    return text, parsed


def test_the_index_lists_each_function_with_its_counts(page, traced):
    text, parsed = page
    functions = group(load_trace(str(traced[0])))
    rows = re.findall(r'<tr data-fn="(fn-\d+)">(.*?)</tr>', text)
    assert len(rows) == len(functions) == 4  # with_break, its two pieces, recompiling
    counts = {html.unescape(re.search(r">([^<]+)</a>", cells).group(1)):
              [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', cells)]
              for _, cells in rows}
    recompiling = next(k for k in counts if k.startswith("recompiling"))
    with_break = next(k for k in counts if k.startswith("with_break ("))
    assert counts[recompiling] == [2, 1, 0, 0]  # compiles, recompiles, graph breaks, limit hits
    assert counts[with_break] == [1, 0, 1, 0]
    assert {a["id"] for a in parsed.having("section", class_="function")} == {r for r, _ in rows}


def test_every_link_points_into_the_page_and_nothing_is_fetched(page):
    text, parsed = page
    ids = {a["id"] for _, a in parsed.tags if "id" in a}
    hrefs = [a["href"] for a in parsed.having("a") if "href" in a]
    assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs), \
        [h for h in hrefs if h[1:] not in ids]
    assert not [a for t, a in parsed.tags if t in ("script", "img", "link", "iframe") and
                ("src" in a or "href" in a)]
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "@import" not in text


def test_the_break_links_to_the_users_line_in_the_embedded_source(page):
    text, parsed = page
    line = USER_FILE.splitlines().index('    print("between the graphs")') + 1
    block = re.search(r'<div class="graph-break">(.*?)</div>', text, re.S).group(1)
    target = re.search(r'href="#(src-\d+-L(\d+))"', block)
    assert int(target.group(2)) == line
    row = re.search(rf'<span class="ln" id="{target.group(1)}">(.*?)</span>\n', text).group(1)
    assert 'print' in re.sub(r"<[^>]+>", "", row)


def test_recompile_history_and_artefacts_are_shown(page, traced):
    text, parsed = page
    assert len(parsed.having("li", class_="recompile")) == 1
    assert "expected 4, actual 5" in html.unescape(text)
    summaries = re.findall(r'<details class="artefact"><summary>([^<]+)</summary>', text)
    assert summaries.count("guards") == 5 and "wrapper + kernels (output_code)" in summaries
    assert any(s.startswith("file kernel_0_") for s in summaries)


def test_each_graph_is_drawn_as_well_formed_svg(page, traced):
    text, _ = page
    svgs = re.findall(r'<svg class="graph".*?</svg>', text, re.S)
    graphs = [r for r in load_trace(str(traced[0])) if r["graph"]]
    assert len(svgs) == len(graphs) == 4
    for svg, record in zip(svgs, graphs):
        root = ET.fromstring(svg)
        nodes = root.findall("{http://www.w3.org/2000/svg}g")
        assert len(nodes) == len(record["graph"])
        edges = root.findall("{http://www.w3.org/2000/svg}line")
        assert len(edges) == sum(len(n["inputs"]) for n in record["graph"])
    timeline = re.search(r'<svg id="timeline-svg".*?</svg>', text, re.S).group(0)
    ET.fromstring(timeline)
    assert timeline.count('class="phase"') >= 5


def test_layers_follow_the_longest_path():
    nodes = [{"name": "a", "op": "placeholder", "target": "L['a']", "inputs": []},
             {"name": "b", "op": "call", "target": "exp", "inputs": ["a"]},
             {"name": "c", "op": "call", "target": "add", "inputs": ["a", "b"]},
             {"name": "output", "op": "output", "target": "output", "inputs": ["c"]}]
    assert layers(nodes) == {"a": 0, "b": 1, "c": 2, "output": 3}
    assert len(ET.fromstring(own_svg(nodes)).findall("{http://www.w3.org/2000/svg}g")) == 4


@pytest.mark.parametrize("use_pygments", [False, True])
def test_highlighting_keeps_the_text_exactly(traced, use_pygments):
    if use_pygments and not pygments_available():
        pytest.skip("Pygments is not installed")
    record = records_of(traced[0], "recompiling")[0]
    folder = Path(record["folder"])
    for name in ["source.py", "guards.py", "output_code.py", *record["kernels"]]:
        text = (folder / name).read_text()
        lines = highlight_lines(text, use_pygments=use_pygments)
        assert [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in lines] == text.split("\n")


def test_the_own_highlighter_marks_keywords_strings_and_comments():
    source = textwrap.dedent('''\
        def f(x):  # note <b>
            """doc
            more"""
            return len("a<b") + 1
        ''')
    lines = own_highlight_lines(source)
    assert lines[0].startswith('<span class="k">def</span> <span class="f">f</span>')
    assert '<span class="c"># note &lt;b&gt;</span>' in lines[0]
    assert lines[2] == '<span class="s">    more&quot;&quot;&quot;</span>'
    assert '<span class="b">len</span>' in lines[3]
    assert '<span class="s">&quot;a&lt;b&quot;</span>' in lines[3]


def test_cli_report_writes_the_page(traced, tmp_path, capsys):
    out = tmp_path / "report.html"
    code = cli.main(["report", str(traced[0]), "-o", str(out), "--layout", "own"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.strip() == f"{out}: 5 compiles"
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_cli_report_of_a_missing_dir_is_a_one_line_error(tmp_path, capsys):
    code = cli.main(["report", str(tmp_path / "nope"), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no such trace directory" in err and "ASTCOMPILER_TRACE_DIR" in err


def test_cli_report_of_a_broken_record_names_it(tmp_path, capsys):
    (tmp_path / "1-0000-f").mkdir()
    (tmp_path / "1-0000-f" / "compile.json").write_text("{not json")
    code = cli.main(["report", str(tmp_path), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 1 and "unreadable compile record" in err and "Traceback" not in err


def test_without_graphviz_the_own_layout_draws(monkeypatch):
    nodes = [{"name": "a", "op": "placeholder", "target": "L['a']", "inputs": [], "meta": "f64[3]"},
             {"name": "neg", "op": "call", "target": "negative", "inputs": ["a"], "meta": "f64[3]"},
             {"name": "output", "op": "output", "target": "output", "inputs": ["neg"]}]
    monkeypatch.setattr(graphsvg.shutil, "which", lambda name: None)
    for layout in ("auto", "dot", "own"):
        assert graph_svg(nodes, layout) == own_svg(nodes)
    source = dot_source(nodes)
    assert '"a" -> "neg";' in source and '"neg" -> "output";' in source
    assert source.count("[label=") == 3


def test_the_page_says_which_highlighter_it_used(traced):
    own = build_report(str(traced[0]), layout="own", use_pygments=False)
    assert "highlighting: built in" in own
    if pygments_available():
        assert "highlighting: Pygments" in build_report(str(traced[0]), layout="own")
