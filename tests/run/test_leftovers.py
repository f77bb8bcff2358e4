"""Leftovers of issue 9: each test runs the plain call and the compiled call and compares.

- ``nonstrict_trace`` outputs keep the traced (symbolic) sizes: a dynamic entry serves every size.
- Generators and coroutines run as Python: never converted into loop regions, never a hang; a
  static loop that runs past ``config.static_loop_limit`` at capture becomes a graph break.
- Zero-argument ``super()`` works in every piece of a method split at a graph break.
- A split never tears apart a variable shared with a nested function (its cell).
- PGO profiles and the generated files of later captures use the fallback cache directory when
  the configured one is unusable.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.config import usable_cache_dir


def _assert_same(plain, compiled):
    if isinstance(plain, np.ndarray):
        assert isinstance(compiled, np.ndarray)
        assert compiled.shape == plain.shape and compiled.dtype == plain.dtype
        np.testing.assert_array_equal(compiled, plain)
    elif isinstance(plain, (tuple, list)):
        assert type(compiled) is type(plain) and len(compiled) == len(plain)
        for p, c in zip(plain, compiled):
            _assert_same(p, c)
    else:
        assert type(compiled) is type(plain) and compiled == plain


def _break_reasons(fn, *args):
    return [r.reason for r in ac.explain(fn)(*args).break_reasons]


# ----- nonstrict_trace ---------------------------------------------------------------------------
@ac.nonstrict_trace
def _plus_one(v):
    return v + 1


@ac.nonstrict_trace
def _pair(v):
    return v * 2, v[1:]


def _calls_plus_one(x):
    return _plus_one(x) * 2


def _calls_pair(x):
    a, b = _pair(x)
    return a.sum() + b


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("fn", [_calls_plus_one, _calls_pair])
def test_nonstrict_trace_output_follows_the_size_of_a_dynamic_input(backend, fn):
    compiled = ac.compile(fn, backend=backend)
    for n in (2, 3, 4, 5, 7, 2):
        x = np.arange(1.0, n + 1)
        _assert_same(fn(x), compiled(x))
    assert len(compiled.entries) == 2  # static, then one dynamic entry for every other size


@ac.nonstrict_trace
def _sum_and_double(v):
    return v.sum(), v * 2


def _uses_sum_and_double(x):
    total, doubled = _sum_and_double(x)
    return total + doubled


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "numba"])
def test_nonstrict_trace_returning_a_numpy_scalar_serves_every_call(backend):
    compiled = ac.compile(_uses_sum_and_double, backend=backend)
    for n in (3, 3, 4, 4):
        x = np.arange(float(n))
        _assert_same(_uses_sum_and_double(x), compiled(x))


_counted: list = []


@ac.nonstrict_trace
def _returns_call_count(v):
    _counted.append(1)
    return v + 1, len(_counted)


def _uses_call_count(x):
    y, n = _returns_call_count(x)
    return y, n


def test_nonstrict_trace_python_output_that_changes_is_an_error_not_a_stale_value():
    _counted.clear()
    compiled = ac.compile(_uses_call_count, backend="eager")
    x = np.arange(3.0)
    _assert_same((x + 1, 1), compiled(x))  # the capture's run is the first call
    with pytest.raises(AssertionError, match="returned 2 where its traced run returned 1"):
        compiled(x)


# ----- generators --------------------------------------------------------------------------------
def _send_running_total(x):
    def running():
        total = 0
        while True:
            v = yield total
            total += v
    g = running()
    next(g)
    return [g.send(float(v)) for v in x]


def _squares(n):
    for i in range(n):
        yield i * i


def _uses_squares(x):
    return list(_squares(x.shape[0])), x * 2


def _yield_in_loop_test(n):
    i = 0
    while (yield i) is None and i < n:
        i += 1


def _uses_yield_in_loop_test(x):
    return list(_yield_in_loop_test(x.shape[0])), x + 1


@pytest.mark.parametrize("fn", [_send_running_total, _uses_squares, _uses_yield_in_loop_test])
def test_generators_in_compiled_code_give_the_plain_results(fn):
    compiled = ac.compile(fn, backend="eager")
    for n in (2, 3, 4):
        x = np.arange(1.0, n + 1)
        _assert_same(fn(x), compiled(x))


def test_generator_loops_are_never_converted_into_loop_regions():
    from astcompiler.rewrite import rewrite_function
    source = rewrite_function(_send_running_total, usable_cache_dir()).source
    generator = source[source.index("def running"):source.index("g = ")]
    assert "while True:" in generator and "v = yield total" in generator
    assert "while_stmt" not in generator
    assert generator.count("__ac.unsupported('a generator") == 2  # on entry, before the yield


def test_calling_a_user_generator_function_is_a_graph_break():
    reasons = _break_reasons(_uses_squares, np.ones(3))
    assert reasons == ["calling generator or coroutine function _squares: it runs in Python"]


def test_generator_defined_in_compiled_code_breaks_when_driven():
    reasons = _break_reasons(_send_running_total, np.ones(3))
    assert reasons[0].startswith("a generator (`yield`) or `await` is not supported")


def _countdown(n):
    while n > 0:
        n = yield n
        n = n - 1 if n is not None else 0


async def _async_double(x):
    return x * 2


def test_compiled_generator_function_runs_as_python():
    compiled = ac.compile(_countdown, backend="eager")
    plain_gen, compiled_gen = _countdown(3), compiled(3)
    assert type(compiled_gen) is type(plain_gen)
    assert [next(plain_gen), plain_gen.send(3), plain_gen.send(2)] == \
        [next(compiled_gen), compiled_gen.send(3), compiled_gen.send(2)]
    assert compiled.entries == []


def test_compiled_async_function_returns_the_plain_coroutine_result():
    import asyncio
    compiled = ac.compile(_async_double, backend="eager")
    x = np.arange(3.0)
    _assert_same(asyncio.run(_async_double(x)), asyncio.run(compiled(x)))


def _static_spin(x):
    i = 0
    while True:
        i += 1
        if i >= 5000:
            break
    return x + i


def test_static_while_loop_past_the_limit_becomes_a_graph_break():
    with ac.config.patch(static_loop_limit=1000):
        reasons = _break_reasons(_static_spin, np.ones(2))
        compiled = ac.compile(_static_spin, backend="eager")
        x = np.arange(3.0)
        _assert_same(_static_spin(x), compiled(x))
    assert reasons == ["while loop still running after config.static_loop_limit (1000) "
                       "iterations at capture: it runs in Python"]


def test_static_while_loop_under_the_limit_is_captured():
    with ac.config.patch(static_loop_limit=10_000):
        assert _break_reasons(_static_spin, np.ones(2)) == []


def _static_for(x):
    total = 0
    for v in [1, 2, 3] * 1000:
        total += v
    return x * total


def test_static_for_loop_past_the_limit_becomes_a_graph_break():
    with ac.config.patch(static_loop_limit=500):
        reasons = _break_reasons(_static_for, np.ones(2))
        compiled = ac.compile(_static_for, backend="eager")
        x = np.arange(3.0)
        _assert_same(_static_for(x), compiled(x))
    assert reasons == ["for loop still running after config.static_loop_limit (500) "
                       "iterations at capture: it runs in Python"]


# ----- super() in split pieces -------------------------------------------------------------------
class _Base:
    def f(self, x):
        return x + 1

    def show(self, x):
        print("show", x.shape)
        return x - 1


class _Child(_Base):
    def f(self, x):
        y = super().f(x)
        z = super().show(y)  # the break is in this statement
        print("after")
        return super().f(z) * 2 + y

    @classmethod
    def make(cls, x):
        print("make")
        return type(super().__new__(cls)), x * 2


def _calls_method(obj, x):
    return obj.f(x) + 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_zero_argument_super_in_every_piece_of_a_split_method(backend, capsys):
    child = _Child()
    method = ac.compile(child.f, backend=backend)
    caller = ac.compile(_calls_method, backend=backend)
    klass = ac.compile(_Child.make, backend=backend)
    for n in (2, 3):
        x = np.arange(float(n))
        _assert_same(child.f(x), method(x))
        _assert_same(_calls_method(child, x), caller(child, x))
        _assert_same(_Child.make(x), klass(x))
    out = capsys.readouterr().out
    assert out.count("show") == 8 and out.count("after") == 8 and out.count("make") == 4


class _ComprehensionSuper(_Base):
    def f(self, x):
        print("break")
        return [super().f(v) for v in (x, x)]


def test_super_in_a_comprehension_of_a_split_method_fails_as_in_python():
    obj = _ComprehensionSuper()
    compiled = ac.compile(obj.f, backend="eager")
    with pytest.raises(TypeError) as plain:
        obj.f(np.ones(2))
    with pytest.raises(TypeError) as got:
        compiled(np.ones(2))
    assert str(got.value) == str(plain.value)


# ----- closures across a split -------------------------------------------------------------------
def _closure_rebound_in_loop(x, n):
    total = 0

    def add(v):
        return v + total
    out = []
    for i in range(n):
        total = total + i
        out.append(add(i))
    return out, x


def _closure_writes_nonlocal(x):
    count = 0

    def bump():
        nonlocal count
        count += 1
    bump()
    print("break")
    bump()
    return x * count


def _closure_bound_after_break(x):
    def scale():
        return factor
    print("break")
    factor = 3.0
    return x * scale()


def _closure_read_only(x):
    k = 2.0

    def scale(v):
        return v * k
    print("break")
    return scale(x) + k


def _comprehension_reads_rebound(x):
    k = 2.0
    first = [v * k for v in x.tolist()]
    print("break")
    k = 3.0
    return first, [v * k for v in x.tolist()]


def _generator_expression_sees_rebound(x):
    k = 2.0
    lazy = (v * k for v in x.tolist())
    print("break")
    k = 3.0
    return list(lazy)


@pytest.mark.parametrize("fn,args", [
    (_comprehension_reads_rebound, [(np.ones(2),), (np.arange(3.0),)]),
    (_generator_expression_sees_rebound, [(np.ones(2),), (np.arange(3.0),)]),
    (_closure_rebound_in_loop, [(np.ones(2), 2), (np.ones(3), 3), (np.ones(3), 4)]),
    (_closure_writes_nonlocal, [(np.ones(2),), (np.ones(3),)]),
    (_closure_bound_after_break, [(np.ones(2),), (np.ones(3),)]),
    (_closure_read_only, [(np.ones(2),), (np.ones(3),)]),
])
def test_variables_shared_with_closures_survive_graph_breaks(fn, args):
    compiled = ac.compile(fn, backend="eager")
    for call in args:
        _assert_same(fn(*call), compiled(*call))


@pytest.mark.parametrize("fn", [_closure_read_only, _comprehension_reads_rebound])
def test_split_keeps_closures_that_cannot_see_a_rebinding(fn):
    compiled = ac.compile(fn, backend="eager")
    compiled(np.ones(2))
    assert compiled.entries[0].pieces  # split: prefix and resume compiled


def test_split_that_would_tear_a_shared_variable_runs_eagerly():
    compiled = ac.compile(_closure_writes_nonlocal, backend="eager")
    compiled(np.ones(2))
    assert compiled.entries[0].is_eager and not compiled.entries[0].pieces


# ----- cache directory fallback ------------------------------------------------------------------
def _doubled(x):
    return x * 2


@pytest.fixture
def unusable_cache_dir(tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    bad = str(blocker / "cache")
    monkeypatch.setattr(ac.config, "cache_dir", bad)
    ac.reset()
    yield bad
    ac.reset()


def test_pgo_with_an_unusable_cache_dir_warns_and_keeps_its_profile(unusable_cache_dir):
    with ac.config.patch(pgo=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = ac.compile(_doubled, backend="eager")
        for n in (2, 3, 4):
            _assert_same(_doubled(np.ones(n)), first(np.ones(n)))
        assert len(first.entries) == 2
        second = ac.compile(_doubled, backend="eager")  # reads the profile back: dynamic at once
        for n in (5, 6):
            _assert_same(_doubled(np.ones(n)), second(np.ones(n)))
        assert len(second.entries) == 1
    cache_warnings = [w for w in caught if "cannot use the cache directory" in str(w.message)]
    assert len(cache_warnings) == 1
    assert not os.path.exists(unusable_cache_dir)


def test_captures_after_a_fallback_write_into_the_private_directory(unusable_cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        first = ac.compile(_doubled, backend="eager")
        first(np.ones(2))
    private = usable_cache_dir()
    assert private != unusable_cache_dir
    again = ac.compile(lambda x: x + 1, backend="eager")
    _assert_same(np.ones(3) + 1, again(np.ones(3)))
    files = again.entries[0].files
    assert files and all(f.startswith(private) for f in files)
