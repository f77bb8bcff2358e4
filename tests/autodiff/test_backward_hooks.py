"""Module backward hooks under ``ac.grad``: ``register_full_backward_hook``,
``register_full_backward_pre_hook`` and the global variants. They fire after the whole backward
pass, in the order a backward pass reaches the modules, with the cotangents of each module's
outputs and inputs; registering or removing one after compile is seen on the next call."""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.nn.modules.module import (register_module_full_backward_hook,
                                           register_module_full_backward_pre_hook)
from astcompiler.testing import CompileCounter

from .fd import numeric_grad

RNG = np.random.default_rng(3)
X = RNG.standard_normal((5, 3))
BACKENDS = [None, "eager", "numba"]  # None: ac.grad called as is


def gradient(fn, backend, argnums=0, value=False):
    transform = ac.value_and_grad if value else ac.grad
    g = transform(fn, argnums=argnums)
    return g if backend is None else ac.compile(g, backend=backend)


def mlp():
    return ac.nn.Sequential(ac.nn.Linear(3, 4), ac.nn.Tanh(), ac.nn.Linear(4, 1))


def sq_loss(model, x):
    return np.sum(model(x) ** 2)


def recorder(log, name):
    def pre(module, grad_output):
        log.append(("pre", name, grad_output))

    def post(module, grad_input, grad_output):
        log.append(("post", name, grad_input, grad_output))
    return pre, post


