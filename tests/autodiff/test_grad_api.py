"""``ac.grad`` / ``ac.value_and_grad`` / ``ac.vjp``: the API, errors, composition with
``ac.compile`` (one entry, guards, dynamic shapes), modules and a training loop."""

from __future__ import annotations

import io

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.testing import CompileCounter

from .fd import assert_gradients, numeric_grad

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 3))
W = RNG.standard_normal((3, 2))


def loss(x, w):
    return np.sum(np.tanh(x @ w) ** 2) + 0.5 * np.mean(np.sin(x))


def test_grad_matches_finite_differences():
    assert_gradients(loss, [X, W], ac.grad(loss, argnums=(0, 1))(X, W))


def test_argnums_int_and_negative():
    g = ac.grad(loss, argnums=1)(X, W)
    np.testing.assert_allclose(g, numeric_grad(loss, [X, W], 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ac.grad(loss, argnums=-1)(X, W), g)


def test_value_and_grad_value_is_the_plain_value():
    value, grads = ac.value_and_grad(loss, argnums=(0, 1))(X, W)
    assert value == loss(X, W) and type(value) is type(loss(X, W))
    assert_gradients(loss, [X, W], grads)


def with_aux(x, w):
    y = x @ w
    return np.sum(y * y), {"y": y, "n": 3}


def test_has_aux():
    grads, aux = ac.grad(with_aux, has_aux=True)(X, W)
    np.testing.assert_allclose(aux["y"], X @ W)
    assert aux["n"] == 3
    np.testing.assert_allclose(grads, numeric_grad(lambda x, w: with_aux(x, w)[0], [X, W], 0),
                               rtol=1e-6, atol=1e-6)
    (value, aux2), g2 = ac.value_and_grad(with_aux, has_aux=True)(X, W)
    assert value == with_aux(X, W)[0]
    np.testing.assert_array_equal(g2, grads)


def tree_loss(params, x):
    return np.sum((x @ params["w"] + params["b"]) ** 2) + np.sum(params["extra"][0] ** 3)


def test_pytree_argument():
    params = {"w": W, "b": RNG.standard_normal(2), "extra": [RNG.standard_normal(4)]}
    grads = ac.grad(tree_loss)(params, X)
    assert set(grads) == {"w", "b", "extra"} and isinstance(grads["extra"], list)
    for key, g in (("w", grads["w"]), ("b", grads["b"])):
        def only(v, key=key):
            return tree_loss({**params, key: v}, X)
        np.testing.assert_allclose(g, numeric_grad(only, [params[key]], 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grads["extra"][0], 3 * params["extra"][0] ** 2)


def unused_and_f32(x, y):
    return np.sum(x * x)


def test_dtype_shape_of_primal_and_zero_gradient_for_unused():
    x = RNG.standard_normal((4,)).astype(np.float32)
    y = RNG.standard_normal((2, 2))
    gx, gy = ac.grad(unused_and_f32, argnums=(0, 1))(x, y)
    assert gx.dtype == np.float32 and gx.shape == (4,)
    np.testing.assert_allclose(gx, 2 * x, rtol=1e-6)
    assert gy.dtype == y.dtype and gy.shape == y.shape and not gy.any()


def test_same_array_twice_gets_two_gradients():
    def f(a, b):
        return np.sum((a @ b.T) ** 2)
    ga, gb = ac.grad(f, argnums=(0, 1))(X, X)
    np.testing.assert_allclose(ga, numeric_grad(lambda a: f(a, X), [X], 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gb, numeric_grad(lambda b: f(X, b), [X], 0), rtol=1e-6, atol=1e-6)


def test_vjp():
    def f(x):
        return np.sin(x) * x
    ct = RNG.standard_normal(X.shape)
    out, pull = ac.vjp(f, X)
    np.testing.assert_array_equal(out, f(X))
    (gx,) = pull(ct)
    np.testing.assert_allclose(gx, numeric_grad(lambda x: np.sum(f(x) * ct), [X], 0),
                               rtol=1e-6, atol=1e-6)


# ----- errors -------------------------------------------------------------------------------
def vector_out(x):
    return x * 2.0


def int_loss(n):
    return np.sum(n * 2.0)


def cumsum_loss(x):
    return np.sum(np.cumsum(x))  # the line the error names


def test_non_scalar_output_is_a_type_error():
    with pytest.raises(TypeError, match=r"^Gradient only defined for scalar-output functions\. "
                                        r"Output had shape: \(5, 3\)\.$"):
        ac.grad(vector_out)(X)


def test_integer_input_is_a_type_error():
    with pytest.raises(TypeError, match=r"^grad requires real- or complex-valued inputs \(input "
                                        r"dtype that is a sub-dtype of np.inexact\), but got "
                                        r"int64\."):
        ac.grad(int_loss)(np.arange(3))


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="has_aux=True requires the function to return a pair"):
        ac.grad(loss, has_aux=True)(X, W)


def test_op_without_rule_names_op_and_line():
    with pytest.raises(ac.exc.Unsupported) as info:
        ac.grad(cumsum_loss)(X)
    text = str(info.value)
    line = cumsum_loss.__code__.co_firstlineno + 1
    assert "op 'cumsum' has no derivative rule" in text
    assert f"test_grad_api.py:{line}" in text


def overwritten(x):
    y = np.exp(x)
    y[0] = 0.0  # exp's derivative needs y as it was
    return np.sum(y)


def copied_first(x):
    y = np.exp(x)
    z = y.copy()
    z[0] = 0.0
    return np.sum(z * y)


def test_write_over_a_value_the_gradient_needs():
    with pytest.raises(ac.exc.Unsupported, match=r"as they were before a later write"):
        ac.grad(overwritten)(X)
    assert_gradients(copied_first, [X], ac.grad(copied_first)(X))


def long_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(x[i] ** 2)
    return s


def test_loop_region_is_differentiated():  # over unroll_limit: a region (test_region_gradients)
    x = RNG.standard_normal((100, 2))
    assert_gradients(long_loop, [x], ac.grad(long_loop)(x))


# ----- composition with ac.compile ------------------------------------------------------------
def test_compiled_grad_is_one_entry_and_matches_eager():
    counter = CompileCounter()
    compiled = ac.compile(ac.value_and_grad(loss, argnums=(0, 1)), backend=counter)
    eager_value, eager_grads = ac.value_and_grad(loss, argnums=(0, 1))(X, W)
    for _ in range(3):
        value, grads = compiled(X, W)
    assert value == eager_value
    for g, e in zip(grads, eager_grads):
        np.testing.assert_array_equal(g, e)
    assert counter.frame_count == 1 and len(compiled.entries) == 1


def test_dynamic_shapes_and_recompiles():
    counter = CompileCounter()
    compiled = ac.compile(ac.grad(loss), backend=counter)
    for n in (5, 6, 7, 9):
        x = RNG.standard_normal((n, 3))
        np.testing.assert_allclose(compiled(x, W), ac.grad(loss)(x, W), rtol=1e-12)
    assert counter.frame_count == 2  # the second size makes dimension 0 dynamic


def train_step(x, w, lr):
    g = ac.grad(loss, argnums=1)(x, w)
    w -= lr * g
    return loss(x, w)


def test_grad_called_inside_a_compiled_function():
    compiled = ac.compile(train_step, backend="aot_eager", fullgraph=True)
    w1, w2 = W.copy(), W.copy()
    assert compiled(X, w1, 0.1) == pytest.approx(train_step(X, w2, 0.1), rel=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-12)


def test_numba_backend_fuses_forward_and_backward():
    compiled = ac.compile(ac.grad(loss, argnums=(0, 1)), backend="numba")
    assert_gradients(loss, [X, W], compiled(X, W))
    out = io.StringIO()
    ac.show(compiled, file=out)
    text = out.getvalue()
    assert "# ----- backward_code -----" in text
    assert "(backward)" in text.split("# ----- backward_code -----")[1]


# ----- modules ---------------------------------------------------------------------------------
def mse(model, x, y):
    return np.mean((model(x) - y) ** 2)


def _mlp():
    model = ac.nn.Sequential(ac.nn.Linear(3, 8), ac.nn.ReLU(), ac.nn.Linear(8, 1))
    rng = np.random.default_rng(0)
    for _, p in model.named_parameters():
        p[...] = rng.standard_normal(p.shape) * 0.5
    return model


def test_module_gradient_is_a_dict_of_parameter_gradients():
    model = _mlp()
    x, y = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 1))
    grads = ac.grad(mse)(model, x, y)
    params = dict(model.named_parameters())
    assert list(grads) == list(params)
    for name, p in params.items():
        assert grads[name].shape == p.shape and grads[name].dtype == p.dtype

        def at(value, name=name):
            saved = params[name].copy()
            params[name][...] = value
            try:
                return mse(model, x, y)
            finally:
                params[name][...] = saved
        np.testing.assert_allclose(grads[name], numeric_grad(at, [p.copy()], 0),
                                   rtol=1e-6, atol=1e-6)


