"""state_dict / load_state_dict: keys, sharing, round trips, errors, hooks, extra state."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from astcompiler import nn
from astcompiler.nn import Parameter


class Model(nn.Module):
    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.register_buffer("scale", np.full(3, 2.0))
        self.register_buffer("cache", np.zeros(3), persistent=False)
        self.fc = nn.Linear(4, 3, rng=seed)
        self.norm = nn.LayerNorm(3)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.norm(self.fc(x)) * self.scale


KEYS = ["scale", "fc.weight", "fc.bias", "norm.weight", "norm.bias"]


def test_keys_order_and_metadata() -> None:
    sd = Model().state_dict()
    assert isinstance(sd, OrderedDict) and list(sd) == KEYS
    assert sd._metadata == {"": {"version": 1}, "fc": {"version": 1}, "norm": {"version": 1}}


def test_values_share_memory_as_plain_arrays() -> None:
    model = Model()
    sd = model.state_dict()
    assert all(type(v) is np.ndarray for v in sd.values())
    assert np.shares_memory(sd["fc.weight"], model.fc.weight)
    assert sd["scale"] is not model.scale and np.shares_memory(sd["scale"], model.scale)
    kept = model.state_dict(keep_vars=True)
    assert kept["fc.weight"] is model.fc.weight and kept["scale"] is model.scale


def test_prefix_and_destination() -> None:
    dest: dict = {}
    out = Model().state_dict(destination=dest, prefix="m.")
    assert out is dest and list(dest) == ["m." + k for k in KEYS]


def test_non_persistent_and_none_entries_are_left_out() -> None:
    model = Model()
    model.fc.bias = None
    sd = model.state_dict()
    assert "cache" not in sd and "fc.bias" not in sd
    model.load_state_dict(sd)  # and are not expected back


def test_round_trip_copies_in_place() -> None:
    x = np.random.default_rng(0).standard_normal((2, 4))
    source, target = Model(seed=1), Model(seed=2)
    weight, scale = target.fc.weight, target.scale
    assert not np.allclose(source(x), target(x))
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert target.fc.weight is weight and target.scale is scale
    assert not np.shares_memory(target.fc.weight, source.fc.weight)
    np.testing.assert_array_equal(target(x), source(x))


def test_load_casts_dtype_like_copy() -> None:
    model = nn.Linear(2, 2, dtype=np.float32, rng=0)
    model.load_state_dict({"weight": np.ones((2, 2)), "bias": np.arange(2)})
    assert model.weight.dtype == np.float32 and model.bias[1] == 1.0


def test_missing_and_unexpected_keys_strict() -> None:
    model = Model()
    sd = dict(model.state_dict())
    del sd["fc.bias"], sd["scale"]
    sd["fc.extra"] = np.zeros(1)
    sd["nope.weight"] = np.zeros(1)
    sd["top"] = np.zeros(1)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(sd)
    assert str(info.value) == (
        "Error(s) in loading state_dict for Model:\n"
        '\tMissing key(s) in state_dict: "scale", "fc.bias". \n'
        '\tUnexpected key(s) in state_dict: "nope.weight", "top", "fc.extra". ')


def test_strict_false_returns_named_tuple() -> None:
    model = Model()
    before = model.fc.weight.copy()
    result = model.load_state_dict({"fc.weight": np.ones((3, 4)), "junk": np.zeros(1)},
                                   strict=False)
    missing, unexpected = result
    assert missing == ["scale", "fc.bias", "norm.weight", "norm.bias"]
    assert unexpected == ["junk"] and result.unexpected_keys == unexpected
    assert (model.fc.weight == 1.0).all() and not (before == 1.0).all()
    assert repr(result).startswith("_IncompatibleKeys(missing_keys=['scale'")


def test_shape_mismatch_is_an_error_even_when_not_strict() -> None:
    model = Model()
    sd = model.state_dict()
    sd = {k: v.copy() for k, v in sd.items()}
    sd["fc.weight"] = np.zeros((4, 3))
    for strict in (True, False):
        with pytest.raises(RuntimeError, match=r"size mismatch for fc.weight: copying a param with "
                           r"shape \(4, 3\) from checkpoint, the shape in current model is "
                           r"\(3, 4\)\."):
            model.load_state_dict(sd, strict=strict)


def test_non_array_value_is_an_error() -> None:
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias", expected '
                       "numpy.ndarray"):
        nn.Linear(2, 2, rng=0).load_state_dict({"weight": np.zeros((2, 2)), "bias": [1, 2]})


def test_not_a_mapping() -> None:
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        Model().load_state_dict([("scale", np.ones(3))])


def test_assign_replaces_the_arrays() -> None:
    model = Model()
    new_weight, new_scale = np.ones((3, 4)), np.zeros(3)
    sd = {k: v.copy() for k, v in model.state_dict().items()}
    sd.update({"fc.weight": new_weight, "scale": new_scale})
    model.load_state_dict(sd, assign=True)
    assert type(model.fc.weight) is Parameter and np.shares_memory(model.fc.weight, new_weight)
    assert model.scale is new_scale and "scale" in model._buffers


def test_state_dict_hooks() -> None:
    model = Model()
    calls = []
    pre = model.fc.register_state_dict_pre_hook(
        lambda m, prefix, keep: calls.append((prefix, keep)))

    def post(module, state_dict, prefix, local_metadata):
        calls.append(("post", prefix, local_metadata["version"]))
        state_dict[prefix + "added"] = np.zeros(1)

    handle = model.register_state_dict_post_hook(post)
    sd = model.state_dict(keep_vars=True)
    assert calls == [("fc.", True), ("post", "", 1)] and "added" in sd
    pre.remove()
    with handle:
        pass
    assert "added" not in model.state_dict() and len(calls) == 2
    model.register_state_dict_post_hook(lambda *args: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        model.state_dict()


def test_load_state_dict_hooks() -> None:
    model = Model()
    sd = {k: v.copy() for k, v in model.state_dict().items()}
    sd["fc.W"] = sd.pop("fc.weight")   # an old checkpoint's name
    seen = []

    def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        seen.append((prefix, strict, local_metadata.get("version")))
        if prefix + "W" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "W")

    def forgive(module, incompatible_keys):
        seen.append(("post", list(incompatible_keys.missing_keys)))
        incompatible_keys.missing_keys.clear()

    model.fc.register_load_state_dict_pre_hook(rename)
    post = model.register_load_state_dict_post_hook(forgive)
    model.load_state_dict(sd)
    assert seen == [("fc.", True, None), ("post", [])]
    del sd["scale"]
    model.load_state_dict(sd)              # the post hook clears the missing key
    assert seen[-1] == ("post", ["scale"])
    post.remove()
    with pytest.raises(RuntimeError, match='Missing key.*"scale"'):
        model.load_state_dict(sd)
    model.register_load_state_dict_post_hook(lambda m, keys: 1)
    with pytest.raises(RuntimeError, match="not expected to return new values"):
        model.load_state_dict(model.state_dict())


def test_metadata_reaches_load_pre_hooks() -> None:
    model = Model()
    versions = []
    model.norm.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, *rest: versions.append(meta.get("version")))
    model.load_state_dict(model.state_dict())
    assert versions == [1]


def test_extra_state_round_trip() -> None:
    class Counter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]

    a, b = Counter(), Counter()
    a.count = 5
    sd = nn.Sequential(a).state_dict()
    assert sd["0._extra_state"] == {"count": 5}
    nn.Sequential(b).load_state_dict(sd)
    assert b.count == 5
    with pytest.raises(RuntimeError, match='Missing key.*"0._extra_state"'):
        nn.Sequential(Counter()).load_state_dict({})
    with pytest.raises(RuntimeError, match='Unexpected key.*"_extra_state"'):
        nn.ReLU().load_state_dict({"_extra_state": 1})
