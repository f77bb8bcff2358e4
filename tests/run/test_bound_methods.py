"""Compiling bound methods (``ac.compile(obj.method)``, ``ac.compile(model.forward)``), methods
decorated in a class body, static and class methods: guarded on ``self`` and what was read."""

from __future__ import annotations

import io

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter

nn = ac.nn
BACKENDS = ("eager", "aot_eager", "numba")
X = np.arange(6.0).reshape(2, 3)


class Scaler:
    def __init__(self, scale):
        self.scale = scale
        self.offset = np.ones(3)

    def method(self, x):
        return x * self.scale + self.offset


class Toy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2, rng=0)
        self.factor = 2.0

    def forward(self, x):
        return self.fc(x) * self.factor


@pytest.mark.parametrize("backend", BACKENDS)
def test_bound_method_of_a_plain_object(backend):
    obj = Scaler(2.0)
    compiled = ac.compile(obj.method, backend=backend, fullgraph=True)
    np.testing.assert_allclose(compiled(X), obj.method(X))
    np.testing.assert_allclose(compiled(X), obj.method(X))
    assert len(compiled.entries) == 1
    obj.scale = 3.0  # an attribute the code read: the guard sees the change
    np.testing.assert_allclose(compiled(X), X * 3.0 + 1)
    obj.offset = np.zeros(3)  # an array attribute is an input
    np.testing.assert_allclose(compiled(X), X * 3.0)
    assert compiled.__self__ is obj


def test_bound_method_is_guarded_on_self():
    first, second = Scaler(2.0), Scaler(5.0)
    counter = CompileCounter()
    a = ac.compile(first.method, backend=counter)
    b = ac.compile(second.method, backend=counter)
    np.testing.assert_allclose(a(X), first.method(X))
    np.testing.assert_allclose(b(X), second.method(X))
    assert counter.frame_count == 2
    assert "self is ___self" in a.entries[0].guards  # identity of __self__
    out = io.StringIO()
    ac.show(a, file=out)
    assert "guards" in out.getvalue()


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_forward(backend):
    model = Toy()
    compiled = ac.compile(model.forward, backend=backend, fullgraph=True)
    np.testing.assert_allclose(compiled(X), model.forward(X))
    model.fc.weight[...] = 1.0  # parameters are inputs
    model.factor = 3.0
    np.testing.assert_allclose(compiled(X), model.forward(X))
    np.testing.assert_allclose(compiled(X + 1), model(X + 1))


def test_method_decorated_in_the_class_body():
    class Model:
        def __init__(self, k):
            self.k = k

        @ac.compile(backend="eager", fullgraph=True)
        def run(self, x):
            return x * self.k

    one, two = Model(1.0), Model(2.0)
    np.testing.assert_allclose(one.run(X), X)
    np.testing.assert_allclose(two.run(X), X * 2)
    np.testing.assert_allclose(one.run(X), X)
    one.k = 4.0
    np.testing.assert_allclose(one.run(X), X * 4)
    assert isinstance(Model.__dict__["run"], ac.run.CompiledFunction)


def test_static_and_class_methods():
    class Ops:
        base = 1.0

        @staticmethod
        @ac.compile(backend="eager", fullgraph=True)
        def twice(x):
            return x * 2

        @ac.compile(backend="eager", fullgraph=True)
        @staticmethod
        def thrice(x):
            return x * 3

        @classmethod
        @ac.compile(backend="eager", fullgraph=True)
        def plus_base(cls, x):
            return x + cls.base

        @ac.compile(backend="eager", fullgraph=True)
        @classmethod
        def minus_base(cls, x):
            return x - cls.base

    for owner in (Ops, Ops()):
        np.testing.assert_allclose(owner.twice(X), X * 2)
        np.testing.assert_allclose(owner.thrice(X), X * 3)
        np.testing.assert_allclose(owner.plus_base(X), X + 1)
        np.testing.assert_allclose(owner.minus_base(X), X - 1)
    bound = ac.compile(Ops.plus_base, backend="eager")  # a classmethod bound to its class
    np.testing.assert_allclose(bound(X), X + 1)


def test_recompiling_a_compiled_bound_method_and_c_methods():
    obj = Scaler(2.0)
    inner = ac.compile(Scaler.method, backend="eager")
    again = ac.compile(inner.__get__(obj), backend="aot_eager")
    np.testing.assert_allclose(again(X), obj.method(X))
    with pytest.raises(TypeError, match="no source"):
        ac.compile([].append)


def test_explain_a_bound_method():
    obj = Scaler(2.0)
    report = ac.explain(obj.method)(X)
    assert report.graph_count == 1 and report.graph_break_count == 0
    compiled = ac.compile(obj.method, backend="eager")
    report = ac.explain(compiled)(X)
    assert report.graph_count == 1
