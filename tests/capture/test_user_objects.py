"""User objects in compiled code: comparisons, hashing and str of enums, dataclasses and plain
classes (their real methods, or specialized behind a guard), and instances built inside compiled
code (captured with fullgraph=True, rebuilt per call)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Sequence

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter

BACKENDS = ("eager", "aot_eager", "numba")


class Mode(enum.Enum):
    ADD = 1
    MUL = 2
    SUB = 3


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Cfg:
    scale: float
    shift: float = 0.0


@dataclasses.dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int = 0


@dataclasses.dataclass
class Pair:
    left: Any
    right: Any
    tags: list = dataclasses.field(default_factory=list)

    def total(self):
        return self.left + self.right


@dataclasses.dataclass
class Scaled:
    value: Any
    factor: float = 2.0
    result: Any = dataclasses.field(init=False)

    def __post_init__(self):
        self.result = self.value * self.factor


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __eq__(self, other):
        if not isinstance(other, Point):
            return NotImplemented
        return self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))

    def __repr__(self):
        return f"Point({self.x}, {self.y})"

    def __lt__(self, other):
        return (self.x, self.y) < (other.x, other.y)

    @property
    def norm1(self):
        return abs(self.x) + abs(self.y)


class Plain:
    """No dunders of its own: identity equality and hash."""

    def __init__(self, k):
        self.k = k


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


def same(actual: Any, expected: Any) -> None:
    """Equal values of the same Python types; objects compared by class and attributes."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected)
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            same(a, e)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            same(actual[key], expected[key])
    elif hasattr(expected, "__dict__") and not isinstance(expected, enum.Enum):
        same(vars(actual), vars(expected))
    elif hasattr(type(expected), "__slots__") and not isinstance(expected, enum.Enum):
        same([getattr(actual, s) for s in type(expected).__slots__],
             [getattr(expected, s) for s in type(expected).__slots__])
    else:
        assert actual == expected, (actual, expected)


def check(fn: Callable, calls: Sequence[tuple], *, backends=BACKENDS, fullgraph=True,
          max_entries: int | None = None) -> list:
    """Plain and compiled agree on every call (and on every backend)."""
    compiled_fns = []
    for backend in backends:
        compiled = ac.compile(fn, backend=backend, fullgraph=fullgraph)
        for args in calls:
            same(compiled(*args), fn(*args))
        if max_entries is not None:
            assert len(compiled.entries) <= max_entries
        compiled_fns.append(compiled)
    return compiled_fns


X = np.arange(4.0)


# ----- enums ---------------------------------------------------------------------------------
def test_enum_equality_inside_compiled_code():
    def fn(x, mode):
        if mode == Mode.ADD:
            return x + 1
        if mode != Mode.SUB:
            return x * 3
        return x - 1

    calls = [(X, Mode.ADD), (X, Mode.MUL), (X, Mode.SUB), (X, Mode.ADD)]
    for compiled in check(fn, calls):
        assert len(compiled.entries) == 3  # one per member: guarded on identity
        assert all(not e.is_eager for e in compiled.entries)


def test_enum_membership_dict_lookup_str_hash_format():
    table = {Mode.ADD: 1.0, Mode.MUL: 2.0}

    def fn(x, mode):
        inside = mode in (Mode.ADD, Mode.MUL)
        in_dict = mode in table
        scale = table.get(mode, 5.0)
        return (x * scale, inside, in_dict, str(mode), repr(mode), f"{mode}!", f"{mode.name}",
                mode.value, hash(mode) == hash(Mode.ADD), mode is Mode.ADD)

    check(fn, [(X, Mode.ADD), (X, Mode.SUB), (X, Mode.MUL)])


def test_enum_keyed_dict_subscript_and_str_mixin():
    def fn(x, mode, color):
        weights = {Mode.ADD: 1.0, Mode.MUL: 2.0, Mode.SUB: 3.0}
        label = "r" if color == "red" else "b"
        return x * weights[mode], label, color == Color.RED, str(color), color.upper()

    check(fn, [(X, Mode.MUL, Color.RED), (X, Mode.SUB, Color.BLUE), (X, Mode.MUL, Color.RED)])


def test_enum_member_lookup_by_value_inside_compiled_code():
    def fn(x, code):
        return x + Mode(code).value, Mode(code)

    check(fn, [(X, 1), (X, 2)])


