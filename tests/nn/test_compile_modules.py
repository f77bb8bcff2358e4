"""Compiling ac.nn modules: hooks in the graph, parameters as inputs, guards on what was read."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter
from tests.helpers import counted

nn = ac.nn
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))


class ToyModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8, rng=1)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 2, rng=2)
        self.multiplier = 2.0

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.multiplier


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_hooks_on_every_submodule_record_the_same_activations(backend):
    eager_model, compiled_model = ToyModel(), ToyModel()
    records = {"eager": [], "compiled": []}
    for key, model in (("eager", eager_model), ("compiled", compiled_model)):
        for sub in model.children():
            sub.register_forward_hook(lambda mod, args, out, key=key: records[key].append(out))
    counter, backend_fn = counted(backend)
    optimized = ac.compile(compiled_model, backend=backend_fn, fullgraph=True)
    for _ in range(3):
        np.testing.assert_allclose(optimized(X), eager_model(X))
    assert counter.frame_count == 1
    assert len(records["compiled"]) == len(records["eager"]) == 9
    for a, b in zip(records["compiled"], records["eager"]):
        np.testing.assert_allclose(a, b)


def test_optimized_module_shares_parameters_and_state_dict():
    model = ToyModel()
    optimized = ac.compile(model, backend="eager")
    assert optimized._orig_mod is model
    assert optimized.fc1.weight is model.fc1.weight
    assert list(optimized.state_dict()) == list(model.state_dict())


def test_parameters_are_inputs_and_instances_share_an_entry():
    counter, backend = counted()
    a, b = ToyModel(), ToyModel()
    fa, fb = ac.compile(a, backend=backend), ac.compile(b, backend=backend)
    fa(X)
    a.fc1.weight[0, 0] += 3.0  # in place: the next call sees it, no recompile
    np.testing.assert_allclose(fa(X), a(X))
    np.testing.assert_allclose(fb(X), b(X))
    assert counter.frame_count == 1


def test_module_attributes_and_monkeypatched_forward_are_guarded():
    counter, backend = counted()
    model = ToyModel()
    compiled = ac.compile(model, backend=backend)
    compiled(X)
    model.multiplier = 3.0
    np.testing.assert_allclose(compiled(X), model(X))
    model.forward = lambda x: x * 0.0
    np.testing.assert_allclose(compiled(X), np.zeros_like(X))
    assert counter.frame_count == 3


class WithDropout(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4, rng=3)
        self.drop = nn.Dropout(0.5, rng=0)

    def forward(self, x):
        return self.fc(x) if not self.training else self.fc(x) * 0.5


def test_train_eval_toggled_twenty_times_gives_two_frames():
    counter, backend = counted()
    model = WithDropout()
    compiled = ac.compile(model, backend=backend)
    for _ in range(10):
        model.train()
        np.testing.assert_allclose(compiled(X), model(X))
        model.eval()
        np.testing.assert_allclose(compiled(X), model(X))
    assert counter.frame_count == 2


def test_parameter_shapes_are_static_by_default():
    counter = CompileCounter()

    def run(mod, x):
        return mod(x)

    compiled = ac.compile(run, backend=counter)
    for n in (3, 10, 11, 15, 15):
        lin = nn.Linear(n, 2, rng=0)
        compiled(lin, np.ones((2, n)))
    assert counter.frame_count == 4


def test_adding_or_removing_a_hook_recompiles():
    counter, backend = counted()
    model = ToyModel()
    compiled = ac.compile(model, backend=backend)
    compiled(X)
    handle = model.fc2.register_forward_hook(lambda m, a, out: out * 0.0)
    np.testing.assert_allclose(compiled(X), np.zeros((3, 2)))
    handle.remove()
    np.testing.assert_allclose(compiled(X), model(X))
    assert counter.frame_count == 3  # any hook change moves the global hook-version counter


def test_per_dictionary_hook_guards_name_the_dictionary():
    model = ToyModel()
    with ac.config.patch(skip_nnmodule_hook_guards=False):
        compiled = ac.compile(model, backend="eager")
        compiled(X)
        model.fc1.register_forward_hook(lambda m, a, out: None)
        compiled(X)
    entries = ac.nn.compile_support.compiled_module_call({"backend": "eager", "fullgraph": False,
                                                          "dynamic": None}, ToyModel).entries
    assert len(entries) >= 2
    failures = entries[0].guard.failures((model, X), {})
    assert any("forward_hooks" in f for f in failures)


def test_state_dict_inside_compiled_code_runs_eagerly_with_one_warning():
    model = ToyModel()
    fired = []
    model.register_state_dict_post_hook(lambda mod, state, prefix, local: fired.append(1))

    def run(mod, x):
        state = mod.state_dict()
        return mod(x) * len(state)

    compiled = ac.compile(run, backend="eager")
    with pytest.warns(RuntimeWarning, match="docs/modules.md"):
        out = compiled(model, X)
    np.testing.assert_allclose(out, run(model, X))
    assert len(fired) == 2  # the compiled call and the eager reference both ran the hook


def test_reference_nonstrict_trace_example_with_a_module():
    @ac.nonstrict_trace
    def traced_forward(model, x):
        ac.graph_break()
        return model(x) + x

    class MyModule(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = nn.Linear(10, 10, rng=4)

        def forward(self, x):
            return traced_forward(self.inner, x)

    model = MyModule()
    x = RNG.standard_normal((10, 10))
    counter, backend = counted("aot_eager")
    optimized = ac.compile(model, backend=backend, fullgraph=True)
    np.testing.assert_allclose(optimized(x), model(x))
    assert counter.frame_count == 1
    model.inner.weight[0, 0] += 1.0  # parameters are inputs of the traced call
    np.testing.assert_allclose(optimized(x), model(x))
    assert counter.frame_count == 1


def test_module_compile_in_place():
    model = ToyModel()
    expected = model(X)
    model.compile(backend="eager")
    np.testing.assert_allclose(model(X), expected)


def test_show_and_explain_accept_modules(capsys):
    model = ToyModel()
    optimized = ac.compile(model, backend="eager")
    optimized(X)
    ac.show(optimized)
    assert "module_call" in capsys.readouterr().out
    for target in (optimized, model):
        report = ac.explain(target)(X)
        assert report.graph_count == 1 and report.op_count > 0


def test_each_module_class_has_its_own_cache_and_recompile_limit():
    """torch.compile keeps one cache per ``forward``: nine module classes compiled under a
    recompile limit of 8 all compile (none runs eagerly), each class in its own cache, and
    two instances of one class share an entry."""
    classes = [type(f"Scale{k}", (ac.nn.Module,), {"forward": lambda self, x, k=k: x * k})
               for k in range(9)]
    x = np.arange(3.0)
    with ac.config.patch(recompile_limit=8):
        for cls in classes:
            first, second = ac.compile(cls(), backend="eager"), ac.compile(cls(), backend="eager")
            np.testing.assert_array_equal(first(x), cls()(x))
            np.testing.assert_array_equal(second(x), cls()(x))
    for cls in classes:
        compiled = ac.nn.compile_support.compiled_module_call(
            {"backend": "eager", "fullgraph": False, "dynamic": None}, cls)
        assert len(compiled.entries) == 1


class Halver(ac.nn.Module):
    def forward(self, x):
        return x / 2


def test_recompile_limit_warning_names_the_modules_forward():
    module = ac.compile(Halver(), backend="eager", dynamic=False)
    with ac.config.patch(recompile_limit=1):
        module(np.ones(2))
        with pytest.warns(RuntimeWarning, match=r"hit config.recompile_limit \(1\)") as record:
            np.testing.assert_array_equal(module(np.ones(3)), np.full(3, 0.5))
    line = Halver.forward.__code__.co_firstlineno
    assert str(record[0].message).startswith(
        f"astcompiler: Halver.forward (test_compile_modules.py:{line}) hit")
