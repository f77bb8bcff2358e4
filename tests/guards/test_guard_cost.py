"""Cheaper guards (issue 11): the 1-d array test by ``len``, class attributes of module classes
checked once per state version, attributes read on an object an earlier fact identified.

Each case compares the compiled call with the plain one after the change and counts compiles.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import nn
from astcompiler.testing import CompileCounter

X = np.ones((2, 3))


def scaled(x):
    return x * 2.0


def test_one_dim_guard_by_len_rejects_what_the_shape_test_rejected():
    counter = CompileCounter()
    compiled = ac.compile(scaled, backend=counter)
    inputs = [np.ones(8), np.ones(8), np.ones((8, 1)), np.ones(9), np.array(8.0),
              np.ones(8)]
    for x in inputs:
        got, want = compiled(x), scaled(x)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert counter.frame_count == 4  # 8 floats reused; (8, 1), 9, 0-d: new
    assert "x.ndim == 1 and len(x) == 8" in compiled.entries[0].guards


class Base(nn.Module):
    def forward(self, x):
        return x + 1.0


class Mixin:
    def extra(self, x):
        return x * 3.0


class Net(Mixin, Base):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3, rng=0)

    def forward(self, x):
        return self.extra(self.lin(x))


def test_class_attribute_writes_move_the_version_and_recompile():
    counter = CompileCounter()
    model = Net()
    compiled = ac.compile(model, backend=counter)
    np.testing.assert_array_equal(compiled(X), model(X))
    guard = compiled._compiled_call.entries[0].guards
    body = guard[guard.index("def guard("):]
    assert "___Linear.forward is" not in body and "___Linear.forward is" in guard  # in the tree
    assert "___Net.extra is" in body  # a mixin in its MRO (no module class): every call
    saved_forward, saved_extra = nn.Linear.forward, Mixin.extra
    try:
        nn.Linear.forward = lambda self, x: x * 0.0  # a base module class, by the metaclass
        np.testing.assert_array_equal(compiled(X), model(X))
        Mixin.extra = lambda self, x: x - 5.0  # a plain mixin: its own guard
        np.testing.assert_array_equal(compiled(X), model(X))
    finally:
        nn.Linear.forward, Mixin.extra = saved_forward, saved_extra
    np.testing.assert_array_equal(compiled(X), model(X))
    Net.extra = lambda self, x: x / 2.0  # shadows the mixin's, on the module class
    try:
        np.testing.assert_array_equal(compiled(X), model(X))
    finally:
        del Net.extra  # a delete moves the version too
    np.testing.assert_array_equal(compiled(X), model(X))
    assert counter.frame_count == 4  # first, Linear patched, mixin patched, Net.extra


def test_forward_code_swapped_without_a_write_is_still_noticed():
    counter = CompileCounter()
    model = Base()
    compiled = ac.compile(model, backend=counter)
    np.testing.assert_array_equal(compiled(X), model(X))

    def other(self, x):
        return x - 1.0

    saved = Base.forward.__code__
    try:
        Base.forward.__code__ = other.__code__  # no version move: the code fact sees it
        np.testing.assert_array_equal(compiled(X), model(X))
    finally:
        Base.forward.__code__ = saved
    np.testing.assert_array_equal(compiled(X), model(X))
    assert counter.frame_count == 2


def test_modules_mix_with_abc_like_torch_modules():
    """``ModuleType`` derives from ``abc.ABCMeta``: an ``nn.Module``/``abc.ABC`` class defines
    (no metaclass conflict), its abstract methods are enforced, and class writes still bump."""
    import abc

    from astcompiler import nn

    class Base(nn.Module, abc.ABC):
        @abc.abstractmethod
        def forward(self, x): ...

    class Scale(Base):
        def forward(self, x):
            return x * 2.0

    with pytest.raises(TypeError, match="abstract"):
        Base()
    before = nn.modules.module.state_version()
    Scale.extra = 1
    assert nn.modules.module.state_version() != before
    x = np.arange(3.0)
    # dynamic=False: its own shared module_call (tests read the entries of the default one)
    assert np.array_equal(ac.compile(Scale(), backend="eager", dynamic=False)(x), x * 2.0)
