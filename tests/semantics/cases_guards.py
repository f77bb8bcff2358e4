"""Group 2: guards cover everything the capture read.

Functions called or inlined (identity, ``__code__``, ``__defaults__``, ``__kwdefaults__``,
closure cells), attributes of modules and classes, globals, specialized floats (``-0.0``,
``0.0``, NaN), aliasing between arguments, and dict lookups with keys of any hashable type.
Most cases change that state between calls with ``step(change, ...)``.
"""

from __future__ import annotations

import enum
import math
import sys
import types

import numpy as np

from .harness import CaseRegistry, Program, call, step
from .values import mat, vec

CASES = CaseRegistry("guards")

# Module globals the cases read; every factory that uses one resets it first.
SCALE = 2
ALPHA = 0.5
DEBUG = False
MODE = "add"
WEIGHTS: list = []
W = np.ones(3)
OFFSETS = (1, 2)
TABLE: dict = {}
settings = types.ModuleType("sem_settings")
helper = None


def _reset(**values):
    globals().update(values)


def _fresh_settings(**attrs):
    module = types.ModuleType("sem_settings")
    module.__dict__.update(attrs)
    sys.modules["sem_settings"] = module
    globals()["settings"] = module
    return module


def _set(name, value):
    return lambda: globals().__setitem__(name, value)


# ----- functions called from compiled code: defaults, kwdefaults, closures -------------------------
@CASES.case("lambda_defaults_in_list")
def _lambda_defaults_list():
    fs = [lambda x, k=k: x * k for k in (1, 2, 3)]  # issue example: all used k=1

    def f(x):
        return [g(x) for g in fs]
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)])


GLOBAL_FNS: list = []
GLOBAL_HOOKS: list = []
SEEN: list = []


@CASES.case("lambda_defaults_in_global_list")
def _lambda_defaults_global():
    _reset(GLOBAL_FNS=[lambda x, k=k: x * k for k in (1, 2, 3)])

    def f(x):
        return [g(x) for g in GLOBAL_FNS]
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)])


def _global_hooks_forward(x):
    out = x * 2
    for hook in GLOBAL_HOOKS:
        hook(None, x, out)
    return out


@CASES.case("hooks_name_defaults_global")
def _hooks_global():
    _reset(SEEN=[])
    _reset(GLOBAL_HOOKS=[lambda m, i, o, name=name: SEEN.append(name) for name in ("a", "b", "c")])
    return Program(_global_hooks_forward, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: SEEN)


@CASES.case("lambda_defaults_loop_sum")
def _lambda_defaults_loop():
    fs = [lambda x, k=k: x + k for k in (10, 20, 30)]

    def f(x):
        total = x * 0
        for g in fs:
            total = total + g(x)
        return total
    return Program(f, [(vec(2),), (vec(3),), (vec(2, np.int64),)])


@CASES.case("lambda_defaults_indexed")
def _lambda_defaults_indexed():
    fs = [lambda x, k=k: x * k for k in (1, 2, 3)]

    def f(x, i):
        return fs[i](x)
    return Program(f, [(vec(2), 0), (vec(2), 1), (vec(2), 2), (vec(3), 1)])


@CASES.case("closures_in_list")
def _closures_list():
    def make(k):
        return lambda x: x * k
    fs = [make(k) for k in (1, 2, 3)]

    def f(x):
        return fs[0](x) + fs[1](x) * 10 + fs[2](x) * 100
    return Program(f, [(vec(2),), (vec(3),), (vec(4),)])


@CASES.case("hooks_name_defaults")
def _hooks():
    seen = []
    hooks = [lambda m, i, o, name=name: seen.append(name) for name in ("a", "b", "c")]

    def forward(x):
        out = x * 2
        for hook in hooks:
            hook(None, x, out)
        return out
    return Program(forward, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: seen)


