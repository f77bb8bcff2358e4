"""Guards cover everything the capture read (issue 9, group 2).

Every case runs the plain function and the compiled one over a sequence of calls (changing what
the capture read between calls) and compares results and recompile counts.
"""

from __future__ import annotations

import enum
import functools
import math
import types

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import nn
from astcompiler.testing import CompileCounter

from ..helpers import assert_same

FAST = ["eager", "aot_eager"]
ALL = ["eager", "aot_eager", "numba"]

settings = types.ModuleType("settings")
settings.SCALE = 2.0


class Cfg:
    scale = 3.0

    @classmethod
    def scaled(cls, x):
        return x * cls.scale

    @staticmethod
    def shifted(x):
        return x + 1.0


class Counter:
    n = 0


class Base:
    def f(self, x):
        return x + 1.0


class Sub(Base):
    def f(self, x):
        return super().f(x) * 2.0


class Mode(enum.Enum):
    ADD = 1
    MUL = 2


def same(compiled, plain, *args):
    assert_same(compiled(*args), plain(*args))


# ----- functions: identity, __code__, __defaults__, __kwdefaults__, closures ---------------------

fs = [lambda x, k=k: x * k for k in (1.0, 2.0, 3.0)]


def call_lambdas(x):
    return fs[0](x) + fs[1](x) + fs[2](x)


@pytest.mark.parametrize("backend", ALL)
def test_functions_sharing_code_use_their_own_defaults(backend):
    compiled = ac.compile(call_lambdas, backend=backend)
    x = np.arange(4.0)
    for _ in range(2):
        same(compiled, call_lambdas, x)
    assert len(compiled.entries) == 1


def scale_by(x, k=2.0):
    return x * k


def calls_scale_by(x):
    return scale_by(x)


@pytest.mark.parametrize("backend", FAST)
def test_reassigned_defaults_of_called_function_recompile(backend):
    compiled = ac.compile(calls_scale_by, backend=backend)
    x = np.ones(3)
    saved = scale_by.__defaults__
    try:
        same(compiled, calls_scale_by, x)
        scale_by.__defaults__ = (5.0,)
        same(compiled, calls_scale_by, x)
        assert len(compiled.entries) == 2
        assert "__defaults__" in compiled._last_failure[0]
        same(compiled, calls_scale_by, x)
        assert len(compiled.entries) == 2
    finally:
        scale_by.__defaults__ = saved


def kw_scale(x, *, k=2.0):
    return x * k


def calls_kw_scale(x):
    return kw_scale(x)


@pytest.mark.parametrize("backend", FAST)
def test_changed_kwdefaults_of_called_function_recompile(backend):
    compiled = ac.compile(calls_kw_scale, backend=backend)
    x = np.ones(3)
    try:
        same(compiled, calls_kw_scale, x)
        kw_scale.__kwdefaults__["k"] = 7.0  # in place
        same(compiled, calls_kw_scale, x)
        kw_scale.__kwdefaults__ = {"k": 9.0}  # rebound
        same(compiled, calls_kw_scale, x)
        assert len(compiled.entries) == 3
    finally:
        kw_scale.__kwdefaults__ = {"k": 2.0}


def own_defaults(x, k=2.0, *, j=1.0):
    return x * k + j


@pytest.mark.parametrize("backend", FAST)
def test_defaults_of_the_compiled_function_itself(backend):
    compiled = ac.compile(own_defaults, backend=backend)
    x = np.ones(3)
    try:
        same(compiled, own_defaults, x)
        own_defaults.__defaults__ = (5.0,)
        same(compiled, own_defaults, x)
        own_defaults.__kwdefaults__["j"] = 10.0
        same(compiled, own_defaults, x)
        own_defaults.__kwdefaults__ = {"j": -1.0}
        same(compiled, own_defaults, x)
        assert len(compiled.entries) == 4
        same(compiled, own_defaults, x)
        assert len(compiled.entries) == 4
    finally:
        own_defaults.__defaults__ = (2.0,)
        own_defaults.__kwdefaults__ = {"j": 1.0}


def helper_a(x):
    return x + 1.0


def helper_b(x):
    return x * 10.0


def calls_helper_a(x):
    return helper_a(x)


@pytest.mark.parametrize("backend", FAST)
def test_reassigned_code_of_called_function_recompiles(backend):
    compiled = ac.compile(calls_helper_a, backend=backend)
    x = np.ones(3)
    saved = helper_a.__code__
    try:
        same(compiled, calls_helper_a, x)
        helper_a.__code__ = helper_b.__code__
        same(compiled, calls_helper_a, x)
        assert len(compiled.entries) == 2
    finally:
        helper_a.__code__ = saved


