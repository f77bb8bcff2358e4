"""The workloads of ``benchmarks/workloads.py`` written for the peers: JAX and PyTorch.

Each formulation computes what the NumPy function computes, op for op, in the peer's own array
API (no fused library kernels such as ``torch.softmax``), so the peer's compiler gets the same
program astcompiler gets. The worker checks every result against NumPy's before timing it.
The modules are passed in, so importing this file imports neither peer.
"""

from __future__ import annotations

from typing import Any, Callable

NAMES = ("pointwise", "transcendental", "softmax", "layernorm", "mlp", "jacobi", "row_stats",
         "tiny", "mlp_step", "layernorm_step")  # the workloads both peers have a formulation for


def jax_formulations(jnp: Any) -> dict[str, Callable]:
    """Workload name -> function of ``jax.numpy`` arrays (to be wrapped in ``jax.jit``)."""

    def pointwise(x, y, z):
        return 2.0 * x + 3.0 * y - 0.5 * z + x * y

    def transcendental(x, y):
        return jnp.exp(jnp.sin(x)) * jnp.sqrt(jnp.abs(y))

    def softmax(x):
        m = jnp.max(x, axis=1, keepdims=True)
        e = jnp.exp(x - m)
        return e / jnp.sum(e, axis=1, keepdims=True)

    def layernorm(x, weight, bias):
        mean = jnp.mean(x, axis=1, keepdims=True)
        centered = x - mean
        var = jnp.mean(centered * centered, axis=1, keepdims=True)
        return centered / jnp.sqrt(var + 1e-5) * weight + bias

    def mlp(x, w1, b1, w2, b2):
        h = jnp.maximum(x @ w1 + b1, 0.0)
        return h @ w2 + b2

    def jacobi(u):
        interior = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return u.at[1:-1, 1:-1].set(interior)

    def row_stats(x):
        return jnp.mean(x, axis=1), jnp.var(x, axis=1), jnp.argmax(x, axis=1)

    def tiny(x, y):
        return x * y + 1.0

    import jax
    from training import jax_steps

    return {"pointwise": pointwise, "transcendental": transcendental, "softmax": softmax,
            "layernorm": layernorm, "mlp": mlp, "jacobi": jacobi, "row_stats": row_stats,
            "tiny": tiny, **jax_steps(jax, jnp)}


def torch_formulations(torch: Any) -> dict[str, Callable]:
    """Workload name -> function of ``torch`` tensors (to be wrapped in ``torch.compile``)."""

    def pointwise(x, y, z):
        return 2.0 * x + 3.0 * y - 0.5 * z + x * y

    def transcendental(x, y):
        return torch.exp(torch.sin(x)) * torch.sqrt(torch.abs(y))

    def softmax(x):
        m = x.amax(dim=1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=1, keepdim=True)

    def layernorm(x, weight, bias):
        mean = x.mean(dim=1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=1, keepdim=True)
        return centered / torch.sqrt(var + 1e-5) * weight + bias

    def mlp(x, w1, b1, w2, b2):
        h = torch.clamp_min(x @ w1 + b1, 0.0)
        return h @ w2 + b2

    def jacobi(u):
        out = u.clone()
        out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return out

    def row_stats(x):
        return x.mean(dim=1), x.var(dim=1, correction=0), x.argmax(dim=1)

    def tiny(x, y):
        return x * y + 1.0

    from training import torch_steps

    return {"pointwise": pointwise, "transcendental": transcendental, "softmax": softmax,
            "layernorm": layernorm, "mlp": mlp, "jacobi": jacobi, "row_stats": row_stats,
            "tiny": tiny, **torch_steps(torch)}