@CASES.case("hooks_name_defaults_result")
def _hooks_result():
    hooks = [lambda m, i, o, name=name: (name, o.sum()) for name in ("a", "b")]

    def forward(x):
        out = x + 1
        return [hook(None, x, out) for hook in hooks]
    return Program(forward, [(vec(2),), (vec(3),), (vec(4),)])


@CASES.case("changed_defaults")
def _changed_defaults():
    def g(x, k=2):
        return x * k

    def f(x):
        return g(x)

    def change():
        g.__defaults__ = (5,)
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("changed_kwdefaults")
def _changed_kwdefaults():
    def g(x, *, k=2):
        return x + k

    def f(x):
        return g(x)

    def change():
        g.__kwdefaults__ = {"k": 7}
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("changed_closure_cell")
def _changed_cell():
    k = 2

    def g(x):
        return x * k

    def f(x):
        return g(x)

    def change():
        nonlocal k
        k = 9
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("changed_closure_cell_direct")
def _changed_cell_direct():
    k = 2

    def f(x):
        return x * k

    def change():
        nonlocal k
        k = 4
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("changed_closure_cell_type")
def _changed_cell_type():
    k = 2

    def f(x):
        return x * k, type(k)

    def change():
        nonlocal k
        k = 2.5
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("changed_code")
def _changed_code():
    def g(x):
        return x + 1

    def other(x):
        return x - 1

    def f(x):
        return g(x) * 2

    def change():
        g.__code__ = other.__code__
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("rebound_global_function")
def _rebound_helper():
    _reset(helper=lambda v: v + 1)

    def f(x):
        return helper(x) * 2
    return Program(f, [(vec(2),), (vec(3),), step(_set("helper", lambda v: v * 10), vec(3)),
                       (vec(4),)])


@CASES.case("function_argument_changes")
def _function_arg():
    def f(x, g):
        return g(x)
    return Program(f, [(vec(2), np.sin), (vec(3), np.cos), (vec(3), np.sin), (vec(4), abs)])


@CASES.case("lambda_argument_changes")
def _lambda_arg():
    def f(x, g):
        return g(x) + 1
    return Program(f, [(vec(2), lambda v: v * 2), (vec(3), lambda v: v * 3),
                       (vec(4), lambda v: v - 5)])


@CASES.case("default_referencing_global")
def _default_global():
    def g(x, s=3):
        return x * s

    def f(x, s):
        return g(x, s), g(x)
    return Program(f, [(vec(2), 1), (vec(3), 2), (vec(4), 5)])


# ----- module and class attributes ---------------------------------------------------------------
@CASES.case("module_attr_changed")
def _module_attr():
    module = _fresh_settings(SCALE=2)

    def f(x):
        return x * settings.SCALE
    return Program(f, [(vec(2),), (vec(3),), step(lambda: setattr(module, "SCALE", 3), vec(3)),
                       (vec(4),)])


@CASES.case("module_attr_float_changed")
def _module_attr_float():
    module = _fresh_settings(EPS=1e-3)

    def f(x):
        return x + settings.EPS
    return Program(f, [(vec(2),), (vec(3),), step(lambda: setattr(module, "EPS", 0.5), vec(3)),
                       (vec(4),)])


@CASES.case("module_attr_bool_branch")
def _module_attr_bool():
    module = _fresh_settings(FAST=True)

    def f(x):
        if settings.FAST:
            return x * 2
        return x - 2
    return Program(f, [(vec(2),), (vec(3),), step(lambda: setattr(module, "FAST", False), vec(3)),
                       (vec(4),)])


@CASES.case("module_attr_deleted")
def _module_attr_deleted():
    module = _fresh_settings(SCALE=2)

    def f(x):
        return x * settings.SCALE
    return Program(f, [(vec(2),), (vec(3),), step(lambda: delattr(module, "SCALE"), vec(3)),
                       (vec(4),)])


@CASES.case("module_replaced")
def _module_replaced():
    _fresh_settings(SCALE=2)

    def f(x):
        return x * settings.SCALE
    return Program(f, [(vec(2),), (vec(3),), step(lambda: _fresh_settings(SCALE=7), vec(3)),
                       (vec(4),)])


