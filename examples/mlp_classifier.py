"""A small MLP classifier built from ``astcompiler.nn`` modules, run eagerly on random data.

No training: the weights are random (seeded), the point is the module machinery. The model is
built, printed, put in eval mode, run on a random batch, and its predictions are printed; a
forward hook reports the hidden activations' statistics, and a state_dict round trip checks that
a second model loaded from the first predicts the same. Run with
``.venv/bin/python examples/mlp_classifier.py``.
"""

from __future__ import annotations

import numpy as np

import astcompiler as ac

from astcompiler import nn


class MLPClassifier(nn.Module):
    """Linear -> LayerNorm -> GELU -> Dropout, ``depth`` times, then a linear head and softmax."""

    def __init__(self, n_features: int, n_hidden: int, n_classes: int, depth: int = 2,
                 p_drop: float = 0.1, seed: int = 0) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        blocks = []
        width = n_features
        for _ in range(depth):
            blocks += [nn.Linear(width, n_hidden, rng=rng), nn.LayerNorm(n_hidden), nn.GELU(),
                       nn.Dropout(p_drop, rng=rng)]
            width = n_hidden
        self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(width, n_classes, rng=rng)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.softmax(self.head(self.body(x)))


def main() -> None:
    classes = ["cat", "dog", "bird"]
    model = MLPClassifier(n_features=8, n_hidden=16, n_classes=len(classes)).eval()
    print(model)
    n_params = sum(p.size for p in model.parameters())
    print(f"{n_params} parameters in {len(list(model.named_parameters()))} arrays")

    def report(module: nn.Module, args: tuple, output: np.ndarray) -> None:
        print(f"  hidden activations: mean {output.mean():+.3f}, std {output.std():.3f}")

    x = np.random.default_rng(1).standard_normal((6, 8))
    with model.body[-2].register_forward_hook(report):  # the last GELU
        probs = model(x)

    for i, row in enumerate(probs):
        label = classes[int(row.argmax())]
        print(f"sample {i}: {label:<4}  p = " + " ".join(f"{p:.3f}" for p in row))

    clone = MLPClassifier(n_features=8, n_hidden=16, n_classes=len(classes), seed=123).eval()
    clone.load_state_dict(model.state_dict())
    np.testing.assert_allclose(clone(x), probs)
    print("a second model loaded from state_dict predicts the same")

    compiled = ac.compile(model, fullgraph=True)  # hooks, layers and forward: one graph
    np.testing.assert_allclose(compiled(x), probs, rtol=1e-10)
    means: list = []
    record = model.body[-2].register_forward_hook(lambda m, a, out: means.append(out.mean()))
    with record:  # a new hook: seen by the compiled call, its append replayed on every call
        for _ in range(3):
            np.testing.assert_allclose(compiled(x), probs, rtol=1e-10)
    print(f"the compiled model predicts the same; its hook recorded {len(means)} activation "
          f"means ({float(means[-1]):+.3f})")


if __name__ == "__main__":
    main()