# ----- outside objects with user dunders ---------------------------------------------------
def test_user_eq_hash_repr_lt_are_inlined_and_guarded_on_attributes():
    origin = Point(0, 0)

    def fn(x, p):
        same_point = p == origin
        bigger = origin < p
        return x + p.norm1, same_point, bigger, repr(p), str(p), hash(p) == hash(origin), \
            p in {origin: 1}, p != origin

    p = Point(1, 2)
    calls = [(X, p), (X, Point(0, 0)), (X, p)]
    check(fn, calls)
    compiled = ac.compile(fn, backend="eager", fullgraph=True)
    compiled(X, p)
    p.x = 0
    p.y = 0  # the same object, changed: the attributes read are guarded
    same(compiled(X, p), fn(X, p))


def test_plain_objects_compare_by_identity():
    a, b = Plain(1), Plain(1)

    def fn(x, u, v):
        return x * u.k, u == v, u != v, u in [v], u in (u,), hash(u) == hash(v)

    check(fn, [(X, a, b), (X, a, a), (X, b, a)])


def test_dataclass_generated_eq_order_repr_hash():
    def fn(x, v, w, c):
        return x + v.major, v == w, v < w, v >= w, repr(v), hash(v) == hash(w), repr(c), \
            c == Cfg(2.0, 1.0)

    calls = [(X, Version(1, 2), Version(1, 3), Cfg(2.0, 1.0)),
             (X, Version(2, 0), Version(2, 0), Cfg(3.0)),
             (X, Version(1, 2), Version(1, 3), Cfg(2.0, 1.0))]
    check(fn, calls)


def test_dataclass_eq_with_array_fields_follows_numpy():
    def fn(a, b):
        return Pair(a, 1) == Pair(a, 1), Pair(a, 1) == Pair(b, 2)

    check(fn, [(np.ones(()), np.zeros(()))], fullgraph=False)


def test_ordering_unsupported_raises_python_type_error():
    def fn(x, u, v):
        return u < v

    compiled = ac.compile(fn, backend="eager")
    with pytest.raises(TypeError) as plain:
        fn(X, Plain(1), Plain(2))
    with pytest.raises(TypeError) as got:
        compiled(X, Plain(1), Plain(2))
    assert str(got.value) == str(plain.value)


def test_unhashable_user_object():
    class NoHash:
        def __eq__(self, other):
            return True

    def fn(x, o):
        return {o: 1}

    compiled = ac.compile(fn, backend="eager")
    with pytest.raises(TypeError, match="unhashable type: 'NoHash'"):
        compiled(X, NoHash())


def test_user_bool_and_len():
    class Box:
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

    def fn(x, box):
        if box:
            return x + len(box)
        return x - 1

    box = Box([1, 2])
    compiled = check(fn, [(X, box), (X, Box([]))])[0]
    box.items.append(3)
    same(compiled(X, box), fn(X, box))


# ----- objects built inside compiled code --------------------------------------------------
def test_dataclass_built_in_compiled_code_fullgraph():
    def fn(x, cfg):
        c = Cfg(cfg.scale * 2, 1.0)
        d = Cfg(scale=3.0)
        return x * c.scale + c.shift + d.shift, c, d

    counter = CompileCounter()
    compiled = ac.compile(fn, backend=counter, fullgraph=True)
    for cfg in (Cfg(2.0), Cfg(2.0), Cfg(5.0)):
        first = compiled(X, cfg)
        second = compiled(X, cfg)
        same(first, fn(X, cfg))
        assert first[1] is not second[1]  # a new instance per call, as in plain Python
    check(fn, [(X, Cfg(2.0)), (X, Cfg(4.0))])


def test_dataclass_default_factory_post_init_and_methods():
    def fn(x):
        p = Pair(x, x * 2)
        p.tags.append("a")
        s = Scaled(x)
        return p.total() + s.result, p, s

    check(fn, [(X,), (X + 1,)])


def test_frozen_dataclass_built_inside_and_assignment_error():
    def fn(x):
        v = Version(3)
        return x + v.major + v.minor, v, v == Version(3, 0)

    check(fn, [(X,)])

    def assigns(x):
        v = Version(3)
        v.major = 4
        return x

    compiled = ac.compile(assigns, backend="eager")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'major'"):
        compiled(X)


def test_plain_class_init_inlined_with_property_and_user_dunders():
    def fn(x, k):
        p = Point(k, 2)
        q = Point(k, 2)
        return x * p.norm1, p == q, p is q, repr(p), p, [p, q]

    check(fn, [(X, 1), (X, 3)])