@CASES.case("getattr_module_name")
def _getattr_module():
    _fresh_settings(A=1, B=10)

    def f(x, name):
        return x * getattr(settings, name)
    return Program(f, [(vec(2), "A"), (vec(3), "B"), (vec(3), "A"), (vec(4), "B")])


@CASES.case("class_attr_changed")
def _class_attr():
    class Cfg:
        scale = 2

    def f(x):
        return x * Cfg.scale

    def change():
        Cfg.scale = 5
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("class_attr_via_instance")
def _class_attr_instance():
    class Cfg:
        scale = 2
    cfg = Cfg()

    def f(x):
        return x * cfg.scale

    def change():
        Cfg.scale = 3

    def shadow():
        cfg.scale = 10
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), step(shadow, vec(4)),
                       (vec(5),)])


@CASES.case("class_attr_added")
def _class_attr_added():
    class Cfg:
        pass

    def f(x):
        if hasattr(Cfg, "extra"):
            return x + Cfg.extra
        return x

    def add():
        Cfg.extra = 100
    return Program(f, [(vec(2),), (vec(3),), step(add, vec(3)), (vec(4),)])


@CASES.case("instance_attr_changed")
def _instance_attr():
    class Layer:
        def __init__(self):
            self.weight = 2.0
    layer = Layer()

    def f(x, m):
        return x * m.weight
    return Program(f, [(vec(2), layer), (vec(3), layer),
                       step(lambda: setattr(layer, "weight", -1.0), vec(3), layer), (vec(4), layer)])


@CASES.case("instance_array_attr_mutated")
def _instance_array_attr():
    class Layer:
        def __init__(self):
            self.weight = np.ones(3)
    layer = Layer()

    def f(x, m):
        return x * m.weight

    def change():
        layer.weight[1] = 5.0
    return Program(f, [(vec(3), layer), (vec(3, start=2), layer), step(change, vec(3), layer),
                       (vec(3), layer)])


@CASES.case("math_pi_patched")
def _math_pi():
    saved = math.pi

    def f(x):
        return x * math.pi

    def patch():
        math.pi = 3.0

    def restore():
        math.pi = saved
    return Program(f, [(vec(2),), (vec(3),), step(patch, vec(3)), step(restore, vec(4))],
                   cleanup=restore)


@CASES.case("np_sum_monkeypatched")
def _np_sum():
    saved = np.sum

    def f(x):
        return np.sum(x) + 1

    def patch():
        np.sum = lambda a, *args, **kwargs: saved(a) * 100

    def restore():
        np.sum = saved
    return Program(f, [(vec(2),), (vec(3),), step(patch, vec(3)), step(restore, vec(4))],
                   cleanup=restore)


@CASES.case("math_sqrt_patched")
def _math_sqrt():
    saved = math.sqrt

    def f(x, n):
        return x * math.sqrt(n)

    def patch():
        math.sqrt = lambda v: -1.0

    def restore():
        math.sqrt = saved
    return Program(f, [(vec(2), 4), (vec(3), 9), step(patch, vec(3), 9), step(restore, vec(4), 16)],
                   cleanup=restore)


# ----- module globals --------------------------------------------------------------------------------
@CASES.case("global_int_rebound")
def _global_int():
    _reset(SCALE=2)

    def f(x):
        return x * SCALE
    return Program(f, [(vec(2),), (vec(3),), step(_set("SCALE", 3), vec(3)), (vec(4),)])


@CASES.case("global_float_rebound")
def _global_float():
    _reset(ALPHA=0.5)

    def f(x):
        return x * ALPHA
    return Program(f, [(vec(2),), (vec(3),), step(_set("ALPHA", 0.25), vec(3)),
                       step(_set("ALPHA", -0.0), vec(4))])


@CASES.case("global_flag_branch")
def _global_flag():
    _reset(DEBUG=False)

    def f(x):
        if DEBUG:
            print("debug", x.sum())
        return x + 1
    return Program(f, [(vec(2),), (vec(3),), step(_set("DEBUG", True), vec(3)), (vec(4),)])