def array_default(x, acc=np.zeros(3)):
    acc += x
    return acc.sum()


def calls_array_default(x):
    return array_default(x)


def test_array_default_is_an_input_not_a_constant():
    compiled = ac.compile(calls_array_default, backend="eager")
    x = np.ones(3)
    results = [float(compiled(x)) for _ in range(3)]
    assert results == [3.0, 6.0, 9.0]
    assert array_default.__defaults__[0].tolist() == [3.0, 3.0, 3.0]
    assert len(compiled.entries) == 1


def test_closures_with_one_code_read_their_own_cells():
    def make(k):
        def mul(x):
            return x * k
        return mul

    muls = [make(2.0), make(3.0)]

    def both(x):
        return muls[0](x) + muls[1](x)

    compiled = ac.compile(both, backend="eager")
    same(compiled, both, np.ones(3))


@pytest.mark.parametrize("backend", ALL)
def test_forward_hooks_with_default_arguments_record_each_name(backend):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 3)

        def forward(self, x):
            return self.c(self.b(self.a(x)))

    seen = []
    model = Net()
    for name in ("a", "b", "c"):
        getattr(model, name).register_forward_hook(lambda m, i, o, name=name: seen.append(name))
    compiled = ac.compile(model, backend=backend)
    x = np.ones((2, 3))
    out = compiled(x)
    assert seen == ["a", "b", "c"]
    seen.clear()
    np.testing.assert_allclose(out, model(x))
    assert seen == ["a", "b", "c"]


# ----- attributes of modules and classes ------------------------------------------------------

def reads_module_and_class(x):
    return x * settings.SCALE + Cfg.scale * math.pi


@pytest.mark.parametrize("backend", FAST)
def test_module_and_class_attributes_are_guarded(backend):
    compiled = ac.compile(reads_module_and_class, backend=backend)
    x = np.ones(3)
    try:
        same(compiled, reads_module_and_class, x)
        settings.SCALE = 5.0
        same(compiled, reads_module_and_class, x)
        Cfg.scale = 4.0
        same(compiled, reads_module_and_class, x)
        assert len(compiled.entries) == 3
        same(compiled, reads_module_and_class, x)
        assert len(compiled.entries) == 3
    finally:
        settings.SCALE, Cfg.scale = 2.0, 3.0
    guards = compiled.entries[0].guards
    assert "___G['settings'].SCALE == 2.0" in guards
    assert "___G['Cfg'].scale == 3.0" in guards
    assert "___G['math'].pi == 3.141592653589793" in guards


def class_methods(x, obj):
    r = Cfg.scaled(x) + Cfg.shifted(x) + obj.f(x)
    if isinstance(obj, Base) and issubclass(type(obj), Sub):
        r = r + 100.0
    return r


@pytest.mark.parametrize("backend", FAST)
def test_classmethods_staticmethods_isinstance_and_super(backend):
    compiled = ac.compile(class_methods, backend=backend)
    x = np.ones(2)
    try:
        same(compiled, class_methods, x, Sub())
        same(compiled, class_methods, x, Base())
        Cfg.scale = 10.0
        same(compiled, class_methods, x, Sub())
    finally:
        Cfg.scale = 3.0


def sum_through_numpy(x):
    return np.sum(x) + 1.0


def test_monkeypatched_numpy_function_is_noticed():
    compiled = ac.compile(sum_through_numpy, backend="eager")
    x = np.arange(3.0)
    original = np.sum
    same(compiled, sum_through_numpy, x)
    try:
        np.sum = lambda a: 42.0
        same(compiled, sum_through_numpy, x)
    finally:
        np.sum = original
    same(compiled, sum_through_numpy, x)
    assert len(compiled.entries) == 2
    assert "___numpy.sum is ___sum" in compiled.entries[0].guards  # read on the module checked


def test_numpy_function_patched_before_compiling():
    original = np.sum
    try:
        np.sum = lambda a: 42.0
        compiled = ac.compile(sum_through_numpy, backend="eager")
        same(compiled, sum_through_numpy, np.arange(3.0))
    finally:
        np.sum = original
    same(compiled, sum_through_numpy, np.arange(3.0))
    assert len(compiled.entries) == 2


def increments_counter(x):
    Counter.n += 1
    return x + Counter.n