@pytest.mark.parametrize("backend", BACKENDS)
def test_hook_gets_the_cotangents_of_outputs_and_inputs(backend):
    lin = ac.nn.Linear(3, 2)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((m, gi, go)))
    x = X.copy()
    grads = gradient(sq_loss, backend, argnums=(0, 1))(lin, x)
    [(module, grad_input, grad_output)] = seen
    assert module is lin
    y = x @ lin.weight.T + lin.bias
    assert type(grad_output) is tuple and type(grad_input) is tuple
    np.testing.assert_allclose(grad_output[0], 2 * y, rtol=1e-12)
    np.testing.assert_allclose(grad_input[0], 2 * y @ lin.weight, rtol=1e-12)
    np.testing.assert_allclose(grad_input[0], numeric_grad(sq_loss, [lin, x], 1), atol=1e-6)
    np.testing.assert_allclose(grad_input[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_input_is_the_module_part_only_and_none_without_gradient(backend):
    lin = ac.nn.Linear(3, 2)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(gi))

    def loss(m, x):  # x also used outside the module: grad_input is the module's part
        return np.sum(m(x)) + np.sum(x ** 2)

    gradient(loss, backend, argnums=(0, 1))(lin, X)
    np.testing.assert_allclose(seen[0][0], np.ones((5, 2)) @ lin.weight, rtol=1e-12)
    gradient(loss, backend)(lin, X)  # x is not differentiated: no gradient for it (torch: None)
    assert seen[1] == (None,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_order_for_nested_modules_pre_hooks_then_hooks(backend):
    class Net(ac.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = mlp()

        def forward(self, x):
            return self.body(x)

    net = Net()
    log = []
    modules = {"net": net, "lin0": net.body[0], "tanh": net.body[1], "lin2": net.body[2]}
    for name, module in modules.items():
        pre, post = recorder(log, name)
        module.register_full_backward_pre_hook(pre)
        module.register_full_backward_hook(post)
    gradient(sq_loss, backend)(net, X)
    assert [(e[0], e[1]) for e in log] == [
        ("pre", "net"), ("pre", "lin2"), ("post", "lin2"), ("pre", "tanh"), ("post", "tanh"),
        ("pre", "lin0"), ("post", "lin0"), ("post", "net")]
    by = {(e[0], e[1]): e for e in log}
    np.testing.assert_allclose(by[("pre", "tanh")][2][0], by[("post", "lin2")][2][0])
    t = np.tanh(X @ net.body[0].weight.T + net.body[0].bias)
    np.testing.assert_allclose(by[("post", "tanh")][2][0],
                               by[("pre", "tanh")][2][0] * (1 - t ** 2), rtol=1e-12)
    assert by[("post", "lin0")][2] == (None,)


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_compiled_fires_like_eager_once_per_call_and_gradients_unchanged(backend):
    model = mlp()
    expected_value, expected = gradient(sq_loss, backend, value=True)(model, X)  # no hooks yet
    eager_log, compiled_log = [], []
    for i, module in enumerate(model):
        module.register_full_backward_hook(
            lambda m, gi, go, i=i: (eager_log if log_to[0] == "e" else compiled_log).append(
                (i, [None if g is None else g.copy() for g in gi], [g.copy() for g in go])))
    log_to = ["e"]
    ac.value_and_grad(sq_loss)(model, X)
    log_to[0] = "c"
    step = gradient(sq_loss, backend, value=True)
    for _ in range(2):
        compiled_log.clear()
        value, grads = step(model, X)
        assert value == expected_value
        for name in expected:
            np.testing.assert_allclose(grads[name], expected[name], rtol=1e-12)
        assert [e[0] for e in compiled_log] == [e[0] for e in eager_log] == [2, 1, 0]
        for (_, gi, go), (_, gi_e, go_e) in zip(compiled_log, eager_log):
            for a, b in zip(gi + go, gi_e + go_e):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert len(step.entries) == 1


def test_removal_and_registration_after_compile_are_seen():
    lin = ac.nn.Linear(3, 2)
    counter = CompileCounter()
    step = ac.compile(ac.grad(sq_loss), backend=counter)
    calls = []
    step(lin, X)
    assert counter.frame_count == 1
    handle = lin.register_full_backward_hook(lambda m, gi, go: calls.append(go[0].copy()))
    g = step(lin, X)  # registered after the first call: seen on the next one
    assert counter.frame_count == 2 and len(calls) == 1
    np.testing.assert_allclose(calls[0], 2 * (X @ lin.weight.T + lin.bias), rtol=1e-12)
    handle.remove()
    g2 = step(lin, X)
    assert len(calls) == 1  # removed: no stale hook
    np.testing.assert_allclose(g2["weight"], g["weight"], rtol=1e-12)
    assert counter.frame_count <= 3


def test_hooks_of_another_instance_are_not_reused():
    a, b = ac.nn.Linear(3, 2), ac.nn.Linear(3, 2)
    seen = []
    a.register_full_backward_hook(lambda m, gi, go: seen.append(("a", m)))
    b.register_full_backward_pre_hook(lambda m, go: seen.append(("b", m)))
    step = ac.compile(ac.grad(sq_loss), backend="eager")
    step(a, X)
    step(b, X)
    assert seen == [("a", a), ("b", b)]


@pytest.mark.parametrize("backend", [None, "numba"])
def test_global_hooks_fire_for_every_module_before_its_own(backend):
    model = ac.nn.Sequential(ac.nn.Linear(3, 2), ac.nn.Tanh())
    log = []
    model[0].register_full_backward_hook(lambda m, gi, go: log.append(("own", type(m).__name__)))
    handles = [register_module_full_backward_pre_hook(
                   lambda m, go: log.append(("gpre", type(m).__name__))),
               register_module_full_backward_hook(
                   lambda m, gi, go: log.append(("global", type(m).__name__)))]
    try:
        gradient(sq_loss, backend)(model, X)
    finally:
        for handle in handles:
            handle.remove()
    assert log == [("gpre", "Sequential"), ("gpre", "Tanh"), ("global", "Tanh"),
                   ("gpre", "Linear"), ("global", "Linear"), ("own", "Linear"),
                   ("global", "Sequential")]
    log.clear()
    gradient(sq_loss, backend)(model, X)  # removed: only the module's own hook
    assert log == [("own", "Linear")]


@pytest.mark.parametrize("backend", [None, "numba"])
def test_a_hook_returning_a_gradient_is_a_clear_error(backend):
    lin = ac.nn.Linear(3, 2)
    calls = []

    def replace(module, grad_input, grad_output):
        calls.append(1)
        return grad_input

    lin.register_full_backward_hook(replace)
    with pytest.raises(RuntimeError, match=r"backward hook .*replace returned a value: under "
                                           r"ac\.grad the hooks run after the whole backward"):
        gradient(sq_loss, backend)(lin, X)
    assert calls == [1]


def test_no_backward_pass_no_hooks():
    lin = ac.nn.Linear(3, 2)
    calls = []
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    lin.register_full_backward_pre_hook(lambda m, go: calls.append(1))
    assert ac.compile(sq_loss, backend="eager")(lin, X) == sq_loss(lin, X)
    assert calls == []


def test_module_without_gradient_runs_no_hooks():
    used, unused = ac.nn.Linear(3, 1), ac.nn.Linear(3, 1)
    calls = []
    unused.register_full_backward_hook(lambda m, gi, go: calls.append(1))

    def loss(pair, x):
        a, b = pair
        b(x)  # its output is not used: no gradient reaches it (torch runs no hook either)
        return np.sum(a(x))

    ac.grad(loss)(ac.nn.ModuleList([used, unused]), X)
    assert calls == []


@pytest.mark.parametrize("backend", [None, "numba"])
def test_inputs_are_taken_after_forward_pre_hooks_and_a_shared_module_fires_per_call(backend):
    lin = ac.nn.Linear(3, 3)
    seen = []
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2.0,))
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0], go[0])))

    def loss(m, x):
        return np.sum(m(m(x)))

    grads = gradient(loss, backend, argnums=(0, 1))(lin, X)
    (gi_outer, go_outer), (gi_inner, go_inner) = seen  # the second call's backward comes first
    np.testing.assert_allclose(go_outer, np.ones((5, 3)))
    np.testing.assert_allclose(gi_outer, go_outer @ lin.weight, rtol=1e-12)  # w.r.t. 2 * input
    np.testing.assert_allclose(go_inner, 2.0 * gi_outer, rtol=1e-12)
    np.testing.assert_allclose(2.0 * gi_inner, grads[1], rtol=1e-12)


def test_hooked_module_inside_nonstrict_trace_is_a_clear_error():
    @ac.nonstrict_trace
    def squashed(lin, x):
        return np.tanh(lin(x))

    lin = ac.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(ac.exc.Unsupported, match="a Linear with backward hooks is called inside "
                                                 "a nonstrict_trace function"):
        ac.compile(ac.grad(lambda m, x: np.sum(squashed(m, x))), backend="eager")(lin, X)