@CASES.case("global_string_mode")
def _global_mode():
    _reset(MODE="add")

    def f(x):
        return x + 2 if MODE == "add" else x * 2
    return Program(f, [(vec(2),), (vec(3),), step(_set("MODE", "mul"), vec(3)), (vec(4),)])


@CASES.case("global_list_mutated")
def _global_list():
    _reset(WEIGHTS=[1.0, 2.0])

    def f(x):
        total = x * 0
        for w in WEIGHTS:
            total = total + x * w
        return total
    return Program(f, [(vec(2),), (vec(3),), step(lambda: WEIGHTS.append(3.0), vec(3)),
                       step(lambda: WEIGHTS.__setitem__(0, -1.0), vec(4))])


@CASES.case("global_array_mutated")
def _global_array():
    _reset(W=np.ones(3))

    def f(x):
        return x * W
    return Program(f, [(vec(3),), (vec(3, start=2),), step(lambda: W.__setitem__(0, 7.0), vec(3)),
                       (vec(3),)])


@CASES.case("global_array_rebound")
def _global_array_rebound():
    _reset(W=np.ones(3))

    def f(x):
        return x * W
    return Program(f, [(vec(3),), (vec(3, start=2),), step(_set("W", np.full(3, 2.0)), vec(3)),
                       step(_set("W", np.ones(1, np.float32)), vec(3))])


@CASES.case("global_tuple_rebound")
def _global_tuple():
    _reset(OFFSETS=(1, 2))

    def f(x):
        return x[OFFSETS[0]:OFFSETS[1]]
    return Program(f, [(vec(4),), (vec(5),), step(_set("OFFSETS", (0, 3)), vec(5)), (vec(6),)])


@CASES.case("global_dict_value_changed")
def _global_dict():
    _reset(TABLE={"a": 1.0, "b": 2.0})

    def f(x, key):
        return x * TABLE[key]
    return Program(f, [(vec(2), "a"), (vec(3), "b"), step(lambda: TABLE.update(a=10.0), vec(3), "a"),
                       (vec(4), "c")])


@CASES.case("builtin_shadowed_by_global")
def _builtin_shadow():
    def f(x):
        return x * len(x)
    shadowed = types.FunctionType(f.__code__, dict(f.__globals__), f.__name__, f.__defaults__,
                                  f.__closure__)

    def shadow():
        shadowed.__globals__["len"] = lambda v: 100
    return Program(shadowed, [(vec(2),), (vec(3),), step(shadow, vec(3)), (vec(4),)])