def test_returned_object_aliasing_is_kept():
    def fn(x):
        p = Plain(x + 1)
        return p, [p, p], {"p": p}

    for backend in BACKENDS:
        compiled = ac.compile(fn, backend=backend, fullgraph=True)
        p, lst, d = compiled(X)
        assert lst[0] is p and lst[1] is p and d["p"] is p
        np.testing.assert_allclose(p.k, X + 1)


def test_object_stored_into_outside_list_is_the_returned_one():
    log: list = []

    def fn(x):
        p = Plain(x * 2)
        log.append(p)
        return p

    compiled = ac.compile(fn, backend="eager", fullgraph=True)
    first = compiled(X)
    second = compiled(X)
    assert log == [first, second] and log[0] is first and first is not second


def test_slots_class_built_inside():
    def fn(x):
        s = Slotted(x, 2)
        s.b = s.b + 1
        return s.a * s.b, s

    check(fn, [(X,)])


def test_attribute_error_and_missing_arguments_are_pythons():
    def missing_attr(x):
        return Plain(1).nope

    def missing_arg(x):
        return Cfg()

    for fn, kind in ((missing_attr, AttributeError), (missing_arg, TypeError)):
        compiled = ac.compile(fn, backend="eager")
        with pytest.raises(kind) as plain:
            fn(X)
        with pytest.raises(kind) as got:
            compiled(X)
        assert str(got.value) == str(plain.value)


def test_class_with_custom_new_or_setattr_breaks():
    class Logged:
        def __init__(self, v):
            self.v = v

        def __setattr__(self, name, value):
            object.__setattr__(self, name, value)

    def fn(x):
        return Logged(x).v

    with pytest.raises(ac.exc.Unsupported, match="defines __setattr__"):
        ac.compile(fn, backend="eager", fullgraph=True)(X)
    np.testing.assert_allclose(ac.compile(fn, backend="eager")(X), X)


def test_object_live_across_a_graph_break():
    def fn(x):
        c = Cfg(2.0, 1.0)
        ac.graph_break()
        return x * c.scale + c.shift, c

    check(fn, [(X,), (X,)], fullgraph=False)


# ----- nonstrict_trace inputs ---------------------------------------------------------------
@ac.nonstrict_trace
def _scale_by(obj, x):
    return x * obj.left


def test_unregistered_class_to_nonstrict_trace_is_invalid_input():
    def fn(x):
        return _scale_by(Pair(2.0, 3.0), x)

    with pytest.raises(ac.exc.Unsupported,
                       match="Invalid input type for nonstrict_trace-ed function: Pair"):
        ac.compile(fn, backend="eager", fullgraph=True)(X)
    np.testing.assert_allclose(ac.compile(fn, backend="eager")(X), fn(X))  # else: runs eagerly


def test_registered_dataclass_built_inside_goes_to_nonstrict_trace():
    @dataclasses.dataclass
    class Holder:
        left: Any

    ac.pytree.register_dataclass(Holder)

    def fn(x):
        return _scale_by(Holder(x), x)

    for backend in ("eager", "aot_eager"):
        np.testing.assert_allclose(ac.compile(fn, backend=backend, fullgraph=True)(X), X * X)


def test_id_of_outside_objects_is_theirs():
    a = Plain(1)

    def fn(x, u):
        return x + 1, id(u) == id(a), id(u)

    check(fn, [(X, a), (X, Plain(2)), (X, a)])


def test_identity_of_modules_guarded_by_type_is_pinned_when_compared():
    nn = ac.nn

    class Net(nn.Module):
        def __init__(self, shared):
            super().__init__()
            self.a = nn.ReLU()
            self.b = self.a if shared else nn.ReLU()

        def forward(self, x):
            return x + (1.0 if self.a is self.b else 2.0)

    compiled = ac.compile(lambda net, x: net(x), backend="eager", fullgraph=True)
    for shared in (True, False, True):
        net = Net(shared)
        np.testing.assert_allclose(compiled(net, X), net(X))


class Base:
    def __init__(self, v):
        self.v = v

    def value(self):
        return self.v


class Derived(Base):
    def __init__(self, v, w):
        super().__init__(v)
        self.w = w

    def value(self):
        return super().value() * self.w


def test_inheritance_and_super_inside_built_and_outside_objects():
    outside = Derived(2.0, 3.0)

    def fn(x):
        d = Derived(x, 2.0)
        return d.value() + outside.value(), d, isinstance(d, Base)

    check(fn, [(X,), (X + 1,)])