def test_layernorm_buffers_and_parameters():
    norm = ac.nn.LayerNorm(4)
    x = RNG.standard_normal((3, 4))

    def f(m, x):
        return np.sum(m(x) * np.arange(4.0))
    grads = ac.grad(f)(norm, x)
    assert list(grads) == [name for name, _ in norm.named_parameters()]
    gx = ac.grad(f, argnums=1)(norm, x)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: f(norm, v), [x], 0), rtol=1e-5,
                               atol=1e-6)


def test_mlp_training_loop_reduces_loss_with_one_entry():
    model = _mlp()
    x = RNG.standard_normal((32, 3))
    y = np.sin(x.sum(axis=1, keepdims=True))
    step = ac.compile(ac.value_and_grad(mse), backend="aot_eager")
    losses = []
    for _ in range(30):
        value, grads = step(model, x, y)
        for name, p in model.named_parameters():
            p -= 0.1 * grads[name]
        losses.append(float(value))
    assert losses[-1] < 0.5 * losses[0]
    assert len(step.entries) == 1


def masked(x):
    return np.sum(x[x > 0] ** 2)


def two_arrays(x):
    return np.sum(x[np.array([0, 1]), np.array([1, 2])])


def out_of_bounds(x):
    return np.sum(x[np.array([0, 1]), np.array([2, 3])])


