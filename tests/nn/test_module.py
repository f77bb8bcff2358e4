"""Module: registration, attribute semantics, iteration, modes, lookup, repr, compile()."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import nn
from astcompiler.nn import Parameter


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(np.ones(2))
        self.register_buffer("running", np.zeros(2))
        self.register_buffer("scratch", np.zeros(2), persistent=False)
        self.inner = nn.Linear(2, 2, rng=0)
        self.b = Parameter(np.zeros(2))

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.inner(x * self.w + self.b) + self.running


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = Block()
        self.act = nn.ReLU()
        self.second = Block()

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.second(self.act(self.first(x)))


# -- registration and attributes -------------------------------------------------------------


def test_assignment_registers_in_order() -> None:
    block = Block()
    assert list(block._parameters) == ["w", "b"]
    assert list(block._buffers) == ["running", "scratch"]
    assert list(block._modules) == ["inner"]
    assert block._non_persistent_buffers_set == {"scratch"}
    assert "w" not in block.__dict__ and block.w is block._parameters["w"]
    assert block.inner is block._modules["inner"]
    assert block.running is block._buffers["running"]


def test_eager_forward_runs() -> None:
    out = Net()(np.ones((3, 2)))
    assert out.shape == (3, 2) and type(out) is np.ndarray


def test_plain_array_to_parameter_name_is_a_type_error() -> None:
    block = Block()
    with pytest.raises(TypeError, match=r"cannot assign 'numpy.ndarray' as parameter 'w'"):
        block.w = np.zeros(2)
    block.w = None
    assert "w" in block._parameters and block.w is None
    assert [name for name, _ in block.named_parameters()] == ["b", "inner.weight", "inner.bias"]
    block.w = Parameter(np.ones(3))
    assert block.w.shape == (3,)


def test_reassignment_moves_between_registries() -> None:
    block = Block()
    block.running = np.ones(2)                    # a buffer stays a buffer
    assert block._buffers["running"][0] == 1.0
    with pytest.raises(TypeError, match="as buffer 'running'"):
        block.running = 3
    block.running = Parameter(np.ones(2))          # a Parameter takes the name over
    assert "running" in block._parameters and "running" not in block._buffers
    with pytest.raises(TypeError, match="as parameter 'b'"):
        block.b = nn.Identity()                    # a parameter name takes no module (torch)
    block.register_buffer("buf", np.zeros(1))
    block.buf = nn.Identity()                      # a module takes a buffer name over
    assert "buf" in block._modules and "buf" not in block._buffers
    with pytest.raises(TypeError, match="as child module 'buf'"):
        block.buf = np.zeros(1)
    block.buf = None
    assert block._modules["buf"] is None
    block.plain = np.zeros(2)                      # an unregistered ndarray is a plain attribute
    assert "plain" in block.__dict__
    block.plain = Parameter(np.zeros(2))
    assert "plain" in block._parameters and "plain" not in block.__dict__


def test_delattr_from_each_registry() -> None:
    block = Block()
    block.note = "x"
    for name in ("w", "scratch", "inner", "note"):
        delattr(block, name)
        assert not hasattr(block, name)
    assert "scratch" not in block._non_persistent_buffers_set
    with pytest.raises(AttributeError):
        del block.missing


def test_getattr_error_message() -> None:
    with pytest.raises(AttributeError, match="'Block' object has no attribute 'nope'"):
        Block().nope


def test_assignment_before_init_is_an_error() -> None:
    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = Parameter(np.zeros(1))

    class EarlyModule(nn.Module):
        def __init__(self) -> None:
            self.m = nn.ReLU()

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(AttributeError, match="before Module.__init__"):
        EarlyModule()


@pytest.mark.parametrize("name, error, message", [
    (1, TypeError, "parameter name should be a string. Got int"),
    ("a.b", KeyError, "contain"),
    ("", KeyError, "be empty string"),
    ("forward", KeyError, "attribute 'forward' already exists"),
])
def test_register_parameter_name_errors(name, error, message) -> None:
    with pytest.raises(error, match=message):
        nn.Module().register_parameter(name, Parameter(np.zeros(1)))


def test_register_parameter_and_buffer_type_errors() -> None:
    module = nn.Module()
    with pytest.raises(TypeError, match="object to parameter 'p'"):
        module.register_parameter("p", np.zeros(1))
    with pytest.raises(TypeError, match="object to buffer 'b'"):
        module.register_buffer("b", [1.0])
    with pytest.raises(KeyError, match="buffer name can.*contain"):
        module.register_buffer("a.b", np.zeros(1))
    module.attr = 1
    with pytest.raises(KeyError, match="attribute 'attr' already exists"):
        module.register_buffer("attr", np.zeros(1))
    module.register_buffer("none", None)
    assert module.none is None and list(module.buffers()) == []


def test_add_module_and_register_module() -> None:
    module = nn.Module()
    module.add_module("a", nn.ReLU())
    module.register_module("b", None)
    assert list(module._modules) == ["a", "b"] and module.b is None
    with pytest.raises(TypeError, match="is not a Module subclass"):
        module.add_module("c", np.zeros(1))
    with pytest.raises(KeyError, match="module name can.*contain"):
        module.add_module("c.d", nn.ReLU())
    with pytest.raises(TypeError, match="module name should be a string"):
        module.add_module(3, nn.ReLU())


def test_dir_lists_members() -> None:
    names = dir(Block())
    assert {"w", "b", "running", "inner", "forward"} <= set(names)


# -- iteration --------------------------------------------------------------------------------


def test_named_parameters_and_buffers_with_prefix() -> None:
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "first.w", "first.b", "first.inner.weight", "first.inner.bias",
        "second.w", "second.b", "second.inner.weight", "second.inner.bias"]
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.first.w"
    assert [n for n, _ in net.named_buffers()] == [
        "first.running", "first.scratch", "second.running", "second.scratch"]
    assert [n for n, _ in net.first.named_parameters(recurse=False)] == ["w", "b"]
    assert [n for n, _ in net.named_buffers(prefix="p", recurse=False)] == []
    assert len(list(net.parameters())) == 8 and len(list(net.buffers())) == 4
    assert all(type(p) is Parameter for p in net.parameters())
    assert len(list(net.parameters(recurse=False))) == 0


def test_named_modules_and_children() -> None:
    net = Net()
    assert [n for n, _ in net.named_modules()] == [
        "", "first", "first.inner", "act", "second", "second.inner"]
    assert [n for n, _ in net.named_modules(prefix="m")][:2] == ["m", "m.first"]
    assert [n for n, _ in net.named_children()] == ["first", "act", "second"]
    assert list(net.children()) == [net.first, net.act, net.second]
    assert list(net.modules())[0] is net


def test_shared_modules_and_parameters_are_yielded_once() -> None:
    shared = nn.Linear(2, 2, rng=0)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [n for n, _ in seq.named_children()] == ["0", "1"]
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    # a parameter tied across two different modules
    a, b = nn.Linear(2, 2, rng=0), nn.Linear(2, 2, rng=1)
    b.weight = a.weight
    pair = nn.Sequential(a, b)
    assert [n for n, _ in pair.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    # equal values are not duplicates: identity decides
    c = nn.Linear(2, 2, rng=0)
    assert len(list(nn.Sequential(nn.Linear(2, 2, rng=0), c).parameters())) == 4


def test_none_members_are_skipped() -> None:
    lin = nn.Linear(2, 2, bias=False, rng=0)
    lin.add_module("gone", None)
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    assert [n for n, _ in lin.named_modules()] == [""]


def test_apply_visits_children_first() -> None:
    seen = []
    Net().apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Block", "ReLU", "Linear", "Block", "Net"]


def test_train_eval_recursive() -> None:
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.first.train(False)
    assert net.training and not net.first.inner.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)


# -- lookup -----------------------------------------------------------------------------------


def test_get_submodule_parameter_buffer() -> None:
    net = Net()
    assert net.get_submodule("") is net
    assert net.get_submodule("first.inner") is net.first.inner
    assert net.get_parameter("first.inner.weight") is net.first.inner.weight
    assert net.get_buffer("second.running") is net.second.running
    with pytest.raises(AttributeError, match="Block has no attribute `nope`"):
        net.get_submodule("first.nope")
    with pytest.raises(AttributeError, match="`w` is not an nn.Module"):
        net.get_submodule("first.w")
    with pytest.raises(AttributeError, match="`running` is not an nn.Parameter"):
        net.get_parameter("first.running")
    with pytest.raises(AttributeError, match="`w` is not a buffer"):
        net.get_buffer("first.w")


# -- printing ---------------------------------------------------------------------------------


def test_repr_nested_and_extra_repr() -> None:
    class Multi(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2, bias=False, rng=0)

        def extra_repr(self) -> str:
            return "alpha=1\nbeta=2"

    assert repr(nn.Linear(3, 2, rng=0)) == "Linear(in_features=3, out_features=2, bias=True)"
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(Multi()) == ("Multi(\n  alpha=1\n  beta=2\n"
                             "  (fc): Linear(in_features=3, out_features=2, bias=False)\n)")
    net = nn.Sequential(nn.Sequential(nn.Identity()), nn.Tanh())
    assert repr(net) == ("Sequential(\n  (0): Sequential(\n    (0): Identity()\n  )\n"
                         "  (1): Tanh()\n)")


# -- forward and compile ----------------------------------------------------------------------


def test_missing_forward() -> None:
    with pytest.raises(NotImplementedError,
                       match=r'Module \[Module\] is missing the required "forward"'):
        nn.Module()(1)


def test_call_passes_args_and_kwargs() -> None:
    class Add(nn.Module):
        def forward(self, a, b=0, *, c=0):
            return a + b + c

    assert Add()(1, 2, c=3) == 6


def test_compile_stores_kwargs_and_defers_to_compile_support() -> None:
    lin = nn.Linear(2, 2, rng=0)
    assert lin._compile_kwargs is None
    assert lin.compile(backend="eager", fullgraph=True) is None
    assert lin._compile_kwargs == {"backend": "eager", "fullgraph": True}
    compiled_out = lin(np.ones(2))  # through the compiler now
    lin._compile_kwargs = None
    np.testing.assert_allclose(compiled_out, lin(np.ones(2)))
    assert lin(np.ones(2)).shape == (2,)


def test_ac_exports_nn() -> None:
    assert ac.nn is nn and "nn" in ac.__all__
    assert nn.modules.Module is nn.Module


def test_handles_do_not_keep_modules_alive() -> None:
    lin = nn.Linear(2, 2, rng=0)
    handle = lin.register_forward_hook(lambda *a: None)
    ref = weakref.ref(lin)
    del lin
    gc.collect()
    assert ref() is None
    handle.remove()  # harmless once the module is gone


def test_deepcopy_and_pickle_keep_structure_and_ties() -> None:
    import copy
    import pickle

    shared = nn.Linear(2, 2, rng=0)
    net = nn.Sequential(shared, nn.ReLU(), shared)
    net.register_buffer("steps", np.zeros(1))
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert clone[0] is clone[2] and clone[0] is not shared
        assert type(clone[0].weight) is Parameter
        assert not np.shares_memory(clone[0].weight, shared.weight)
        np.testing.assert_array_equal(clone(np.ones(2)), net(np.ones(2)))
        assert list(clone.state_dict()) == list(net.state_dict())
