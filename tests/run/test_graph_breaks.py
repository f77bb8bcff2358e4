"""Graph breaks split the function: compiled pieces around the statement that runs in Python."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import logs
from astcompiler.testing import CompileCounter


def six_cosines(x):
    y = np.cos(x)
    y = np.cos(y)
    ac.graph_break()
    y = np.cos(y)
    y = np.cos(y)
    ac.graph_break()
    y = np.cos(y)
    return np.cos(y)


def test_six_cosines_two_breaks_three_frames_six_ops():
    counter = CompileCounter()
    compiled = ac.compile(six_cosines, backend=counter)
    x = np.linspace(0, 1, 5)
    for _ in range(3):
        np.testing.assert_allclose(compiled(x), six_cosines(x))
    assert counter.frame_count == 3 and counter.op_count == 6
    out = ac.explain(six_cosines)(x)
    assert (out.graph_count, out.graph_break_count, out.op_count) == (3, 2, 6)
    assert [r.user_stack[-1][2].strip() for r in out.break_reasons] == ["ac.graph_break()"] * 2


def test_a_break_inside_a_loop_runs_that_statement_in_python(capsys):
    def fn(x, n):
        total = x * 2
        for i in range(n):
            print("step", i)
            total = total + i
        return total.sum()

    counter = CompileCounter()
    compiled = ac.compile(fn, backend=counter)
    assert compiled(np.ones(3), 2) == fn(np.ones(3), 2)
    assert capsys.readouterr().out.count("step") == 4
    entry = compiled.entries[0]
    assert entry.pieces and "print()" in entry.break_reason.reason
    assert counter.frame_count == 2  # the prefix (x * 2) and the resume (total.sum())


def test_early_return_inside_the_prefix_and_the_break():
    def fn(x, flag):
        if flag:
            return x + 1
        y = x * 2
        if y.sum() > 100:
            print("big")
            return y
        return -y

    compiled = ac.compile(fn, backend="eager")
    for flag, x in ((True, np.ones(2)), (False, np.ones(2)), (False, np.full(2, 100.0))):
        np.testing.assert_array_equal(compiled(x, flag), fn(x, flag))


def test_pieces_are_visible_and_written_to_files(capsys):
    compiled = ac.compile(six_cosines, backend="eager")
    compiled(np.ones(2))
    ac.show(compiled)
    out = capsys.readouterr().out
    assert "split at a graph break" in out
    assert "six_cosines.<prefix_2>" in out and "six_cosines.<resume_2>" in out
    assert "def six_cosines__graph_2(x):" in compiled.entries[0].split_code
    prefix = compiled.entries[0].pieces[0]
    assert "# test_graph_breaks.py:" in prefix.entries[0].rewritten_code


def test_fullgraph_raises_at_the_first_break():
    with pytest.raises(ac.exc.Unsupported, match="graph_break"):
        ac.compile(six_cosines, backend="eager", fullgraph=True)(np.ones(2))


def test_graph_break_is_a_no_op_eagerly():
    np.testing.assert_allclose(six_cosines(np.zeros(1)), np.cos(np.cos(np.cos(np.cos(
        np.cos(np.cos(np.zeros(1))))))))


def test_graph_breaks_log_their_user_stack(caplog):
    logs.configure_from_env("graph_breaks")
    logger = logging.getLogger("astcompiler.graph_breaks")
    logger.propagate = True
    try:
        with caplog.at_level(logging.INFO, logger="astcompiler.graph_breaks"):
            ac.compile(six_cosines, backend="eager")(np.ones(2))
    finally:
        logger.setLevel(logging.NOTSET)
    assert "ac.graph_break()" in caplog.text and "test_graph_breaks.py:" in caplog.text
