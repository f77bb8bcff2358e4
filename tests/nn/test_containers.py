"""Sequential, ModuleList, ModuleDict."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from astcompiler import nn


def layers(n: int) -> list[nn.Module]:
    return [nn.Linear(2, 2, rng=i) for i in range(n)]


# -- Sequential -------------------------------------------------------------------------------


def test_sequential_forward_chains() -> None:
    a, b = layers(2)
    seq = nn.Sequential(a, nn.Tanh(), b)
    x = np.ones((3, 2))
    np.testing.assert_allclose(seq(x), b(np.tanh(a(x))))
    assert nn.Sequential()(x) is x


def test_sequential_indexing_len_iteration() -> None:
    mods = layers(3)
    seq = nn.Sequential(*mods)
    assert len(seq) == 3 and list(seq) == mods
    assert seq[0] is mods[0] and seq[-1] is mods[2]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    head = seq[:2]
    assert type(head) is nn.Sequential and list(head) == mods[:2]
    assert list(seq[::-1]._modules) == ["2", "1", "0"]   # slices keep the names
    seq[1] = nn.ReLU()
    assert isinstance(seq[1], nn.ReLU) and list(seq._modules) == ["0", "1", "2"]


def test_sequential_ordered_dict_names() -> None:
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2, rng=0)), ("act", nn.ReLU())]))
    assert list(seq._modules) == ["fc", "act"] and seq.fc is seq[0]
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"]


def test_sequential_append_insert_extend_pop_del() -> None:
    a, b, c, d = layers(4)
    seq = nn.Sequential(a)
    assert seq.append(b) is seq and list(seq) == [a, b]
    seq.insert(0, c)
    assert list(seq) == [c, a, b] and list(seq._modules) == ["0", "1", "2"]
    seq.insert(-1, d)
    assert list(seq) == [c, a, d, b]
    with pytest.raises(IndexError):
        seq.insert(9, d)
    seq.extend([nn.ReLU()])
    assert len(seq) == 5
    assert seq.pop(0) is c and list(seq) == [a, d, b, seq[3]]
    del seq[1]
    assert list(seq)[:2] == [a, b] and list(seq._modules) == ["0", "1", "2"]
    del seq[:2]
    assert len(seq) == 1 and list(seq._modules) == ["0"]


def test_sequential_add() -> None:
    a, b = layers(2)
    both = nn.Sequential(a) + nn.Sequential(b)
    assert list(both) == [a, b]
    s = nn.Sequential(a)
    s += nn.Sequential(b)
    assert list(s) == [a, b]
    with pytest.raises(ValueError, match="supports only objects of Sequential class"):
        nn.Sequential(a) + [b]


def test_sequential_repr() -> None:
    seq = nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU())
    assert repr(seq) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                         "  (1): ReLU()\n)")
    assert repr(nn.Sequential()) == "Sequential()"


# -- ModuleList -------------------------------------------------------------------------------


def test_module_list_basics() -> None:
    mods = layers(3)
    ml = nn.ModuleList(mods)
    assert len(ml) == 3 and list(ml) == mods and ml[-1] is mods[2]
    assert [n for n, _ in ml.named_parameters()][:2] == ["0.weight", "0.bias"]
    assert type(ml[1:]) is nn.ModuleList and list(ml[1:]) == mods[1:]
    ml[0] = nn.Tanh()
    assert isinstance(ml[0], nn.Tanh)
    with pytest.raises(IndexError):
        ml[5]
    with pytest.raises(NotImplementedError, match="missing the required"):
        ml(1)


def test_module_list_mutation() -> None:
    a, b, c = layers(3)
    ml = nn.ModuleList()
    assert ml.append(a) is ml
    ml.extend([b])
    ml += [c]
    assert list(ml) == [a, b, c]
    ml.insert(1, nn.ReLU())
    assert isinstance(ml[1], nn.ReLU) and ml[2] is b
    assert ml.pop(1).__class__ is nn.ReLU and list(ml) == [a, b, c]
    del ml[0]
    assert list(ml) == [b, c] and list(ml._modules) == ["0", "1"]
    del ml[::2]
    assert list(ml) == [c]
    combined = ml + nn.ModuleList([a])
    assert list(combined) == [c, a] and list(ml) == [c]
    with pytest.raises(TypeError, match="extend should be called with an iterable"):
        ml.extend(a)


def test_module_list_repr_compresses_repeats() -> None:
    ml = nn.ModuleList([nn.Linear(2, 2, rng=0) for _ in range(3)] + [nn.ReLU(), nn.ReLU()]
                       + [nn.Tanh()])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (3-4): 2 x ReLU()\n"
                        "  (5): Tanh()\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    nested = nn.ModuleList([nn.Sequential(nn.ReLU())])
    assert repr(nested) == "ModuleList(\n  (0): Sequential(\n    (0): ReLU()\n  )\n)"


# -- ModuleDict -------------------------------------------------------------------------------


def test_module_dict() -> None:
    a, b, c = layers(3)
    md = nn.ModuleDict({"a": a, "b": b})
    assert list(md) == ["a", "b"] and len(md) == 2 and "a" in md and "z" not in md
    assert md["a"] is a and md.a is a
    md["c"] = c
    assert list(md.keys()) == ["a", "b", "c"] and list(md.values()) == [a, b, c]
    assert list(md.items())[2] == ("c", c)
    assert md.pop("b") is b and list(md) == ["a", "c"]
    del md["a"]
    assert list(md) == ["c"]
    md.update([("x", nn.ReLU()), ["y", nn.Tanh()]])
    md.update(nn.ModuleDict({"z": nn.Identity()}))
    assert list(md) == ["c", "x", "y", "z"]
    assert [n for n, _ in md.named_parameters()] == ["c.weight", "c.bias"]
    md.clear()
    assert len(md) == 0


def test_module_dict_update_errors() -> None:
    md = nn.ModuleDict()
    with pytest.raises(TypeError, match="should be called with an iterable"):
        md.update(3)
    with pytest.raises(TypeError, match="element #0 should be Iterable"):
        md.update([3])
    with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
        md.update([("a", nn.ReLU(), 1)])