def test_boolean_mask_read_and_unsupported_advanced_index():
    assert_gradients(masked, [X], ac.grad(masked)(X))
    with pytest.raises(ac.exc.Unsupported, match=r"the gradient of this advanced index is not "
                                                 r"implemented .* index in steps"):
        ac.grad(two_arrays)(X)


def test_the_users_own_error_is_raised_as_in_the_plain_call():
    with pytest.raises(IndexError, match="^index 3 is out of bounds for axis 1 with size 3$"):
        out_of_bounds(X)
    with pytest.raises(IndexError, match="^index 3 is out of bounds for axis 1 with size 3$"):
        ac.grad(out_of_bounds)(X)


# ----- nonstrict_trace: differentiated through its traced subgraph (recomputed) -------------
@ac.nonstrict_trace
def squashed(lin, x):
    return np.tanh(lin(x)) * 2.0


class Net(ac.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ac.nn.Linear(3, 2)

    def forward(self, x):
        return squashed(self.lin, x).sum() + (x * x).sum()


def call_net(m, x):
    return m(x)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_nonstrict_trace_module_gradient(backend):
    net, x = Net(), RNG.standard_normal((4, 3))
    compiled = ac.compile(ac.grad(call_net, argnums=(0, 1)), backend=backend, fullgraph=True)
    g_params, g_x = compiled(net, x)
    np.testing.assert_allclose(g_x, numeric_grad(lambda v: call_net(net, v), [x], 0),
                               rtol=1e-6, atol=1e-6)
    params = dict(net.named_parameters())
    assert list(g_params) == list(params)
    for name, p in params.items():
        def at(value, p=p):
            saved = p.copy()
            p[...] = value
            try:
                return call_net(net, x)
            finally:
                p[...] = saved
        np.testing.assert_allclose(g_params[name], numeric_grad(at, [p.copy()], 0),
                                   rtol=1e-6, atol=1e-6)


def test_stances_apply_to_the_compiled_gradient():
    counter = CompileCounter()
    compiled = ac.compile(ac.grad(loss), backend=counter)
    expected = ac.grad(loss)(X, W)
    with ac.set_stance("force_eager"):  # the gradient runs eagerly (the joint graph op by op)
        np.testing.assert_array_equal(compiled(X, W), expected)
    assert counter.frame_count == 0
    np.testing.assert_array_equal(compiled(X, W), expected)
    with ac.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match="Detected recompile"):
            compiled(RNG.standard_normal((7, 3)), W)
    assert counter.frame_count == 1
