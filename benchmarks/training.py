"""Training-step workloads: one step (the loss and its gradients) of the MLP and of a layernorm.

Each step returns a flat tuple ``(loss, grad, grad, ...)``. The NumPy column is a hand-written
forward + backward pass (``*_step_numpy``); astcompiler compiles ``ac.value_and_grad`` of the plain
loss (``*_loss``), the peers get ``jax.jit(jax.value_and_grad(loss))`` and ``torch.compile`` of a
step that calls ``.backward()`` (``jax_steps``, ``torch_steps``). Same shapes as ``workloads.py``'s
``mlp`` and ``layernorm``, plus a target ``y``. Importing this module imports neither numba nor a
peer.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

EPS = 1e-5
MLP_PARAMS = (1, 2, 3, 4)  # mlp_loss(x, w1, b1, w2, b2, y): the gradients of w1, b1, w2, b2
LAYERNORM_PARAMS = (0, 1, 2)  # layernorm_loss(x, weight, bias, y): those of x, weight, bias


# -- the losses (astcompiler's input, unchanged NumPy) -------------------------------------------


def mlp_loss(x, w1, b1, w2, b2, y):
    h = np.maximum(x @ w1 + b1, 0.0)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


def layernorm_loss(x, weight, bias, y):
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    out = centered / np.sqrt(var + EPS) * weight + bias
    return np.mean((out - y) ** 2)


# -- hand-written NumPy forward + backward (the NumPy column) ------------------------------------


def mlp_step_numpy(x, w1, b1, w2, b2, y):
    pre = x @ w1 + b1
    h = np.maximum(pre, 0.0)
    diff = h @ w2 + b2 - y
    loss = np.mean(diff * diff)
    d_out = diff * np.float32(2.0 / diff.size)
    d_h = (d_out @ w2.T) * (pre > 0)
    return loss, x.T @ d_h, d_h.sum(axis=0), h.T @ d_out, d_out.sum(axis=0)


def layernorm_step_numpy(x, weight, bias, y):
    cols = x.shape[1]
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(var + np.float32(EPS))
    normed = centered * inv
    diff = normed * weight + bias - y
    loss = np.mean(diff * diff)
    d_out = diff * np.float32(2.0 / diff.size)
    d_normed = d_out * weight
    d_x = inv * (d_normed - d_normed.sum(axis=1, keepdims=True) / np.float32(cols)
                 - normed * (d_normed * normed).sum(axis=1, keepdims=True) / np.float32(cols))
    return loss, d_x, (d_out * normed).sum(axis=0), d_out.sum(axis=0)


# -- inputs ---------------------------------------------------------------------------------------


def mlp_step_inputs(rng: np.random.Generator, quick: bool) -> tuple:
    from workloads import mlp_inputs

    args = mlp_inputs(rng, quick)
    return args + (rng.uniform(-1, 1, (args[0].shape[0], 10)).astype(np.float32),)


def layernorm_step_inputs(rng: np.random.Generator, quick: bool) -> tuple:
    from workloads import layernorm_inputs

    args = layernorm_inputs(rng, quick)
    return args + (rng.uniform(-1, 1, args[0].shape).astype(np.float32),)


# -- astcompiler and the peers --------------------------------------------------------------------


def ac_step(ac: Any, loss: Callable, argnums: tuple) -> Callable:
    """``ac.compile(ac.value_and_grad(loss))``, its result flattened to ``(loss, grad, ...)``."""
    compiled = ac.compile(ac.value_and_grad(loss, argnums=argnums))

    def step(*args: Any) -> tuple:
        value, grads = compiled(*args)
        return (value,) + tuple(grads)
    step.compiled = compiled  # for ac.show(step.compiled)
    return step


def jax_steps(jax: Any, jnp: Any) -> dict[str, Callable]:
    """Workload name -> ``value_and_grad`` of the loss in ``jax.numpy`` (to be ``jax.jit``-ed)."""

    def mlp(x, w1, b1, w2, b2, y):
        h = jnp.maximum(x @ w1 + b1, 0.0)
        return jnp.mean((h @ w2 + b2 - y) ** 2)

    def layernorm(x, weight, bias, y):
        mean = jnp.mean(x, axis=1, keepdims=True)
        centered = x - mean
        var = jnp.mean(centered * centered, axis=1, keepdims=True)
        return jnp.mean((centered / jnp.sqrt(var + EPS) * weight + bias - y) ** 2)

    def flat(loss: Callable, argnums: tuple) -> Callable:
        value_and_grad = jax.value_and_grad(loss, argnums=argnums)

        def step(*args: Any) -> tuple:
            value, grads = value_and_grad(*args)
            return (value,) + tuple(grads)
        return step
    return {"mlp_step": flat(mlp, MLP_PARAMS), "layernorm_step": flat(layernorm, LAYERNORM_PARAMS)}


def torch_steps(torch: Any) -> dict[str, Callable]:
    """Workload name -> a step of ``torch`` tensors calling ``.backward()`` (to be compiled)."""

    def mlp(x, w1, b1, w2, b2, y):
        h = torch.clamp_min(x @ w1 + b1, 0.0)
        return torch.mean((h @ w2 + b2 - y) ** 2)

    def layernorm(x, weight, bias, y):
        mean = x.mean(dim=1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=1, keepdim=True)
        return torch.mean((centered / torch.sqrt(var + EPS) * weight + bias - y) ** 2)

    def backward_step(loss: Callable, argnums: tuple) -> Callable:
        def step(*args: Any) -> tuple:
            args = [a.detach().requires_grad_(i in argnums) for i, a in enumerate(args)]
            value = loss(*args)
            value.backward()
            return (value.detach(),) + tuple(args[i].grad for i in argnums)
        return step
    return {"mlp_step": backward_step(mlp, MLP_PARAMS),
            "layernorm_step": backward_step(layernorm, LAYERNORM_PARAMS)}
