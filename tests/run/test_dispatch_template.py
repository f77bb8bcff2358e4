"""The numba wrapper hands the dispatch a typed template of its ``forward`` (``forward.paste``, a
``PasteTemplate``): the dispatch pastes it without reading the wrapper's file, returns a single
output bare (no ``(out,)`` and ``[0]``), and a compiled module call (``*args``) gets a generated
dispatch with its entries pasted in."""

from __future__ import annotations

import json

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.base import PasteTemplate
from astcompiler.lower.numba.rebuild import WrapperRebuild
from astcompiler.run import dispatch
from tests.helpers import outcome

pytest.importorskip("numba")


def scale(x, y):
    return x * y + 1.0


def pair(x, y):
    return x + y, x * y


def same(got, want):
    np.testing.assert_array_equal(got, want)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape


def forward_of(compiled) -> object:
    run = compiled.entries[-1].run
    cells = dict(zip(run.__code__.co_freevars, (c.cell_contents for c in run.__closure__)))
    return cells["___compiled"]


def test_the_template_is_pasted_without_reading_the_wrapper_file(monkeypatch):
    read: list[str] = []
    verified = dispatch.verified_source

    def spy(path):
        read.append(path)
        return verified(path)

    monkeypatch.setattr(dispatch, "verified_source", spy)
    compiled = ac.compile(scale, backend="numba", dynamic=False)
    x, y = np.arange(8.0), np.full(8, 2.0)
    same(compiled(x, y), scale(x, y))
    forward = forward_of(compiled)
    template = forward.paste
    assert isinstance(template, PasteTemplate)
    assert template.params == forward.__code__.co_varnames[:forward.__code__.co_argcount]
    assert forward.__code__.co_filename not in read
    assert "paste" not in open(forward.__code__.co_filename).read()  # not in the wrapper's text
    # the persistent entry cache keeps it beside the wrapper (JSON), a rebuilt forward gets it
    saved = json.loads(json.dumps(WrapperRebuild("", [], [], paste=template).settings(str)))
    assert PasteTemplate.from_json(saved["paste"]) == template
    source = type(compiled).__call__.source
    assert "the wrapper pasted" in source and "its one output bare" in source
    assert "return ___out\n" in source and "___out[0]" not in source
    for k in range(3):  # hits: the pasted body, the plain call's values
        same(compiled(x + k, y), scale(x + k, y))
    with np.errstate(over="raise"):  # the bare eager return: the plain call's error
        big = np.full(8, 1e300)
        got, want = outcome(compiled, (big, big)), outcome(scale, (big, big))
        assert got[1:] == want[1:] and want[1][0] is FloatingPointError


def test_two_outputs_keep_their_tuple():
    compiled = ac.compile(pair, backend="numba", dynamic=False)
    x, y = np.arange(8.0), np.full(8, 3.0)
    for k in range(2):
        got, want = compiled(x + k, y), pair(x + k, y)
        assert type(got) is tuple and len(got) == 2
        for g, w in zip(got, want):
            same(g, w)
    source = type(compiled).__call__.source
    assert "the wrapper pasted" in source and "its one output bare" not in source


def test_a_module_call_gets_a_pasted_dispatch_and_matches_the_module():
    nn = ac.nn
    model = nn.Sequential(nn.Linear(3, 3, rng=0), nn.ReLU())
    compiled = ac.compile(model, backend="numba")
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    for k in range(3):
        same(compiled(x + k), model(x + k))
    source = type(compiled._compiled_call).__call__.source
    assert "dispatch of module_call" in source and "the wrapper pasted" in source
    with ac.set_stance("force_eager"):  # a stance: the generic method
        same(compiled(x), model(x))
    other = nn.Sequential(nn.Linear(3, 3, rng=5), nn.ReLU())  # same types: the same entry
    same(ac.compile(other, backend="numba")(x), other(x))
    assert outcome(compiled, (x, x))[1] == outcome(model, (x, x))[1]  # a surplus argument
