"""Cache entries, guards, recompilation, errors, threads, inspection and logging."""

from __future__ import annotations

import logging
import threading
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import logs
from astcompiler.testing import CompileCounter

SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_hits_reuse_the_entry_and_shape_changes_recompile():
    counter = CompileCounter()
    fn = ac.compile(lambda x: np.sin(x) + 1, backend=counter, dynamic=False)
    for n in (8, 8, 9, 9, 8):
        fn(np.ones(n))
    assert counter.frame_count == 2 and len(fn.entries) == 2
    assert counter.op_count == 4


def test_guard_failure_is_explained_in_words():
    fn = ac.compile(lambda x: x + 1, backend="eager")
    fn(np.ones((8, 3)))
    entry = fn.entries[0]
    assert entry.guard.failures((np.ones((9, 3)),), {}) == [
        "array 'x' size mismatch at index 0. expected 8, actual 9"]
    assert entry.guard.failures((np.ones((8, 3), np.float32),), {}) == [
        "array 'x' dtype mismatch. expected float64, actual float32"]
    assert "is not of type ndarray" in entry.guard.failures(([1.0],), {})[0]


def test_guard_source_is_readable_python():
    fn = ac.compile(scaled, backend="eager")
    fn(np.ones((2, 3)))
    guards = fn.entries[0].guards
    assert "def guard(x):" in guards
    assert "x.shape == (2, 3)" in guards
    assert "___G['SCALE']" in guards and "== 2.0" in guards


def test_changing_a_global_recompiles():
    global SCALE
    fn = ac.compile(scaled, backend="eager")
    x = np.ones(3)
    assert fn(x)[0] == 2.0
    SCALE = 5.0
    try:
        assert fn(x)[0] == 5.0
        assert len(fn.entries) == 2
    finally:
        SCALE = 2.0


def test_changing_a_closure_cell_recompiles():
    k = 2.0

    def fn(x):
        return x * k

    compiled = ac.compile(fn, backend="eager")
    assert compiled(np.ones(1))[0] == 2.0
    k = 4.0  # noqa: F841 - read through the closure cell
    assert compiled(np.ones(1))[0] == 4.0


def test_python_ints_are_specialized_and_guarded():
    counter = CompileCounter()
    fn = ac.compile(lambda x, n: x * n, backend=counter)
    fn(np.ones(2), 2)
    fn(np.ones(2), 2)
    fn(np.ones(2), 3)
    assert counter.frame_count == 2


def test_default_arguments_are_guarded_as_values():
    def fn(x, n=3):
        return x * n
    compiled = ac.compile(fn, backend="eager")
    assert compiled(np.ones(1))[0] == 3
    assert compiled(np.ones(1), 4)[0] == 4
    assert len(compiled.entries) == 2


def test_recompile_limit_warns_once_then_runs_eagerly():
    counter = CompileCounter()
    fn = ac.compile(lambda x: x * 2, backend=counter, dynamic=False)
    with ac.config.patch(recompile_limit=2):
        fn(np.ones(1))
        fn(np.ones(2))
        with pytest.warns(RuntimeWarning, match=r"hit config.recompile_limit \(2\)") as record:
            out = fn(np.ones(3))
        assert "size mismatch" in str(record[0].message)
        np.testing.assert_array_equal(out, np.full(3, 2.0))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fn(np.ones(4))  # no second warning
    assert counter.frame_count == 2 and len(fn.entries) == 2
    fn(np.ones(2))  # existing entries keep serving hits
    assert counter.frame_count == 2


def test_fullgraph_error_names_file_line_and_the_line_itself():
    def has_print(x):
        y = x + 1
        print(y)
        return y

    fn = ac.compile(has_print, fullgraph=True, backend="eager")
    with pytest.raises(ac.exc.Unsupported) as info:
        fn(np.ones(2))
    message = str(info.value)
    line = has_print.__code__.co_firstlineno + 2
    assert f"test_dispatch.py:{line}" in message
    assert "print(y)" in message and "print()" in message
    assert "what to do" in message


def test_fullgraph_error_through_an_inlined_helper():
    def helper(x):
        return x.tolist()

    def outer(x):
        return helper(x)

    with pytest.raises(ac.exc.Unsupported) as info:
        ac.compile(outer, fullgraph=True, backend="eager")(np.ones(2))
    assert "x.tolist()" in str(info.value) and "inlined from" in str(info.value)


def test_function_without_source_warns_once_and_runs_eagerly():
    scope: dict = {"np": np}
    exec("def made(x):\n    return x + 1\n", scope)
    fn = ac.compile(scope["made"], backend="eager")
    with pytest.warns(RuntimeWarning, match="no source"):
        assert fn(np.ones(2))[0] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fn(np.ones(2))[0] == 2


@pytest.mark.parametrize("bad, error, match", [
    (3, TypeError, "expects a function"),
    (len, TypeError, "C functions"),
])
def test_bad_targets(bad, error, match):
    with pytest.raises(error, match=match):
        ac.compile(bad)


def test_generators_and_async_functions_run_eagerly_or_are_rejected_with_fullgraph():
    def gen(x):
        yield x
        yield x + 1

    async def coro(x):
        return x

    compiled = ac.compile(gen, backend="eager")
    assert list(compiled(1)) == list(gen(1)) == [1, 2]
    assert compiled.entries == []
    with pytest.raises(TypeError, match="generator"):
        ac.compile(gen, fullgraph=True)
    with pytest.raises(TypeError, match="async"):
        ac.compile(coro, fullgraph=True)


