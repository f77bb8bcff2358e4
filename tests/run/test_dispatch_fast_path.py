"""The dispatch fast path (issue 11, lever 4) and honest compile times.

Module trees are guarded by one version counter (``nn.modules.state_version()``): every change
the per-attribute guards saw must still be seen. Each test mutates one kind of state after the
first compiled call and compares the compiled call with the plain one (and the entry count).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import nn
from astcompiler.exc import RecompileError
from astcompiler.nn import Parameter

BACKEND = "aot_eager"


class Block(nn.Module):
    def __init__(self, scale: float = 2.0) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3, rng=0)
        self.act = nn.ReLU()
        self.scale = scale
        self.register_buffer("shift", np.full(3, 0.5))

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale + self.shift


def _x(rows: int = 2) -> np.ndarray:
    return np.linspace(-1.0, 1.0, rows * 3).reshape(rows, 3)


def _compiled(model: nn.Module):
    compiled = ac.compile(model, backend=BACKEND)
    compiled._compiled_call.reset()  # the cache is shared by every module compiled alike
    return compiled


def _same(compiled, model, *args) -> None:
    expected = model(*args)
    actual = compiled(*args)
    assert type(actual) is type(expected)
    np.testing.assert_array_equal(actual, expected)


def _entries(compiled) -> int:
    return len(compiled._compiled_call.entries)


def test_plain_attribute_change_recompiles():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model.scale = 3.0
    _same(compiled, model, _x())
    assert _entries(compiled) == 2


def test_same_value_assignment_keeps_the_entry():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model.training = model.training  # no change: no new entry (the tree is checked again)
    model.fc.weight = model.fc.weight
    _same(compiled, model, _x())
    assert _entries(compiled) == 1


@pytest.mark.parametrize("how", ["setattr", "registry item", "add_module"])
def test_submodule_replaced_with_another_type(how):
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    if how == "setattr":
        model.act = nn.Tanh()
    elif how == "registry item":
        model._modules["act"] = nn.Tanh()
    else:
        model.add_module("act", nn.Sigmoid())
    _same(compiled, model, _x())
    assert _entries(compiled) == 2


def test_submodule_replaced_with_same_type_shares_the_entry():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model.fc = nn.Linear(3, 3, rng=5)  # same class, same shapes: parameters are inputs
    _same(compiled, model, _x())
    assert _entries(compiled) == 1


def test_registry_methods_are_seen():
    model = nn.Sequential(nn.Linear(3, 3, rng=0), nn.ReLU(), nn.Linear(3, 3, rng=1))
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model._modules.update({"1": nn.Tanh()})
    _same(compiled, model, _x())
    model._modules.pop("2")
    _same(compiled, model, _x())
    model.append(nn.Sigmoid())
    _same(compiled, model, _x())
    del model[0]
    _same(compiled, model, _x())
    assert _entries(compiled) == 5


def test_parameter_values_shapes_and_new_parameters():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model.fc.weight[...] = 0.25  # in place: an input, no recompile
    _same(compiled, model, _x())
    model.fc.bias = Parameter(np.full(3, -1.0))  # a new parameter of the same shape
    _same(compiled, model, _x())
    assert _entries(compiled) == 1
    model.fc.weight = Parameter(np.ones((3, 3), np.float32))  # another dtype
    _same(compiled, model, _x())
    assert _entries(compiled) == 2


def test_parameter_shape_changed_in_place_is_seen():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x(1))
    model.shift.shape = (1, 3)  # the buffer's own shape, changed in place: no module API call
    _same(compiled, model, _x(1))
    assert compiled(_x(1)).shape == model(_x(1)).shape == (1, 3)
    assert _entries(compiled) == 2


def test_buffer_replaced_and_removed():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model.register_buffer("shift", np.full(3, 4.0))
    _same(compiled, model, _x())
    model.shift = np.arange(3.0)
    _same(compiled, model, _x())
    del model.shift
    with pytest.raises(AttributeError) as plain:
        model(_x())
    with pytest.raises(AttributeError) as compiled_error:
        compiled(_x())
    assert str(compiled_error.value) == str(plain.value)


def test_bias_none_to_parameter():
    layer = nn.Linear(3, 2, bias=False, rng=0)
    compiled = _compiled(layer)
    _same(compiled, layer, _x())
    layer.bias = Parameter(np.ones(2))
    _same(compiled, layer, _x())
    assert _entries(compiled) == 2


def test_hooks_registered_and_removed_after_compile():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    handle = model.fc.register_forward_hook(lambda m, args, out: out * 10.0)
    _same(compiled, model, _x())
    handle.remove()
    _same(compiled, model, _x())
    with nn.modules.register_module_forward_pre_hook(lambda m, args: (args[0] + 1.0,)):
        _same(compiled, model, _x())
    _same(compiled, model, _x())


def test_train_and_eval_each_have_an_entry():
    model = nn.Sequential(nn.Linear(3, 3, rng=0), nn.Dropout(0.5, rng=3))
    compiled = _compiled(model)
    model.eval()
    _same(compiled, model, _x())
    model.train()
    assert compiled(_x()).shape == (2, 3)  # a random mask: the mode is what matters here
    model.eval()
    _same(compiled, model, _x())
    assert _entries(compiled) == 2


def test_forward_patched_onto_an_instance():
    model = Block()
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model.act.forward = lambda x: x - 100.0
    _same(compiled, model, _x())
    del model.act.forward
    _same(compiled, model, _x())


def test_forward_patched_onto_a_class():
    class Doubler(nn.Module):
        def forward(self, x):
            return x * 2.0

    model = nn.Sequential(nn.Linear(3, 3, rng=0), Doubler(), Doubler())
    compiled = _compiled(model)
    _same(compiled, model, _x())
    Doubler.forward = lambda self, x: x * 3.0  # a class attribute: checked on every call
    _same(compiled, model, _x())
    assert _entries(compiled) == 2


def test_two_instances_alternate():
    first, second = Block(2.0), Block(5.0)
    second.act.forward = lambda x: -x
    compiled_first, compiled_second = _compiled(first), ac.compile(second, backend=BACKEND)
    for _ in range(3):
        _same(compiled_first, first, _x())
        _same(compiled_second, second, _x())


def test_registry_replaced_by_a_plain_dict():
    model = nn.Sequential(nn.Linear(3, 3, rng=0), nn.ReLU())
    compiled = _compiled(model)
    _same(compiled, model, _x())
    model._modules = dict(model._modules)  # a plain dict: not covered by the version, still checked
    _same(compiled, model, _x())
    dict.__setitem__(model._modules, "1", nn.Tanh())
    _same(compiled, model, _x())


def test_module_guard_source_checks_the_tree_once():
    model = Block()
    compiled = _compiled(model)
    compiled(_x())
    source = compiled._compiled_call.entries[0].guards
    assert "def tree_0(module):" in source
    assert "____tree_0.check(module)" in source
    assert "___Linear.forward is " in source  # class facts read on the class, not the instance


def test_state_version_moves_on_every_kind_of_change():
    model = Block()
    version = nn.modules.state_version
    steps = [lambda: setattr(model, "scale", 4.0), lambda: model.train(False),
             lambda: model._modules.__setitem__("act", nn.Tanh()),
             lambda: model.register_buffer("other", np.ones(1)),
             lambda: model.fc.register_forward_pre_hook(lambda m, a: None).remove(),
             lambda: delattr(model, "other")]
    for step in steps:
        before = version()
        step()
        assert version() > before


# -- Parameter inputs as plain views ------------------------------------------------------------


class Returns(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = Parameter(np.arange(6.0).reshape(2, 3))

    def forward(self, which: int):
        if which == 0:
            return self.weight
        if which == 1:
            return self.weight.T
        return self.weight + 1.0


@pytest.mark.parametrize("which", [0, 1, 2])
def test_parameters_returned_keep_their_identity_and_type(which):
    model = Returns()
    compiled = _compiled(model)
    expected, actual = model(which), compiled(which)
    assert type(actual) is type(expected)
    np.testing.assert_array_equal(actual, expected)
    if which == 0:
        assert actual is model.weight
    else:
        assert np.shares_memory(actual, model.weight) == np.shares_memory(expected, model.weight)


# -- wrong inputs: the same messages ------------------------------------------------------------


def tiny(x, y):
    return x * y + 1.0


def test_guards_reject_dtype_and_shape_with_the_same_messages():
    compiled = ac.compile(tiny, backend=BACKEND, dynamic=False)
    x, y = np.ones(8), np.ones(8)
    compiled(x, y)
    guard = compiled.entries[0].guard
    assert guard.failures((x.astype(np.float32), y), {}) == [
        "array 'x' dtype mismatch. expected float64, actual float32"]
    assert guard.failures((x, np.ones(9)), {}) == [
        "array 'y' size mismatch at index 0. expected 8, actual 9"]
    with ac.config.patch(error_on_recompile=True):
        with pytest.raises(RecompileError, match="array 'x' dtype mismatch"):
            compiled(x.astype(np.float32), y)


def test_stale_floating_point_flags_change_nothing():
    compiled = ac.compile(tiny, backend="numba")
    x = np.linspace(0.0, 1.0, 8)
    compiled(x, x)
    with np.errstate(all="ignore"):
        np.array([1e308]) * 10.0  # leaves the overflow flag set (ignored: NumPy keeps it)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(compiled(x, x), tiny(x, x))
        np.testing.assert_array_equal(compiled(x, x), tiny(x, x))
    assert len(compiled.entries) == 1


# -- compile time ------------------------------------------------------------------------------


def test_compile_time_includes_the_numba_jit_phase():
    def kernel(x):
        return np.sqrt(x) * 3.0 - x

    compiled = ac.compile(kernel, backend="numba")
    with ac.config.patch(persistent_cache=False):  # compiled here, not loaded
        compiled(np.linspace(0.0, 4.0, 16))
    entry = compiled.entries[0]
    assert {"capture", "guards", "lower", "run_code", "setup", "numba_jit"} <= set(entry.phases)
    assert all(seconds >= 0.0 for seconds in entry.phases.values())
    assert entry.compile_time >= sum(entry.phases.values()) - 1e-9
    assert entry.first_call_time >= entry.compile_time
    compiled(np.linspace(0.0, 4.0, 16))
    assert entry.phases["numba_jit"] == compiled.entries[0].phases["numba_jit"]  # first call only
