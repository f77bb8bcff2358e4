"""set_stance: function, context manager and decorator; every stance; recompile errors."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter


def double(x):
    return x * 2


def compiled_with_counter(**kwargs):
    counter = CompileCounter()
    return ac.compile(double, backend=counter, **kwargs), counter


def test_force_eager_runs_the_original_function():
    fn, counter = compiled_with_counter()
    with ac.set_stance("force_eager"):
        np.testing.assert_array_equal(fn(np.ones(2)), np.full(2, 2.0))
    assert counter.frame_count == 0
    fn(np.ones(2))
    assert counter.frame_count == 1


def test_function_form_stays_until_changed_back():
    fn, counter = compiled_with_counter()
    ac.set_stance("force_eager")
    try:
        fn(np.ones(2))
        assert counter.frame_count == 0
    finally:
        ac.set_stance("default")
    fn(np.ones(2))
    assert counter.frame_count == 1


def test_decorator_changes_nothing_outside_the_call():
    fn, counter = compiled_with_counter()

    @ac.set_stance("force_eager")
    def run(x):
        return fn(x)

    run(np.ones(2))
    assert counter.frame_count == 0
    fn(np.ones(2))
    assert counter.frame_count == 1


def test_eager_on_recompile_uses_entries_and_never_compiles():
    fn, counter = compiled_with_counter(dynamic=False)
    fn(np.ones(2))
    with ac.set_stance("eager_on_recompile"):
        fn(np.ones(2))
        np.testing.assert_array_equal(fn(np.ones(3)), np.full(3, 2.0))
    assert counter.frame_count == 1


def test_fail_on_recompile_lists_guard_failures():
    fn, counter = compiled_with_counter(dynamic=False)
    fn(np.ones(2))
    with ac.set_stance("fail_on_recompile"):
        fn(np.ones(2))
        with pytest.raises(RuntimeError, match="size mismatch at index 0. expected 2, actual 3") as info:
            fn(np.ones(3))
    assert "double" in str(info.value)


def test_eager_then_compile_marks_what_changed_dynamic():
    fn, counter = compiled_with_counter()
    with ac.set_stance("eager_then_compile"):
        fn(np.ones(4))
        assert counter.frame_count == 0
        for n in (5, 6, 7):
            fn(np.ones(n))
    assert counter.frame_count == 1
    assert "x.shape[0] >= 2" in fn.entries[0].guards


def test_aot_eager_then_compile():
    fn, counter = compiled_with_counter()
    with ac.set_stance("aot_eager_then_compile"):
        np.testing.assert_array_equal(fn(np.ones(4)), np.full(4, 2.0))
        fn(np.ones(5))
        fn(np.ones(9))
    assert counter.frame_count == 1


def test_skip_guard_eval_unsafe():
    fn, counter = compiled_with_counter(dynamic=False)
    fn(np.ones(2))
    fn(np.ones(2, np.float32))
    with ac.set_stance(skip_guard_eval_unsafe=True):
        assert fn(np.ones(2, np.float32)).dtype == np.float32
        assert fn(np.ones(2)).dtype == np.float64
        with pytest.raises(RuntimeError, match="skip_guard_eval_unsafe"):
            fn(np.ones(2, np.int32))
    assert counter.frame_count == 2


def test_force_backend():
    fn = ac.compile(double)  # numba by default
    counter = CompileCounter()
    with ac.set_stance(force_backend=counter):
        fn(np.ones(2))
    assert counter.frame_count == 1


@pytest.mark.parametrize("call, match", [
    (lambda: ac.set_stance("sideways"), "invalid astcompiler stance"),
    (lambda: ac.set_stance("force_eager", force_backend="eager"), "force_backend"),
])
def test_bad_stances(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_set_stance_inside_compiled_code_is_forbidden():
    def fn(x):
        ac.set_stance("force_eager")
        return x
    with pytest.raises(AssertionError, match="Attempt to trace forbidden callable"):
        ac.compile(fn, backend="eager")(np.ones(1))


def test_error_on_recompile_and_fail_on_limit():
    fn, _ = compiled_with_counter(dynamic=False)
    fn(np.ones(2))
    with ac.config.patch(error_on_recompile=True):
        with pytest.raises(ac.exc.RecompileError, match="size mismatch"):
            fn(np.ones(3))
    with ac.config.patch(recompile_limit=1, fail_on_recompile_limit_hit=True):
        with pytest.raises(ac.exc.FailOnRecompileLimitHit, match="recompile_limit"):
            fn(np.ones(4))
