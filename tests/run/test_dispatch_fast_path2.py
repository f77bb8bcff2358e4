"""The generated dispatch (``run/dispatch.py``) and the static wrapper (issue 11, lever 4):
behaviour only. A compiled call must reject, recompile, raise and warn exactly as before: Python's
own argument errors, defaults changed after the compile, stances, config changes, errstate,
two threads with different shapes."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.exc import RecompileError
from astcompiler.testing import CompileCounter


def two(x, y):
    return x * y + 1.0


def defaults(a, /, b=2.0, *, k, m=3.0):
    return a * b + k - m


def spread(x, *rest, scale=1.0, **named):
    return x * scale + sum(rest) + sum(named.values())


def outcome(fn, *args, **kwargs):
    """(result, None) or (None, (exception class, message))."""
    try:
        return fn(*args, **kwargs), None
    except Exception as error:  # noqa: BLE001
        return None, (type(error), str(error))


def same_outcome(compiled, plain, *args, **kwargs):
    got, got_error = outcome(compiled, *args, **kwargs)
    want, want_error = outcome(plain, *args, **kwargs)
    assert got_error == want_error
    if want_error is None:
        np.testing.assert_array_equal(got, want)
        assert type(got) is type(want)


def test_argument_errors_are_pythons_own():
    compiled = ac.compile(two, backend="eager")
    x = np.ones(4)
    same_outcome(compiled, two, x, x)  # one entry: the generated dispatch serves
    assert len(compiled.entries) == 1
    for args, kwargs in [((x,), {}), ((x, x, x), {}), ((x,), {"z": 1}), ((x, x), {"y": x}),
                         ((), {}), ((x,), {"y": x, "x": x})]:
        same_outcome(compiled, two, *args, **kwargs)
    same_outcome(compiled, two, x, y=x)
    same_outcome(compiled, two, y=x, x=x)
    assert len(compiled.entries) == 1


def test_left_out_and_changed_defaults():
    compiled = ac.compile(defaults, backend="eager")
    for args, kwargs in [((1.0,), {"k": 1.0}), ((1.0, 4.0), {"k": 1.0}),
                         ((1.0,), {"b": 5.0, "k": 1.0}), ((1.0,), {"k": 1.0, "m": 0.5}),
                         ((), {"a": 1.0, "k": 1.0}), ((1.0,), {}), ((1.0, 2.0, 3.0), {"k": 1})]:
        same_outcome(compiled, defaults, *args, **kwargs)
    try:
        defaults.__defaults__ = (10.0,)
        defaults.__kwdefaults__ = {"m": -1.0}
        same_outcome(compiled, defaults, 1.0, k=1.0)
        same_outcome(compiled, defaults, 1.0, 4.0, k=1.0, m=3.0)
        defaults.__kwdefaults__ = None
        same_outcome(compiled, defaults, 1.0, k=1.0)  # m is required now: Python's TypeError
    finally:
        defaults.__defaults__ = (2.0,)
        defaults.__kwdefaults__ = {"m": 3.0}
    same_outcome(compiled, defaults, 1.0, k=1.0)


def test_varargs_and_keywords_pass_through():
    compiled = ac.compile(spread, backend="eager")
    x = np.arange(3.0)
    for args, kwargs in [((x,), {}), ((x, 1.0, 2.0), {}), ((x, 1.0), {"scale": 2.0, "u": 3.0}),
                         ((x,), {"u": 1.0, "v": 2.0}), ((), {"x": x})]:
        same_outcome(compiled, spread, *args, **kwargs)


def test_guards_reject_what_differs():
    counter = CompileCounter()
    compiled = ac.compile(two, backend=counter, dynamic=False)
    x = np.ones(4)
    same_outcome(compiled, two, x, x + 1)
    same_outcome(compiled, two, x, x + 2)  # same guard facts: a hit
    assert counter.frame_count == 1
    same_outcome(compiled, two, x.astype(np.float32), x)  # dtype
    same_outcome(compiled, two, np.ones(5), np.ones(5))  # shape
    same_outcome(compiled, two, np.ones((4, 1)), x)  # rank
    assert counter.frame_count == 4
    # a float64 dtype object that is not NumPy's singleton still equals it: a hit
    other = np.dtype("float64", metadata={"tag": 1})
    assert other is not np.dtype("float64") and other == np.dtype("float64")
    same_outcome(compiled, two, x.astype(other), x)
    assert counter.frame_count == 4
    same_outcome(compiled, two, [1.0, 2.0], 2.0)  # a list: a new entry or eager, same answer


def test_stances_and_threads_see_their_own_stance():
    counter = CompileCounter()
    compiled = ac.compile(two, backend=counter, dynamic=False)
    x = np.ones(3)
    same_outcome(compiled, two, x, x)
    with ac.set_stance("force_eager"):
        same_outcome(compiled, two, np.ones(6), np.ones(6))
    assert counter.frame_count == 1 and len(compiled.entries) == 1
    with ac.set_stance("fail_on_recompile"):
        same_outcome(compiled, two, x, x)  # a hit is fine
        with pytest.raises(RuntimeError, match="Detected recompile"):
            compiled(np.ones(7), np.ones(7))
    with ac.set_stance("eager_on_recompile"):
        same_outcome(compiled, two, np.ones(8), np.ones(8))
    assert counter.frame_count == 1
    entered, release = threading.Event(), threading.Event()

    def other_thread():
        with ac.set_stance("force_eager"):
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other_thread)
    thread.start()
    entered.wait(10)
    try:
        same_outcome(compiled, two, np.ones(9), np.ones(9))  # this thread: the default stance
    finally:
        release.set()
        thread.join()
    assert counter.frame_count == 2


def test_config_changes_after_the_compile_are_seen():
    compiled = ac.compile(two, backend="eager", dynamic=False)
    x = np.ones(3)
    same_outcome(compiled, two, x, x)
    with ac.config.patch(error_on_recompile=True):
        same_outcome(compiled, two, x, x)
        with pytest.raises(RecompileError):
            compiled(np.ones(4), np.ones(4))
    with ac.config.patch(recompile_limit=1):
        with pytest.warns(RuntimeWarning, match="recompile_limit"):
            same_outcome(compiled, two, np.ones(5), np.ones(5))
    assert len(compiled.entries) == 1
    same_outcome(compiled, two, np.ones(5), np.ones(5))
    assert len(compiled.entries) == 2


def test_threads_that_miss_together_compile_each_shape_once():
    counter = CompileCounter()
    compiled = ac.compile(two, backend=counter, dynamic=False)
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def work(n):
        x, y = np.linspace(0.0, 1.0, n), np.full(n, 2.0)
        try:
            start.wait(10)
            for _ in range(50):
                np.testing.assert_array_equal(compiled(x, y), two(x, y))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in (3, 4, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert counter.frame_count == 2 and len(compiled.entries) == 2


def test_bound_as_a_method():
    class Holder:
        scale = 3.0

        def apply(self, x):
            return x * self.scale

    Holder.compiled = ac.compile(Holder.apply, backend="eager")
    holder, x = Holder(), np.arange(4.0)
    for _ in range(2):
        np.testing.assert_array_equal(holder.compiled(x), holder.apply(x))
    same_outcome(holder.compiled, holder.apply)  # missing x: Python's message


# -- module calls: parameters read from the module tree's last check ------------------------


def _model():
    nn = ac.nn
    return nn.Sequential(nn.Linear(3, 3, rng=0), nn.ReLU(), nn.Linear(3, 2, rng=1))


def test_module_parameters_replaced_or_reshaped_are_seen():
    model = _model()
    compiled = ac.compile(model, backend="aot_eager")
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    for _ in range(2):
        np.testing.assert_array_equal(compiled(x), model(x))
    layer = model[0]
    layer.weight = ac.nn.Parameter(np.full((3, 3), 0.25))  # through the module API
    np.testing.assert_array_equal(compiled(x), model(x))
    layer.bias[...] = 2.0  # in place: the same object, new values
    np.testing.assert_array_equal(compiled(x), model(x))
    layer.weight.shape = (9,)  # in place: not through the module API, still checked
    with pytest.raises(Exception) as plain:
        model(x)
    with pytest.raises(type(plain.value)) as got:
        compiled(x)
    assert str(got.value) == str(plain.value)
    layer.weight.shape = (3, 3)
    np.testing.assert_array_equal(compiled(x), model(x))
    other = _model()  # another root of the same structure
    np.testing.assert_array_equal(ac.compile(other, backend="aot_eager")(x), other(x))
    np.testing.assert_array_equal(compiled(x), model(x))


def test_module_tree_keeps_no_parameter_alive():
    import gc
    import weakref

    model = _model()
    compiled = ac.compile(model, backend="aot_eager")
    x = np.ones((1, 3))
    compiled(x), compiled(x)
    gone = weakref.ref(model[0].weight)
    del model, compiled
    gc.collect()
    assert gone() is None


# -- the numba wrapper: static shapes, FP flags, threads (few compiles, shared) -------------

numba = pytest.importorskip("numba")


def scaled(x, y):
    return x * y * 1e300


SCALED = ac.compile(scaled, backend="numba", dynamic=False)
TWO = ac.compile(two, backend="numba", dynamic=False)


def test_static_wrapper_returns_fresh_arrays():
    x, y = np.arange(8.0), np.full(8, 0.5)
    first, second = TWO(x, y), TWO(x, y)
    np.testing.assert_array_equal(first, two(x, y))
    assert first is not second and not np.shares_memory(first, x)
    assert first.dtype == np.float64 and first.shape == (8,) and first.flags.c_contiguous
    first[:] = -1.0
    np.testing.assert_array_equal(TWO(x, y), two(x, y))  # a fresh output per call
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(TWO(x32, x32), two(x32, x32))
    assert TWO(x32, x32).dtype == two(x32, x32).dtype


@pytest.mark.parametrize("mode", ["raise", "warn", "ignore"])
def test_errstate_is_read_on_each_call(mode):
    x = np.full(8, 1e10)
    y = np.full(8, 1e10)
    SCALED(np.ones(8), np.ones(8))  # compiled and run without flags first
    with np.errstate(over=mode):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            result = outcome(SCALED, x, y)
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            expected = outcome(scaled, x, y)
    assert result[1] == expected[1]
    if expected[1] is None:
        np.testing.assert_array_equal(result[0], expected[0])
    assert [(w.category, str(w.message)) for w in got] == \
        [(w.category, str(w.message)) for w in want]
    assert len(SCALED.entries) == 1


def test_two_threads_with_different_shapes():
    shapes = {0: 6, 1: 10}
    TWO(np.ones(6), np.ones(6)), TWO(np.ones(10), np.ones(10))
    count = len(TWO.entries)
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(index):
        n = shapes[index]
        x, y = np.linspace(0.0, 1.0, n), np.full(n, index + 1.0)
        try:
            start.wait(10)
            for _ in range(300):
                got = TWO(x, y)
                assert got.shape == (n,)
                np.testing.assert_array_equal(got, two(x, y))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in shapes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(TWO.entries) == count  # both hits: nothing recompiled
