"""Group 5: user objects, classes, methods.

Enums (``==``, ``in``, ``str``, ``hash``), dataclasses and plain classes constructed inside
compiled code, bound methods given to ``ac.compile``, a graph break inside an inlined helper,
``del``, ``locals()``, ``eval``, walrus targets in comprehensions and tuple returns after a break.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import types
import typing

import numpy as np

import astcompiler as ac

from .harness import CaseRegistry, Program, call, step
from .values import mat, vec

CASES = CaseRegistry("objects")


class Mode(enum.Enum):
    ADD = "add"
    MUL = "mul"
    SUB = "sub"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


class Color(enum.Enum):
    RED = 1
    GREEN = 2

    def __str__(self):
        return f"color-{self.name.lower()}"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0

    def norm2(self):
        return self.x * self.x + self.y * self.y


@dataclasses.dataclass(frozen=True)
class Key:
    name: str
    size: int


@dataclasses.dataclass
class Bag:
    items: list = dataclasses.field(default_factory=list)
    total: float = 0.0


class Pair(typing.NamedTuple):
    first: float
    second: float


Row = collections.namedtuple("Row", ["a", "b"])


class Vec2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec2(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Vec2(self.x * k, self.y * k)

    def __eq__(self, other):
        return isinstance(other, Vec2) and self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))

    def __repr__(self):
        return f"Vec2({self.x}, {self.y})"


class Seq:
    def __init__(self, values):
        self.values = list(values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]

    def __iter__(self):
        return iter(self.values)

    def __contains__(self, v):
        return v in self.values

    def __bool__(self):
        return bool(self.values)

    def __call__(self, k):
        return [v * k for v in self.values]


class Base:
    scale = 2

    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k

    @classmethod
    def make(cls, k):
        return cls(k)

    @staticmethod
    def shift(x):
        return x + 1


class Child(Base):
    def apply(self, x):
        return super().apply(x) + self.scale


class Model:
    def __init__(self, w, b=0.0):
        self.w = w
        self.b = b
        self.calls = 0

    def forward(self, x):
        return x * self.w + self.b

    def counted(self, x):
        self.calls += 1
        return x * self.calls

    def chain(self, x):
        self.b = float(x.sum())
        return self


def modes():
    return lambda: [(vec(2), Mode.ADD), (vec(3), Mode.MUL), (vec(3), Mode.ADD), (vec(4), Mode.SUB)]


# ----- enums -------------------------------------------------------------------------------------
def enum_eq(x, mode):
    if mode == Mode.ADD:  # issue example: False inside compiled code
        return x + 1
    return x * 2


CASES.pure("enum_eq", enum_eq, modes())


def enum_is(x, mode):
    return x + 1 if mode is Mode.MUL else x - 1


CASES.pure("enum_is", enum_is, modes())


def enum_in(x, mode):
    return x * 3 if mode in (Mode.ADD, Mode.SUB) else x


CASES.pure("enum_in_tuple", enum_in, modes())


def enum_in_set(x, mode):
    return mode in {Mode.MUL}, x.sum()


CASES.pure("enum_in_set", enum_in_set, modes())


def enum_str(x, mode):
    return str(mode), repr(mode), f"{mode}", mode.name, mode.value


CASES.pure("enum_str_name_value", enum_str, modes())


def enum_hash(x, mode):
    return hash(mode) == hash(Mode.ADD), {Mode.ADD: 1, Mode.MUL: 2}.get(mode, 0)


CASES.pure("enum_hash_dict", enum_hash, modes())


def enum_custom_str(x, c):
    return str(c) + "!", x


CASES.pure("enum_custom_str", enum_custom_str,
           lambda: [(vec(2), Color.RED), (vec(3), Color.GREEN), (vec(3), Color.RED)])


def enum_lookup(x, name):
    return Mode(name), Mode[name.upper()], x


CASES.pure("enum_construct_from_value", enum_lookup,
           lambda: [(vec(2), "add"), (vec(3), "mul"), (vec(3), "sub"), (vec(4), "div")])


def intenum_arith(x, level):
    return x * level, level + 1, isinstance(level, int), level > Level.LOW


CASES.pure("intenum_arith", intenum_arith,
           lambda: [(vec(2), Level.LOW), (vec(3), Level.HIGH), (vec(3), Level.LOW)])


def flag_ops(x, perm):
    both = perm | Perm.R
    return bool(both & Perm.W), both, Perm.X in perm


CASES.pure("flag_enum_ops", flag_ops,
           lambda: [(vec(2), Perm.W), (vec(3), Perm.R | Perm.X), (vec(3), Perm.W), (vec(4), Perm.X)])


def enum_iteration(x):
    return [m.value for m in Mode], len(Mode), x


CASES.pure("enum_iteration", enum_iteration, lambda: [(vec(2),), (vec(3),)])


def enum_dispatch_table(x, mode):
    ops = {Mode.ADD: np.add, Mode.MUL: np.multiply, Mode.SUB: np.subtract}
    return ops[mode](x, 2)


CASES.pure("enum_dispatch_table", enum_dispatch_table, modes())


# ----- dataclasses --------------------------------------------------------------------------------
def make_point(x):
    return Point(float(x.sum()), 2.0)


CASES.pure("dataclass_constructed", make_point, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def make_point_fullgraph(x):
    p = Point(x.shape[0], 1.5)
    return x * p.x + p.y


CASES.add("dataclass_constructed_fullgraph", lambda: Program(
    make_point_fullgraph, [(vec(2),), (vec(3),), (vec(4),)], compile_kwargs={"fullgraph": True}))


def make_point_array(x):
    p = Point(x * 2, x.sum())
    return p


CASES.pure("dataclass_holding_arrays", make_point_array, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def dataclass_method(x):
    p = Point(x[0], x[-1])
    return p.norm2()


CASES.pure("dataclass_method_call", dataclass_method, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def dataclass_eq(x):
    a = Point(1.0, float(x.shape[0]))
    b = Point(1.0, 3.0)
    return a == b, a != b, a


CASES.pure("dataclass_eq", dataclass_eq, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def dataclass_repr(x):
    p = Point(float(x.shape[0]))
    return repr(p), str(p), f"{p}"


CASES.pure("dataclass_repr", dataclass_repr, lambda: [(vec(2),), (vec(3),)])


def frozen_hash(x):
    k = Key("w", x.shape[0])
    table = {Key("w", 2): "two", Key("w", 3): "three"}
    return table.get(k, "none"), hash(k) == hash(Key("w", x.shape[0]))


CASES.pure("frozen_dataclass_hash", frozen_hash, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def frozen_setattr(x):
    k = Key("w", 1)
    k.size = x.shape[0]
    return k


CASES.pure("frozen_dataclass_setattr_raises", frozen_setattr, lambda: [(vec(2),), (vec(3),)])


def dataclass_replace(x):
    p = Point(1.0, 2.0)
    q = dataclasses.replace(p, y=float(x.sum()))
    return q, dataclasses.asdict(q), dataclasses.astuple(q)


CASES.pure("dataclass_replace_asdict", dataclass_replace, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def dataclass_default_factory(x):
    b1 = Bag()
    b2 = Bag()
    b1.items.append(x.shape[0])
    b1.total += x.sum()
    return b1, b2, b1.items is b2.items


CASES.pure("dataclass_default_factory", dataclass_default_factory, lambda: [(vec(2),), (vec(3),)])


def dataclass_arg_mutated(x, p):
    p.x = p.x + x.sum()
    return p.x * x


CASES.add("dataclass_arg_mutated", lambda: Program(
    dataclass_arg_mutated, [(vec(2), Point(1.0)), (vec(3), Point(2.0)), (vec(4), Point(-1.0, 1.0))]))


def dataclass_arg_read(x, p):
    return x * p.x + p.y


@CASES.case("dataclass_arg_fields_change")
def _dc_fields():
    p = Point(1.0, 2.0)
    return Program(dataclass_arg_read, [(vec(2), p), (vec(3), p), step(lambda: setattr(p, "x", 5.0), vec(3), p),
                                        (vec(4), Point(0.5, 0.5))])


def namedtuple_build(x):
    p = Pair(float(x[0]), float(x[-1]))
    r = Row(x.shape[0], "b")
    return p, r, p.first + p.second, r._asdict()


CASES.pure("namedtuple_constructed", namedtuple_build, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def namedtuple_arg(x, p):
    a, b = p
    return x * a + b, p[0], len(p)


CASES.pure("namedtuple_arg", namedtuple_arg,
           lambda: [(vec(2), Pair(1.0, 2.0)), (vec(3), Pair(2.0, 0.0)), (vec(3), Row(3, 4))])


# ----- plain classes ----------------------------------------------------------------------------
def class_constructed(x):
    v = Vec2(x.sum(), x.shape[0])
    w = v + Vec2(1, 1)
    return (w * 2).x, w.y, w


CASES.pure("class_operator_overloads", class_constructed, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def class_fullgraph(x):
    v = Vec2(2.0, 3.0)
    return x * v.x + v.y


CASES.add("class_constructed_fullgraph", lambda: Program(
    class_fullgraph, [(vec(2),), (vec(3),), (vec(4),)], compile_kwargs={"fullgraph": True}))


def class_eq_in(x):
    v = Vec2(1, x.shape[0])
    return v == Vec2(1, 3), v in [Vec2(1, 2), Vec2(1, 4)], {v: "v"}.get(Vec2(1, 2), "-")


CASES.pure("class_eq_in_hash", class_eq_in, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def class_repr_fstring(x):
    v = Vec2(x.shape[0], 0)
    return f"{v}", str(v), repr([v])


CASES.pure("class_repr_fstring", class_repr_fstring, lambda: [(vec(2),), (vec(3),)])


def protocol_methods(x, s):
    return len(s), s[0], list(s), 2 in s, bool(s), s(x.shape[0])


CASES.pure("class_protocol_methods", protocol_methods,
           lambda: [(vec(2), Seq([1, 2])), (vec(3), Seq([2, 3, 4])), (vec(3), Seq([])), (vec(4), Seq([5]))])


def classmethod_staticmethod(x, k):
    obj = Base.make(k)
    return Base.shift(obj.apply(x)), type(obj).__name__


CASES.pure("classmethod_staticmethod", classmethod_staticmethod,
           lambda: [(vec(2), 2), (vec(3), 3), (vec(4), -1)])


def inheritance_super(x, cls):
    obj = cls(3)
    return obj.apply(x), isinstance(obj, Base), type(obj) is Child


CASES.pure("inheritance_super", inheritance_super,
           lambda: [(vec(2), Base), (vec(3), Child), (vec(3), Base), (vec(4), Child)])


def method_on_argument(x, obj):
    return obj.apply(x)


CASES.pure("method_on_argument", method_on_argument,
           lambda: [(vec(2), Base(2)), (vec(3), Child(2)), (vec(3), Base(5)), (vec(4), Base(2))])


def attr_builtins(x, obj):
    setattr(obj, "extra", x.shape[0])
    return getattr(obj, "k", None), getattr(obj, "missing", "default"), hasattr(obj, "extra"), obj.extra


CASES.pure("getattr_setattr_hasattr", attr_builtins,
           lambda: [(vec(2), Base(1)), (vec(3), Base(2)), (vec(4), types.SimpleNamespace())])


def missing_attr(x, obj):
    return obj.nope * x


CASES.pure("missing_attribute_error", missing_attr, lambda: [(vec(2), Base(1)), (vec(3), Base(2))])


def object_identity(x):
    a = Vec2(1, 2)
    b = a
    c = Vec2(1, 2)
    return a is b, a is c, a == c, x


CASES.pure("object_identity_inside", object_identity, lambda: [(vec(2),), (vec(3),)])


def simplenamespace_build(x):
    ns = types.SimpleNamespace(total=x.sum(), n=x.shape[0])
    ns.mean = ns.total / ns.n
    return ns


CASES.pure("simplenamespace_built", simplenamespace_build, lambda: [(vec(2),), (vec(3),), (vec(4),)])


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


def slots_class(x):
    s = Slotted(x.sum(), 2)
    s.b = s.b + 1
    return s.a * s.b


CASES.pure("slots_class", slots_class, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def partial_call(x, k):
    scale = functools.partial(np.multiply, k)
    add = functools.partial(lambda a, b: a + b, b=1)
    return add(scale(x))


CASES.pure("functools_partial", partial_call, lambda: [(vec(2), 2), (vec(3), 3), (vec(4), 0.5)])


def type_name_of_obj(x, obj):
    return type(obj).__name__, isinstance(obj, (Base, Vec2)), type(obj) == Child


CASES.pure("type_of_user_objects", type_name_of_obj,
           lambda: [(vec(2), Base(1)), (vec(3), Child(1)), (vec(3), Vec2(1, 2)), (vec(4), 3)])


class ArrayLike:
    def __init__(self, n):
        self.n = n

    def __array__(self, dtype=None, copy=None):
        return np.arange(self.n, dtype=dtype or np.float64)


def array_protocol(x, obj):
    return x[: obj.n] + np.asarray(obj)


CASES.pure("array_protocol_object", array_protocol,
           lambda: [(vec(3), ArrayLike(2)), (vec(3), ArrayLike(3)), (vec(4), ArrayLike(1))])


# ----- bound methods given to ac.compile ---------------------------------------------------------
@CASES.case("bound_method_compiled")
def _bound_method():
    m = Model(2.0, 1.0)
    return Program(m.forward, [(vec(2),), (vec(3),), (vec(4),)])


@CASES.case("bound_method_attr_changes")
def _bound_method_attr():
    m = Model(2.0, 1.0)
    return Program(m.forward, [(vec(2),), (vec(3),), step(lambda: setattr(m, "w", -1.0), vec(3)),
                               (vec(4),)])


@CASES.case("bound_method_array_attr")
def _bound_method_array():
    m = Model(np.ones(3), np.zeros(3))

    def change():
        m.w[0] = 4.0
    return Program(m.forward, [(vec(3),), (vec(3, start=2),), step(change, vec(3)), (vec(3),)])


@CASES.case("bound_method_mutates_self")
def _bound_method_mutates():
    m = Model(1.0)
    return Program(m.counted, [(vec(2),), (vec(2),), (vec(3),), (vec(4),)], observe=lambda: m.calls)


@CASES.case("bound_method_returns_self")
def _bound_method_self():
    m = Model(1.0)
    return Program(m.chain, [(vec(2),), (vec(3),), (vec(4),)], observe=lambda: m)


@CASES.case("bound_method_of_local_class")
def _bound_local():
    class Scaler:
        def __init__(self):
            self.k = 3

        def __call__(self, x):
            return x * self.k

        def run(self, x, n=1):
            for _ in range(n):
                x = self(x)
            return x
    s = Scaler()
    return Program(s.run, [(vec(2),), call(vec(3), n=2), (vec(4),)])


@CASES.case("bound_method_inherited")
def _bound_inherited():
    c = Child(2)
    return Program(c.apply, [(vec(2),), (vec(3),), (vec(4),)])


@CASES.case("unbound_method_with_self_arg")
def _unbound_method():
    m1, m2 = Model(2.0), Model(3.0, 1.0)
    return Program(Model.forward, [(m1, vec(2)), (m1, vec(3)), (m2, vec(3)), (m2, vec(4))])


@CASES.case("method_compiled_in_class_body")
def _method_class_body():
    class Layer:
        def __init__(self, k):
            self.k = k

        def forward(self, x):
            return x * self.k + 1
    a, b = Layer(2), Layer(5)
    return Program(Layer.forward, [(a, vec(2)), (a, vec(3)), (b, vec(3)), (a, vec(4))])


# ----- graph break inside an inlined helper ------------------------------------------------------
def helper_with_break(x):
    y = x + 1
    print("in helper", y.shape[0])
    return y * 3


def caller_of_breaking_helper(x):
    return helper_with_break(x) * 2


CASES.pure("graph_break_in_helper", caller_of_breaking_helper, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def helper_explicit_break(x, log):
    log.append("helper start")
    ac.graph_break()
    log.append("helper end")
    return x.sum()


def caller_explicit_break(x, log):
    log.append("caller")
    v = helper_explicit_break(x * 2, log)
    log.append("caller end")
    return v, x + v


CASES.add("explicit_break_in_helper", lambda: Program(
    caller_explicit_break, [(vec(2), []), (vec(3), []), (vec(4), [])]))


def nested_helpers_break(x):
    def inner(v):
        ac.graph_break()
        return v - 1

    def outer(v):
        return inner(v * 2) + 1
    return outer(x) * 3


CASES.pure("graph_break_two_levels_deep", nested_helpers_break, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def helper_break_in_loop(x):
    def step_fn(v, i):
        if i == 1:
            print("step", i)
        return v + i
    for i in range(3):
        x = step_fn(x, i)
    return x


CASES.pure("helper_break_in_loop", helper_break_in_loop, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def helper_break_returns_tuple(x):
    def stats(v):
        print("stats")
        return v.sum(), v.max()
    s, m = stats(x)
    return s / m


CASES.pure("helper_break_returns_tuple", helper_break_returns_tuple, lambda: [(vec(2),), (vec(3),), (vec(4),)])


# ----- del, locals(), eval, walrus, tuple returns ----------------------------------------------
def del_local(x):
    y = x * 2
    z = y + 1
    del y
    return z, "y" in locals()


CASES.pure("del_local", del_local, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def del_container_items(x, lst, d):
    del lst[0]
    del d["a"]
    del lst[-1:]
    return x * len(lst) + len(d)


CASES.add("del_container_items", lambda: Program(
    del_container_items, [(vec(2), [1, 2, 3], {"a": 1, "b": 2}), (vec(3), [4, 5], {"a": 0}),
                          (vec(4), [1], {"b": 1})]))


def del_attribute(x, obj):
    del obj.k
    return hasattr(obj, "k"), x


CASES.pure("del_attribute", del_attribute, lambda: [(vec(2), Base(1)), (vec(3), Base(2)), (vec(4), Base(3))])


def del_then_use(x):
    y = x + 1
    del y
    return y  # noqa: F821


CASES.pure("del_then_use_raises", del_then_use, lambda: [(vec(2),), (vec(3),)])


def locals_names(x):
    a = 1
    b = x * 2
    return sorted(locals()), locals()["a"]


CASES.pure("locals_names", locals_names, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def locals_values(x, n):
    total = x.sum() * n
    d = dict(locals())
    return d["n"], d["total"], type(d["x"])


CASES.pure("locals_values", locals_values, lambda: [(vec(2), 1), (vec(3), 2), (vec(4), 3)])


def eval_expr(x, n):
    return eval("x * 2 + n"), eval("n ** 2", {"n": n})


CASES.pure("eval_expression", eval_expr, lambda: [(vec(2), 1), (vec(3), 2), (vec(4), 3)])


def eval_string_arg(x, expr):
    return eval(expr, {"np": np}, {"x": x})


CASES.pure("eval_string_argument", eval_string_arg,
           lambda: [(vec(2), "x + 1"), (vec(3), "np.sin(x)"), (vec(3), "x.sum()"), (vec(4), "1/0")])


def walrus_comprehension(x):
    ys = [y := float(v) * 2 for v in x]
    return ys, y


CASES.pure("walrus_in_comprehension", walrus_comprehension, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def walrus_filter(x):
    kept = [w for v in x if (w := v * 3) > 4]
    return kept, w


CASES.pure("walrus_filter_comprehension", walrus_filter, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def walrus_if(x):
    if (n := x.shape[0]) > 2:
        return x[:n - 1], n
    return x, n


CASES.pure("walrus_in_if", walrus_if, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def walrus_while(x):
    out = []
    i = 0
    while (v := i * 2) < x.shape[0]:
        out.append(v)
        i += 1
    return out, v


CASES.pure("walrus_in_while", walrus_while, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def tuple_return_after_break(x):
    print("break")
    return x.sum(), float(x.max())  # issue example: a crash today


CASES.pure("tuple_return_after_break", tuple_return_after_break, lambda: [(vec(2),), (vec(3),), (vec(4),)])


def tuple_return_after_explicit_break(x):
    y = x * 2
    ac.graph_break()
    return y.min(), y.max(), y.shape


CASES.pure("tuple_return_after_explicit_break", tuple_return_after_explicit_break,
           lambda: [(vec(2),), (vec(3),), (vec(4),)])


def starred_return_after_break(x):
    parts = [x[:1], x[1:]]
    print(len(parts))
    return *parts, len(x)


CASES.pure("starred_tuple_return_after_break", starred_return_after_break,
           lambda: [(vec(2),), (vec(3),), (vec(4),)])


def undefined_never_leaks(x):
    if x.shape[0] > 2:
        a = x.sum()
    print("mid")
    try:
        return a  # noqa: F821
    except NameError as exc:
        return type(exc).__name__


CASES.pure("undefined_local_after_break_caught", undefined_never_leaks, lambda: [(vec(3),), (vec(2),), (vec(4),)])


# ----- more protocols ----------------------------------------------------------------------------
@dataclasses.dataclass(order=True)
class Version:
    major: int
    minor: int = 0


def dataclass_ordering(x, v):
    return v < Version(1, 5), max(v, Version(1, 0)), sorted([Version(2), v, Version(0, 1)])


CASES.pure("dataclass_order_comparisons", dataclass_ordering,
           lambda: [(vec(2), Version(1, 2)), (vec(3), Version(2, 0)), (vec(3), Version(0, 9))])


@dataclasses.dataclass
class Tracked:
    value: float
    log: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.log.append("post_init")
        self.value = float(self.value) * 2


def dataclass_post_init(x):
    t = Tracked(x.sum())
    return t, t.log


CASES.pure("dataclass_post_init", dataclass_post_init, lambda: [(vec(2),), (vec(3),), (vec(4),)])


class Lazy:
    def __init__(self, v):
        self.v = v
        self.computed = 0

    @functools.cached_property
    def heavy(self):
        self.computed += 1
        return self.v * 2


def cached_property_once(x, obj):
    return x * obj.heavy + obj.heavy, obj.computed


CASES.pure("cached_property_once", cached_property_once,
           lambda: [(vec(2), Lazy(1.0)), (vec(3), Lazy(2.0)), (vec(3), Lazy(3.0))])


class Accum:
    def __init__(self):
        self.items = []

    def __iadd__(self, other):
        self.items.append(other)
        return self

    def __setitem__(self, k, v):
        self.items.append((k, v))

    def __getitem__(self, k):
        return self.items[k]


def iadd_setitem_protocol(x, acc):
    before = acc
    acc += x.shape[0]
    acc["k"] = float(x.sum())
    return acc is before, acc[0], len(acc.items)


CASES.pure("iadd_setitem_protocol", iadd_setitem_protocol,
           lambda: [(vec(2), Accum()), (vec(3), Accum()), (vec(4), Accum())])


class Index:
    def __init__(self, n):
        self.n = n

    def __index__(self):
        return self.n


def index_protocol(x, i):
    return x[:i], np.zeros(i).shape, [1, 2, 3, 4][i], range(i)[-1:]


CASES.pure("index_protocol_object", index_protocol,
           lambda: [(vec(4), Index(1)), (vec(4), Index(2)), (vec(4), Index(3)), (vec(4), Index(7))])


class Number:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return float(self.v)

    def __int__(self):
        return int(self.v)

    def __bool__(self):
        return self.v != 0


def number_protocol(x, num):
    return float(num) * x, int(num), bool(num), x if num else -x


CASES.pure("float_int_bool_protocol", number_protocol,
           lambda: [(vec(2), Number(1.5)), (vec(3), Number(2)), (vec(3), Number(0)), (vec(4), Number(-2.5))])


class NoUfunc:
    __array_ufunc__ = None

    def __radd__(self, other):
        return "radd"

    def __rmul__(self, other):
        return ("rmul", type(other).__name__)


def reflected_operators(x, obj):
    return x + obj, x * obj, 2 * obj


CASES.pure("reflected_operators_array_ufunc_none", reflected_operators,
           lambda: [(vec(2), NoUfunc()), (vec(3), NoUfunc()), (vec(4), NoUfunc())])


class LoudError(Exception):
    def __str__(self):
        return f"loud({self.args[0]})"


def custom_exception_str(x):
    if x.shape[0] > 2:
        raise LoudError(x.shape[0])
    return x


CASES.pure("custom_exception_str", custom_exception_str, lambda: [(vec(2),), (vec(3),), (vec(2),)])


class Abstract:
    def area(self):
        raise NotImplementedError(type(self).__name__)


class Square(Abstract):
    def __init__(self, s):
        self.s = s

    def area(self):
        return self.s * self.s


def polymorphic_dispatch(x, shapes):
    total = 0.0
    for s in shapes:
        total += s.area()
    return x * total


CASES.pure("polymorphic_dispatch", polymorphic_dispatch,
           lambda: [(vec(2), [Square(1)]), (vec(3), [Square(2), Square(3)]), (vec(3), [Abstract()]),
                    (vec(4), [])])


def match_class_pattern(x, obj):
    match obj:
        case Point(x=0.0):
            return "origin x"
        case Point(x=px, y=py) if px > py:
            return x * px
        case Version(major=m):
            return m
        case _:
            return None


CASES.pure("match_class_patterns", match_class_pattern,
           lambda: [(vec(2), Point(0.0, 1.0)), (vec(3), Point(3.0, 1.0)), (vec(3), Version(4)),
                    (vec(4), Point(1.0, 2.0)), (vec(4), 5)])


class Celsius:
    def __get__(self, obj, objtype=None):
        return obj._k - 273.0

    def __set__(self, obj, value):
        obj._k = value + 273.0


class Thermo:
    temp = Celsius()

    def __init__(self, c):
        self.temp = c


def descriptor_protocol(x, t):
    t.temp = t.temp + float(x.sum())
    return t.temp, t._k


CASES.pure("descriptor_get_set", descriptor_protocol,
           lambda: [(vec(2), Thermo(1.0)), (vec(3), Thermo(2.0)), (vec(4), Thermo(-5.0))])


@CASES.case("method_compiled_called_through_instances")
def _methods_instances():
    class Net:
        def __init__(self, k):
            self.k = k
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.k
    nets = [Net(1), Net(2), Net(3)]

    def f(x, i):
        return nets[i].forward(x), nets[i].calls
    return Program(f, [(vec(2), 0), (vec(3), 1), (vec(3), 2), (vec(4), 0), (vec(4), 1)],
                   observe=lambda: [n.calls for n in nets])