@CASES.case("private_globals_function")
def _private_globals():
    def f(x):
        return x * SCALE
    own = types.FunctionType(f.__code__, dict(f.__globals__, SCALE=4), f.__name__, f.__defaults__,
                             f.__closure__)

    def change():
        own.__globals__["SCALE"] = -3
    return Program(own, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


# ----- specialized floats: -0.0, 0.0, NaN ---------------------------------------------------------
FLOATS = (1.5, 2.5, 0.0, -0.0, float("nan"), float("inf"), -2.0)


def float_calls(n=3):
    return lambda: [(vec(n), v) for v in FLOATS]


def times_float(x, s):
    return x * s


CASES.pure("float_signed_zero_times", times_float, float_calls())


def copysign_float(x, s):
    return math.copysign(1.0, s), x[0] * 0 + s


CASES.pure("float_copysign", copysign_float, float_calls())


def divide_by_float(x, s):
    return x / s


CASES.pure("float_divide_array", divide_by_float, float_calls())


def python_divide_float(x, s):
    return x + 1, 1.0 / s


CASES.pure("float_python_division", python_divide_float, float_calls())


def nan_tests(x, s):
    return s != s, s == s, math.isnan(s), math.isinf(s), x + (0.0 if s != s else s)


CASES.pure("float_nan_tests", nan_tests, float_calls())


def float_branch(x, s):
    if s > 0:
        return x + s
    if s < 0:
        return x - s
    return x * 0


CASES.pure("float_branch_sign", float_branch, float_calls())


def float_str(x, s):
    return str(s), repr(s), f"{s:+.1f}", x * 2


CASES.pure("float_str", float_str, float_calls())


def float_atan2(x, s):
    return math.atan2(s, -1.0), np.arctan2(s, -1.0)


CASES.pure("float_atan2_zero_sign", float_atan2, float_calls())


def float_min_max(x, s):
    return min(s, 0.0), max(s, 0.0), x.min() * 0 + max(s, -1.0)


CASES.pure("float_min_max_nan", float_min_max, float_calls())


def np_float_arg(x, s):
    return x * s, type(s * 2)


CASES.pure("np_float32_scalar_arg", np_float_arg,
           lambda: [(vec(3, np.float32), np.float32(v)) for v in (1.5, 2.5, -0.0, 0.0)])


CASES.pure("np_float64_scalar_arg", np_float_arg,
           lambda: [(vec(3, np.float32), np.float64(v)) for v in (1.5, 2.5, -0.0, 0.0)])


def int_then_float(x, s):
    return x * s, s * 2, type(s)


CASES.pure("int_then_float_arg", int_then_float,
           lambda: [(vec(3, np.int32), v) for v in (2, 3, 2.0, True, 4)])


def float_round_trip(x, s):
    return int(s * 1e6), x.astype(np.float32) * s


CASES.pure("float_precision", float_round_trip,
           lambda: [(vec(2), v) for v in (0.1, 0.2, 1 / 3, 1e-300, 1e300)])


# ----- aliasing -------------------------------------------------------------------------------------
def alias_test(x, out):
    if out is x:
        return x * 2
    out[:] = x + 1
    return out


@CASES.case("alias_out_is_x")
def _alias():
    a, b, c = vec(3), vec(3), vec(3, start=5)
    return Program(alias_test, [(a, b), (a, c), (a, a), (b, b), (c, a)])


def inplace_add_out(x, y):
    np.add(x, y, out=x)
    return x


@CASES.case("alias_inplace_out")
def _alias_out():
    a, b = vec(3), vec(3, start=4)
    return Program(inplace_add_out, [(a, b), (b, a), (a, a), (b, a)])


def shift_inplace(x, y):
    x[1:] = y[:-1]
    return x


@CASES.case("alias_overlapping_copy")
def _alias_shift():
    a, b = vec(4), vec(4, start=10)
    return Program(shift_inplace, [(a, b), (b, a), (a, a), (b, b)])


def swap_add(x, y):
    x += y
    y *= 2
    return x, y


@CASES.case("alias_two_inplace")
def _alias_two():
    a, b = vec(3), vec(3, start=3)
    return Program(swap_add, [(a, b), (b, a), (a, a)])


def return_arg_or_copy(x, copy):
    return x.copy() if copy else x


@CASES.case("alias_return_arg_array")
def _return_arg():
    a = vec(3)
    return Program(return_arg_or_copy, [(a, False), (vec(4), True), (a, False), (vec(5), False)])


def alias_view(x, y):
    x[0] = 100.0
    return y.sum()


@CASES.case("alias_view_argument")
def _alias_view():
    a = vec(4)
    b = vec(4)
    return Program(alias_view, [(a, b), (b, b[1:]), (a, a[:2]), (a, a)])


# ----- dict lookups with keys of any hashable type ------------------------------------------------
class Mode(enum.Enum):
    ADD = 1
    MUL = 2


DTYPE_SCALE = {np.float32: 2.0, np.float64: 3.0}
ENUM_TABLE = {Mode.ADD: 1.0, Mode.MUL: 10.0}
TYPE_TABLE = {int: "int", float: "float", np.float32: "f32"}
FUNC_TABLE = {np.sin: 1.0, np.cos: 2.0}
TUPLE_TABLE = {(1, "a"): 5.0, (2, "b"): 7.0}


def dtype_key_lookup(x):
    return x * DTYPE_SCALE[x.dtype.type]  # issue example: a SyntaxError in the guard today


CASES.pure("dict_np_type_keys", dtype_key_lookup,
           lambda: [(vec(2, np.float32),), (vec(3, np.float64),), (vec(3, np.float32),),
                    (vec(4, np.int64),)])


def dtype_key_get(x):
    return x * DTYPE_SCALE.get(x.dtype.type, 1.0), x.dtype.type in DTYPE_SCALE


CASES.pure("dict_np_type_get", dtype_key_get,
           lambda: [(vec(2, np.float32),), (vec(3, np.int32),), (vec(3, np.float64),)])


def enum_key_lookup(x, mode):
    return x * ENUM_TABLE[mode]


CASES.pure("dict_enum_keys", enum_key_lookup,
           lambda: [(vec(2), Mode.ADD), (vec(3), Mode.MUL), (vec(3), Mode.ADD), (vec(4), Mode.MUL)])


def type_key_lookup(v):
    return TYPE_TABLE[type(v)]


CASES.pure("dict_type_keys", type_key_lookup,
           lambda: [(1,), (2.0,), (np.float32(1),), (3,), ("s",)])


def func_key_lookup(x, fn):
    return fn(x) * FUNC_TABLE[fn]


CASES.pure("dict_function_keys", func_key_lookup,
           lambda: [(vec(2), np.sin), (vec(3), np.cos), (vec(3), np.sin), (vec(4), np.tan)])


def tuple_key_lookup(x, k):
    return x * TUPLE_TABLE[k]


CASES.pure("dict_tuple_keys", tuple_key_lookup,
           lambda: [(vec(2), (1, "a")), (vec(3), (2, "b")), (vec(3), (1, "a")), (vec(4), (3, "c"))])


@CASES.case("dict_object_keys")
def _object_keys():
    class Key:
        def __repr__(self):
            return "Key()"
    k1, k2 = Key(), Key()
    table = {k1: 2.0, k2: 3.0}

    def f(x, k):
        return x * table[k]
    return Program(f, [(vec(2), k1), (vec(3), k2), (vec(3), k1), (vec(4), Key())])


@CASES.case("dict_dtype_object_keys")
def _dtype_keys():
    table = {np.dtype("float32"): "single", np.dtype("float64"): "double"}

    def f(x):
        return table[x.dtype], x + 1
    return Program(f, [(vec(2, np.float32),), (vec(3),), (vec(3, np.float32),), (vec(2, np.int8),)])


# ----- dtypes and other specialized values --------------------------------------------------------
def dtype_comparisons(x):
    return x.dtype == np.float32, x.dtype.type is np.float64, x.dtype.kind, x.dtype.name


CASES.pure("dtype_comparisons", dtype_comparisons,
           lambda: [(vec(2, np.float32),), (vec(3),), (vec(3, np.int16),), (vec(2, np.bool_),)])


def finfo_eps(x):
    return x + np.finfo(x.dtype).eps, np.finfo(x.dtype).bits


CASES.pure("finfo_of_dtype", finfo_eps,
           lambda: [(vec(2, np.float32),), (vec(3),), (vec(3, np.float32),), (vec(3, np.float16),)])


def iinfo_max(x):
    return np.iinfo(x.dtype).max, x.max() < np.iinfo(x.dtype).max


CASES.pure("iinfo_of_dtype", iinfo_max,
           lambda: [(vec(2, np.int8),), (vec(3, np.int64),), (vec(3, np.uint16),), (vec(2, np.int32),)])


def astype_arg(x, dt):
    return x.astype(dt) / 3


CASES.pure("dtype_argument", astype_arg,
           lambda: [(vec(2), np.float32), (vec(3), np.float64), (vec(3), np.int32), (vec(4), "float16")])


def optional_bias(x, bias=None):
    if bias is None:
        return x * 2
    return x * 2 + bias


CASES.pure("none_then_array", optional_bias,
           lambda: [(vec(2), None), (vec(3), None), (vec(3), vec(3)), (vec(4), None), (vec(4), 1.5)])


@CASES.case("dict_arg_value_changed")
def _dict_arg():
    cfg = {"scale": 2, "shift": 1}

    def f(x, c):
        return x * c["scale"] + c["shift"]
    return Program(f, [(vec(2), cfg), (vec(3), cfg), step(lambda: cfg.update(scale=5), vec(3), cfg),
                       step(lambda: cfg.pop("shift"), vec(4), cfg)])


@CASES.case("list_arg_value_changed")
def _list_arg():
    coeffs = [1.0, 2.0]

    def f(x, cs):
        out = x * 0
        for i, c in enumerate(cs):
            out = out + c * x ** i
        return out
    return Program(f, [(vec(2), coeffs), (vec(3), coeffs), step(lambda: coeffs.append(3.0), vec(3), coeffs),
                       step(lambda: coeffs.__setitem__(0, -4.0), vec(4), coeffs)])


@CASES.case("tuple_arg_lengths")
def _tuple_arg():
    def f(x, ks):
        return [x * k for k in ks]
    return Program(f, [(vec(2), (1, 2)), (vec(3), (1, 2, 3)), (vec(3), ()), (vec(4), (5,))])


@CASES.case("kwargs_keys_change")
def _kwargs_change():
    def f(x, **kw):
        return x * kw.get("a", 1) + kw.get("b", 0), sorted(kw)
    return Program(f, [call(vec(2), a=2), call(vec(3), a=2, b=1), call(vec(3), b=5), call(vec(4))])


@CASES.case("string_argument_branch")
def _string_arg():
    def f(x, how):
        if how == "sum":
            return x.sum()
        if how == "max":
            return x.max()
        return x
    return Program(f, [(vec(2), "sum"), (vec(3), "max"), (vec(3), "sum"), (vec(4), "none")])


@CASES.case("bool_argument_branch")
def _bool_arg():
    def f(x, flag):
        return x + 1 if flag else x - 1
    return Program(f, [(vec(2), True), (vec(3), False), (vec(3), True), (vec(4), 0), (vec(4), [])])


@CASES.case("isinstance_of_global_class")
def _isinstance_global():
    class A:
        pass

    class B:
        pass

    def f(x, obj):
        return x * (1 if isinstance(obj, A) else 2)
    return Program(f, [(vec(2), A()), (vec(3), B()), (vec(3), A()), (vec(4), 3)])


# ----- more state the capture reads: classes, methods, helpers' globals ---------------------------
HELPER_SCALE = 2


def _scaled_by_helper_global(v):
    return v * HELPER_SCALE


@CASES.case("inlined_helper_reads_global")
def _helper_global():
    _reset(HELPER_SCALE=2)

    def f(x):
        return _scaled_by_helper_global(x) + 1
    return Program(f, [(vec(2),), (vec(3),), step(_set("HELPER_SCALE", 5), vec(3)), (vec(4),)])


@CASES.case("global_changes_type")
def _global_type():
    _reset(SCALE=2)

    def f(x):
        return x * SCALE
    return Program(f, [(vec(2),), (vec(3),), step(_set("SCALE", 2.5), vec(3)),
                       step(_set("SCALE", "2"), vec(4)), step(_set("SCALE", [1]), vec(4))])


@CASES.case("global_deleted")
def _global_deleted():
    _reset(SCALE=2)

    def f(x):
        return x * SCALE

    def delete():
        del globals()["SCALE"]

    def restore():
        globals()["SCALE"] = 7
    return Program(f, [(vec(2),), (vec(3),), step(delete, vec(3)), step(restore, vec(4))],
                   cleanup=restore)


@CASES.case("class_method_replaced")
def _method_replaced():
    class Op:
        def apply(self, v):
            return v + 1
    op = Op()

    def f(x, o):
        return o.apply(x) * 2

    def replace():
        Op.apply = lambda self, v: v - 100
    return Program(f, [(vec(2), op), (vec(3), op), step(replace, vec(3), op), (vec(4), op)])


@CASES.case("instance_attr_shadows_method")
def _attr_shadows_method():
    class Op:
        def apply(self, v):
            return v + 1
    op = Op()

    def f(x, o):
        return o.apply(x)

    def shadow():
        op.apply = lambda v: v * 100
    return Program(f, [(vec(2), op), (vec(3), op), step(shadow, vec(3), op), (vec(4), op)])


@CASES.case("instance_class_reassigned")
def _class_reassigned():
    class A:
        def value(self):
            return 1

    class B:
        def value(self):
            return 2
    obj = A()

    def f(x, o):
        return x * o.value(), type(o).__name__

    def swap():
        obj.__class__ = B
    return Program(f, [(vec(2), obj), (vec(3), obj), step(swap, vec(3), obj), (vec(4), obj)])


@CASES.case("property_replaced_on_class")
def _property_replaced():
    class Cfg:
        @property
        def scale(self):
            return 2
    cfg = Cfg()

    def f(x, c):
        return x * c.scale

    def replace():
        Cfg.scale = property(lambda self: 10)
    return Program(f, [(vec(2), cfg), (vec(3), cfg), step(replace, vec(3), cfg), (vec(4), cfg)])


@CASES.case("type_attr_via_self_method")
def _type_attr_method():
    class Layer:
        factor = 2

        def run(self, v):
            return v * type(self).factor
    layer = Layer()

    def f(x):
        return layer.run(x)

    def change():
        Layer.factor = -1
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("helper_closure_cell_changed")
def _helper_cell():
    k = 3

    def helper(v):
        return v + k

    def f(x):
        return helper(x) * helper(x)

    def change():
        nonlocal k
        k = -1
    return Program(f, [(vec(2),), (vec(3),), step(change, vec(3)), (vec(4),)])


@CASES.case("closure_list_contents_changed")
def _closure_list_change():
    weights = [1.0, 2.0]

    def f(x):
        return sum(x * w for w in weights)
    return Program(f, [(vec(2),), (vec(3),), step(lambda: weights.append(3.0), vec(3)),
                       step(lambda: weights.clear(), vec(4))])


@CASES.case("closure_array_mutated")
def _closure_array_change():
    w = np.ones(3)

    def f(x):
        return x * w

    def change():
        w[:] = 4.0
    return Program(f, [(vec(3),), (vec(3, start=4),), step(change, vec(3)), (vec(3),)])


@CASES.case("dtype_table_value_changed")
def _dtype_table_change():
    table = {np.float32: 2.0, np.float64: 3.0}

    def f(x):
        return x * table[x.dtype.type]

    def change():
        table[np.float64] = -1.0
    return Program(f, [(vec(2),), (vec(3, np.float32),), step(change, vec(3)), (vec(4, np.float32),)])


@CASES.case("function_dict_dispatch")
def _function_dict():
    def make(k):
        return lambda v: v * k
    ops = {"a": make(1), "b": make(2)}

    def f(x, key):
        return ops[key](x)

    def change():
        ops["a"] = make(10)
    return Program(f, [(vec(2), "a"), (vec(3), "b"), (vec(3), "a"), step(change, vec(4), "a")])


@CASES.case("positional_vs_keyword_same_value")
def _pos_kw():
    def f(x, k=1, *, s=0):
        return x * k + s
    return Program(f, [(vec(2), 2), call(vec(3), k=2), call(vec(3), 2, s=1), call(vec(4), s=1, k=3)])


@CASES.case("float_arg_special_values_sequence")
def _float_sequence():
    def f(x, s):
        return x / s if s else x * s, str(s)
    return Program(f, [(vec(2), 1.5), (vec(3), 2.5), (vec(3), -0.0), (vec(3), 0.0), (vec(3), float("nan")),
                       (vec(3), float("-inf")), (vec(3), 1e-320)])