def test_unknown_backend_fails_at_decoration():
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        ac.compile(lambda x: x, backend="nope")


def test_wrong_arguments_raise_pythons_own_error():
    fn = ac.compile(lambda x: x + 1, backend="eager")
    with pytest.raises(TypeError, match="positional argument"):
        fn(1, 2)


def test_concurrent_calls_compile_once():
    counter = CompileCounter()
    fn = ac.compile(lambda x: np.cos(x) * 2, backend=counter)
    x = np.linspace(0, 1, 100)
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(fn(x))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and counter.frame_count == 1
    for r in results:
        np.testing.assert_allclose(r, np.cos(x) * 2)


def test_reset_forgets_entries():
    fn = ac.compile(lambda x: x + 1, backend="eager")
    fn(np.ones(2))
    ac.reset()
    assert fn.entries == []
    fn(np.ones(2))
    assert len(fn.entries) == 1


def test_show_prints_every_section(capsys):
    fn = ac.compile(scaled, backend="eager")
    fn(np.ones(2))
    ac.show(fn)
    out = capsys.readouterr().out
    for section in ("rewritten_code", "guards", "graph_code", "output_code"):
        assert f"----- {section} -----" in out
    assert "np.multiply(x, 2.0)" in out


def test_explain_reports_graphs_and_breaks_and_leaves_no_entries():
    def fn(x):
        y = np.cos(x) + 1
        return y * 2

    compiled = ac.compile(fn, backend="eager")
    out = ac.explain(compiled)(np.ones(3))
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.op_count == 3
    assert out.ops_per_graph == [["cos", "add", "multiply"]]
    assert str(out).startswith("Graph Count: 1\nGraph Break Count: 0\nOp Count: 3\n")
    assert compiled.entries == []

    def breaks(x):
        print(x)
        return x
    out = ac.explain(breaks)(np.ones(1))
    assert out.graph_count == 0 and out.graph_break_count == 1
    assert "print()" in out.break_reasons[0].reason
    assert out.break_reasons[0].user_stack[-1][2].strip() == "print(x)"


def test_explain_old_form_warns():
    with pytest.warns(FutureWarning):
        out = ac.explain(lambda x: x + 1, np.ones(2))
    assert out.graph_count == 1


def test_recompile_log(caplog):
    logs.configure_from_env("recompiles")
    logger = logging.getLogger("astcompiler.recompiles")
    logger.propagate = True
    try:
        fn = ac.compile(lambda x: x + 1, backend="eager")
        fn(np.ones(4))
        with caplog.at_level(logging.INFO, logger="astcompiler.recompiles"):
            fn(np.ones(5))
    finally:
        logger.setLevel(logging.NOTSET)
    text = caplog.text
    assert "Recompiling function <lambda>" in text
    assert "- 0/0: array 'x' size mismatch at index 0. expected 4, actual 5" in text


def test_config_patch_is_a_context_manager_and_decorator():
    assert ac.config.recompile_limit == 8
    with ac.config.patch(recompile_limit=3):
        assert ac.config.recompile_limit == 3

    @ac.config.patch(unroll_limit=5)
    def inner():
        return ac.config.unroll_limit

    assert inner() == 5 and ac.config.unroll_limit == 64
    with pytest.raises(AttributeError, match="no setting"):
        ac.config.patch(nope=1)


def test_loops_past_the_unroll_limit_become_regions():
    def fn(x):
        for i in range(100):
            x = x + i
        return x

    with ac.config.patch(unroll_limit=10):
        compiled = ac.compile(fn, backend="eager")
        np.testing.assert_array_equal(compiled(np.zeros(2)), fn(np.zeros(2)))
    graph = compiled.entries[0].graph
    assert [n.target for n in graph.nodes if n.op == "region"] == ["for_range"]


def test_static_while_loops_past_the_unroll_limit_break_the_graph():
    def fn(x):
        n = 0
        while n < 100:
            x = x + n
            n += 1
        return x

    with ac.config.patch(unroll_limit=10):
        compiled = ac.compile(fn, backend="eager")
        np.testing.assert_array_equal(compiled(np.zeros(2)), fn(np.zeros(2)))
    assert "unroll_limit" in compiled.entries[0].break_reason.reason


def test_loops_without_graph_work_do_not_count_against_the_limit():
    def fn(x):
        total = 0
        for i in range(1000):
            total += i
        return x + total

    with ac.config.patch(unroll_limit=4):
        compiled = ac.compile(fn, backend="eager")
        compiled(np.zeros(1))
    assert not compiled.entries[0].is_eager


def test_fullgraph_does_not_hide_a_capture_gap_behind_an_eager_run(monkeypatch):
    from astcompiler.capture import lifting

    def numpy_error(x):
        return x.reshape(3, 3)  # NumPy itself rejects it: its own error, even under fullgraph

    with pytest.raises(ValueError, match="cannot reshape"):
        ac.compile(numpy_error, backend="eager", fullgraph=True)(np.ones(4))

    def fn(x):
        return x + 1

    # simulate a bug inside astcompiler: a helper called with the wrong arguments
    monkeypatch.setattr(lifting, "_hint", lifting._module_registry)
    with pytest.raises(ac.exc.Unsupported, match="capture raised TypeError"):
        ac.compile(fn, backend="eager", fullgraph=True)(np.ones(4))
    np.testing.assert_array_equal(ac.compile(fn, backend="eager")(np.ones(4)), np.full(4, 2.0))