def test_class_attribute_incremented_in_compiled_code():
    compiled = ac.compile(increments_counter, backend="eager")
    x = np.ones(2)
    Counter.n = 0
    got = [compiled(x).tolist() for _ in range(3)]
    compiled_n = Counter.n
    Counter.n = 0
    want = [increments_counter(x).tolist() for _ in range(3)]
    assert got == want and compiled_n == Counter.n == 3
    Counter.n = 0


# ----- floats, aliasing -----------------------------------------------------------------------

def signed(x, s):
    return x * s, np.copysign(1.0, s), 1.0 / s if s != 0 else math.copysign(1.0, s)


@pytest.mark.parametrize("backend", ALL)
def test_negative_zero_is_not_zero(backend):
    compiled = ac.compile(signed, backend=backend)
    x = np.ones(2)
    for s in (0.0, -0.0, 0.0, -0.0):
        got, want = compiled(x, s), signed(x, s)
        assert_same(got, want)
        assert np.signbit(got[0]).tolist() == np.signbit(want[0]).tolist()
        assert math.copysign(1.0, got[2]) == math.copysign(1.0, want[2])
    assert len(compiled.entries) == 2


def plus(x, s):
    return x + s


def test_nan_guard_holds_for_nan():
    compiled = ac.compile(plus, backend="eager", dynamic=False)
    for _ in range(3):
        same(compiled, plus, np.ones(2), math.nan)
    assert len(compiled.entries) == 1


def writes_out(x, out):
    out[:] = x + 1.0
    return out is x


@pytest.mark.parametrize("backend", ALL)
def test_identity_of_arguments_is_guarded(backend):
    compiled = ac.compile(writes_out, backend=backend)
    a, b = np.ones(3), np.zeros(3)
    assert compiled(a, b) is False and b.tolist() == [2.0] * 3
    z, z2 = np.ones(3), np.ones(3)
    assert compiled(z, z) is writes_out(z2, z2) is True
    assert z.tolist() == z2.tolist()
    assert compiled(np.ones(3), np.zeros(3)) is False
    assert len(compiled.entries) == 2


def item_is(lst, b):
    b += 1.0
    return lst[0] is b, lst[0].sum()


def b_then_list(b, lst):
    return item_is(lst, b)


@pytest.mark.parametrize("fn", [item_is, b_then_list])
def test_identity_between_a_list_item_and_an_argument(fn):
    compiled = ac.compile(fn, backend="eager")
    for shared in (True, False, True):
        b, b2 = np.ones(3), np.ones(3)
        lst, lst2 = ([b], [b2]) if shared else ([np.ones(3)], [np.ones(3)])
        args, args2 = ((lst, b), (lst2, b2)) if fn is item_is else ((b, lst), (b2, lst2))
        assert_same(compiled(*args), fn(*args2))
    assert len(compiled.entries) == 2


def shift_into(a, b):
    a[1:] = b[:-1] + 1.0
    return a


@pytest.mark.parametrize("backend", ALL)
def test_written_input_overlapping_another_input(backend):
    compiled = ac.compile(shift_into, backend=backend)
    same(compiled, shift_into, np.zeros(6), np.zeros(6))
    for make in (lambda z: (z, z), lambda z: (z[:], z), lambda z: (z[::-1], z)):
        got, want = make(np.arange(6.0)), make(np.arange(6.0))
        assert_same(compiled(*got), shift_into(*want))
        assert_same(got[1], want[1])


# ----- dict keys of any hashable type ---------------------------------------------------------

SCALES = {np.float32: 2.0, np.float64: 3.0}
BY_MODE = {Mode.ADD: 1.0, Mode.MUL: 4.0}
BY_FUNCTION = {helper_a: 5.0, helper_b: 6.0}
KEY = object()
BY_OBJECT = {KEY: 7.0, (1, "a"): 8.0, 2.5: 9.0}


def typed_lookup(x, mode):
    return (x * SCALES[x.dtype.type] + BY_MODE[mode] + BY_FUNCTION[helper_a]
            + BY_OBJECT[KEY] + BY_OBJECT[(1, "a")] + BY_OBJECT[2.5])


@pytest.mark.parametrize("backend", FAST)
def test_dict_lookups_with_non_literal_keys(backend):
    compiled = ac.compile(typed_lookup, backend=backend)
    for dtype in (np.float32, np.float64, np.float32):
        for mode in (Mode.ADD, Mode.MUL):
            same(compiled, typed_lookup, np.ones(2, dtype), mode)
    try:
        SCALES[np.float32] = 20.0
        same(compiled, typed_lookup, np.ones(2, np.float32), Mode.ADD)
    finally:
        SCALES[np.float32] = 2.0
    guards = compiled.entries[0].guards
    assert "___G['SCALES'][___key_np_float32]" in guards
    assert "___key_np_float32 = ___ns['___key_np_float32']  # <class numpy.float32>" in guards


