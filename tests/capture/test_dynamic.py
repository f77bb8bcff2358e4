"""Dynamic shapes: symbols, 0/1 specialization, markers, sources, automatic dynamism."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.capture.sizes.dynamic import MARKERS, source_matches
from astcompiler.testing import CompileCounter


def pointwise_and_slice(x):
    return np.sin(x) * 2 + x[1:].sum()


@pytest.mark.parametrize("dynamic, sizes, frames", [
    (None, [2, 3, 4, 4, 5, 5, 6], 2),
    (False, [2, 3, 4, 4, 5, 5, 6], 5),
    (True, [2, 3, 4, 4, 5, 5, 6], 1),
    (True, [3, 2, 1, 0], 3),
])
def test_frame_counts(dynamic, sizes, frames):
    counter = CompileCounter()
    fn = ac.compile(pointwise_and_slice, backend=counter, dynamic=dynamic)
    for n in sizes:
        x = np.arange(float(n))
        np.testing.assert_allclose(fn(x), pointwise_and_slice(x))
    assert counter.frame_count == frames


def test_symbolic_graph_and_guards_are_plain_python():
    fn = ac.compile(pointwise_and_slice, backend="eager", dynamic=True)
    fn(np.arange(5.0))
    entry = fn.entries[0]
    assert 'x: "f64[s0]"' in entry.graph_code
    assert '"f64[s0 - 1]" = x[1:]' in entry.graph_code
    assert "x.ndim == 1" in entry.guards and "x.shape[0] >= 2" in entry.guards
    assert "Eq(" not in entry.guards


def test_branching_on_a_size_records_a_guard():
    def fn(x):
        if x.shape[0] > 4:
            return x * 2
        return x
    compiled = ac.compile(fn, backend="eager", dynamic=True)
    compiled(np.ones(6))
    compiled(np.ones(9))
    assert len(compiled.entries) == 1
    assert "x.shape[0] > 4" in compiled.entries[0].guards
    np.testing.assert_array_equal(compiled(np.ones(3)), np.ones(3))
    assert len(compiled.entries) == 2


def test_sizes_flow_into_creation_and_reshape():
    def fn(x):
        n = x.shape[0]
        out = np.zeros((n, 2))
        out[:, 0] = x
        return out.reshape(-1), n
    compiled = ac.compile(fn, backend="eager", dynamic=True)
    for n in (3, 7, 12):
        flat, size = compiled(np.arange(float(n)))
        np.testing.assert_array_equal(flat, fn(np.arange(float(n)))[0])
        assert size == n and type(size) is int
    assert len(compiled.entries) == 1


def test_mark_dynamic_specialized_by_the_code_is_an_error():
    def fn(x):
        if x.shape[0] == 3:
            return x + 1
        return x - 1
    x = np.ones(3)
    ac.mark_dynamic(x, 0)
    with pytest.raises(ac.exc.ConstraintViolationError) as info:
        ac.compile(fn, backend="eager")(x)
    message = str(info.value)
    assert "L['x'].size()[0]" in message and "maybe_mark_dynamic" in message
    assert f"test_dynamic.py:{fn.__code__.co_firstlineno + 1}" in message


def test_maybe_mark_dynamic_never_raises():
    def fn(x):
        return x + 1 if x.shape[0] == 3 else x - 1
    x = np.ones(3)
    ac.maybe_mark_dynamic(x, 0)
    np.testing.assert_array_equal(ac.compile(fn, backend="eager")(x), x + 1)


def test_mark_dynamic_range():
    y = np.ones(5)
    ac.mark_dynamic(y, 0, min=2, max=4)
    with pytest.raises(ac.exc.ConstraintViolationError, match=r"outside the range \[2, 4\]"):
        ac.compile(lambda v: v * 2, backend="eager")(y)
    z = np.ones(4)
    ac.mark_dynamic(z, 0, min=2, max=4)
    compiled = ac.compile(lambda v: v * 2, backend="eager")
    compiled(z)
    assert "v.shape[0] <= 4" in compiled.entries[0].guards


def test_mark_unbacked_has_no_hint_and_no_01_specialization():
    def branches(x):
        return x + 1 if x.shape[0] > 2 else x
    z = np.ones(5)
    ac.mark_unbacked(z, 0)
    with pytest.raises(ac.exc.DataDependentError, match="specialized"):
        ac.compile(branches, backend="eager")(z)
    one = np.ones(1)
    ac.mark_unbacked(one, 0)
    compiled = ac.compile(lambda v: v * 2, backend="eager")
    compiled(one)
    assert "v.shape[0] >= 0" in compiled.entries[0].guards
    compiled(np.ones(7))
    assert len(compiled.entries) == 1


def test_mark_static_wins_over_automatic_dynamic():
    counter = CompileCounter()
    fn = ac.compile(lambda v: v + 1, backend=counter)
    for n in (3, 4, 5):
        x = np.ones(n)
        ac.mark_static(x)
        fn(x)
    assert counter.frame_count == 3


def test_markers_live_in_a_side_table_that_forgets_dead_arrays():
    x = np.ones(4)
    ac.mark_dynamic(x, [0])
    assert MARKERS.get(x)[0].kind == "dynamic"
    before = len(MARKERS)
    del x
    gc.collect()
    assert len(MARKERS) <= before - 1


def test_marking_inside_compiled_code_is_forbidden():
    def fn(x):
        ac.mark_dynamic(x, 0)
        return x
    with pytest.raises(AssertionError, match="Attempt to trace forbidden callable"):
        ac.compile(fn, backend="eager")(np.ones(2))


def test_zero_one_specialization_is_explained_on_recompile():
    fn = ac.compile(lambda v: v + 1, backend="eager")
    one = np.ones(1)
    ac.maybe_mark_dynamic(one, 0)
    fn(one)
    reasons = fn.entries[0].guard.failures((np.ones(5),), {})
    assert "specialized" in reasons[0] and "mark_unbacked" in reasons[0]


def test_int_arguments_become_dynamic_after_they_change():
    counter = CompileCounter()

    def fn(x, n):
        return x * n
    compiled = ac.compile(fn, backend=counter)
    for n in (2, 3, 4, 5):
        np.testing.assert_array_equal(compiled(np.ones(2), n), np.ones(2) * n)
    assert counter.frame_count == 2
    with ac.config.patch(specialize_int=True):
        counter2 = CompileCounter()
        compiled2 = ac.compile(fn, backend=counter2)
        for n in (2, 3, 4):
            compiled2(np.ones(2), n)
        assert counter2.frame_count == 3


@pytest.mark.parametrize("pattern, name, expected", [
    ("L['x']", "L['x']", True),
    ("L['x.*']", "L['xs']", True),
    ("L['x.*']", "L['y']", False),
    ("G['y']", "G['y']", True),
    ("L['self']._modules['fc']._parameters['weight']",
     "L['self']._modules['fc']._parameters['weight']", True),
])
def test_source_patterns(pattern, name, expected):
    assert source_matches(pattern, name) is expected


def test_dynamic_sources_config():
    counter = CompileCounter()
    fn = ac.compile(lambda x, y: x + y.sum(), backend=counter)
    with ac.config.patch(dynamic_sources="L['x']"):
        for n in (3, 4, 5):
            fn(np.ones(n), np.ones(2))
    assert counter.frame_count == 1


def test_dynamic_sources_environment_variable(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import numpy as np, astcompiler as ac\n"
        "from astcompiler.testing import CompileCounter\n"
        "c = CompileCounter()\n"
        "f = ac.compile(lambda a: a * 2, backend=c)\n"
        "for n in (3, 4, 5): f(np.ones(n))\n"
        "print(c.frame_count)\n")
    env = {**os.environ, "ASTCOMPILER_DYNAMIC_SOURCES": "L['a']"}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "1", out.stderr


def test_profile_guided_dynamism_across_processes(tmp_path):
    script = tmp_path / "pgo_model.py"
    script.write_text(
        "import numpy as np, astcompiler as ac\n"
        "from astcompiler.testing import CompileCounter\n"
        "def f(x):\n"
        "    return x * 2\n"
        "c = CompileCounter()\n"
        "g = ac.compile(f, backend=c)\n"
        "import sys\n"
        "for n in map(int, sys.argv[1:]): g(np.ones(n))\n"
        "print(c.frame_count)\n")
    env = {**os.environ, "ASTCOMPILER_JOB_ID": "job42",
           "ASTCOMPILER_CACHE_DIR": str(tmp_path / "cache")}

    def run(*sizes):
        out = subprocess.run([sys.executable, str(script), *map(str, sizes)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return int(out.stdout.strip())

    assert run(3, 4, 5) == 2            # static first, then dynamic
    assert run(6, 7, 8) == 1            # the profile makes it dynamic from the first compile
    profiles = list((tmp_path / "cache" / "pgo" / "job42").iterdir())
    assert len(profiles) == 1
    assert "L['x']  # dims 0" in profiles[0].read_text()


def test_dynamic_graphs_get_fused_numba_kernels_serving_every_size():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    compiled = ac.compile(softmax, dynamic=True)  # numba
    rng = np.random.default_rng(0)
    for rows in (3, 8, 13, 100):
        x = rng.standard_normal((rows, 7)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), softmax(x), rtol=1e-5)
    assert len(compiled.entries) == 1
    wrapper = compiled.entries[0].output_code.split("def make_forward")[1]
    assert "kernel_" in wrapper and "REGISTRY" not in wrapper.split("# ----")[0]