# ----- readable guards ------------------------------------------------------------------------

def readable(x, y):
    return np.sum(x) * settings.SCALE + scale_by(y)


def test_guard_constants_read_by_value():
    compiled = ac.compile(readable, backend="eager")
    compiled(np.ones(3), np.ones(2, np.float32))
    guards = compiled.entries[0].guards
    assert "x.dtype == ___float64" in guards and "y.dtype == ___float32" in guards
    assert "___float64 = ___ns['___float64']  # dtype('float64')" in guards
    assert "___numpy = ___ns['___numpy']  # <module 'numpy'>" in guards
    assert "___G['scale_by'] is ___scale_by" in guards
    # (read on the function the line before checked: one lookup less)
    assert "___scale_by.__code__ is ___scale_by_code" in guards
    assert "___scale_by_defaults = ___ns['___scale_by_defaults']  # (2.0,)" in guards
    assert " at 0x" not in guards  # nothing that differs between processes


def test_recompile_reason_names_what_changed():
    counter = CompileCounter()
    compiled = ac.compile(calls_scale_by, backend=counter)
    saved = scale_by.__defaults__
    try:
        compiled(np.ones(3))
        scale_by.__defaults__ = (4.0,)
        compiled(np.ones(3))
    finally:
        scale_by.__defaults__ = saved
    assert counter.frame_count == 2
    assert compiled._last_failure == [
        "0/0: G['scale_by'].__defaults__ is not the object it was at compile time: "
        "expected (2.0,), actual (4.0,)"]


# ----- callable objects -----------------------------------------------------------------------

@ac.compile(backend="eager")
def compiled_inner(x, k=2.0):
    return x * k


def calls_compiled(x):
    return compiled_inner(x) + 1.0


def weighted(x, k):
    return x * k


partial_weighted = functools.partial(weighted, k=3.0)


def calls_partial(x):
    return partial_weighted(x)


@pytest.mark.parametrize("fn", [calls_compiled, calls_partial])
def test_compiled_functions_and_partials_are_inlined(fn):
    compiled = ac.compile(fn, backend="eager", fullgraph=True)
    same(compiled, fn, np.ones(2))
    global partial_weighted
    saved = partial_weighted
    try:
        partial_weighted = functools.partial(weighted, k=5.0)
        same(compiled, fn, np.ones(2))
    finally:
        partial_weighted = saved


def append_then_read(lst, b):
    b.append(1)
    return len(lst[0]), lst[0] is b


@pytest.mark.parametrize("shared", [True, False])
def test_one_list_reached_as_an_item_and_as_an_argument(shared):
    compiled = ac.compile(append_then_read, backend="eager")
    for _ in range(2):
        b, b2 = [0], [0]
        args, args2 = (([b], b), ([b2], b2)) if shared else (([[0]], b), ([[0]], b2))
        assert compiled(*args) == append_then_read(*args2)
        assert args[0] == args2[0] and args[1] == args2[1]
    assert len(compiled.entries) == 1


class Holder:
    pass


def reads_optional(x, obj):
    total = x + getattr(obj, "other", 0.5)
    if hasattr(obj, "extra"):
        total = total + obj.extra
    if hasattr(settings, "EXTRA"):
        total = total + settings.EXTRA
    if hasattr(Cfg, "extra"):
        total = total + Cfg.extra
    return total


@pytest.mark.parametrize("backend", FAST)
def test_missing_attributes_are_guarded(backend):
    compiled = ac.compile(reads_optional, backend=backend)
    obj = Holder()
    x = np.ones(2)
    try:
        same(compiled, reads_optional, x, obj)
        obj.extra = 10.0
        same(compiled, reads_optional, x, obj)
        settings.EXTRA = 100.0
        same(compiled, reads_optional, x, obj)
        Cfg.extra = 1000.0
        same(compiled, reads_optional, x, obj)
        obj.other = 0.25
        same(compiled, reads_optional, x, obj)
        assert len(compiled.entries) == 5
    finally:
        del settings.EXTRA, Cfg.extra


def test_closure_cell_bound_after_compiling():
    def make():
        def f(x):
            return later(x)

        compiled = ac.compile(f, backend="eager")
        with pytest.raises(NameError, match="'later'"):
            compiled(np.ones(2))

        def later(x):
            return x + 1.0
        return compiled, f

    compiled, plain = make()
    same(compiled, plain, np.ones(2))
    assert len(compiled.entries) == 2 and not compiled.entries[-1].is_eager
