"""Forward hooks and pre-hooks (module-level and global), handles, hooks_version."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from astcompiler import nn
from astcompiler.nn import modules as nnm


class Affine(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale + 1


class Boom(nn.Module):
    def forward(self, x):
        raise ValueError("boom")


def recorder(log, name, ret=None):
    def hook(*args):
        log.append(name)
        return ret
    return hook


def test_order_global_then_module_on_both_sides() -> None:
    log = []
    m = Affine()
    m.register_forward_pre_hook(recorder(log, "pre"))
    m.register_forward_hook(recorder(log, "fwd"))
    original = m.forward
    m.forward = lambda *a, **k: (log.append("forward"), original(*a, **k))[1]
    with nnm.register_module_forward_pre_hook(recorder(log, "global pre")), \
            nnm.register_module_forward_hook(recorder(log, "global fwd")):
        assert m(1.0) == 2.0
    assert log == ["global pre", "pre", "forward", "global fwd", "fwd"]


def test_pre_hook_replaces_args() -> None:
    m = Affine()
    with m.register_forward_pre_hook(lambda mod, args: args[0] * 10):   # not a tuple: wrapped
        assert m(1.0) == 11.0
    with m.register_forward_pre_hook(lambda mod, args: (args[0], 3.0)):
        assert m(1.0) == 4.0
    with m.register_forward_pre_hook(lambda mod, args: None):
        assert m(1.0) == 2.0


def test_pre_hook_with_kwargs() -> None:
    m = Affine()
    seen = []

    def hook(mod, args, kwargs):
        seen.append((args, dict(kwargs)))
        return (args[0] + 1,), {"scale": kwargs["scale"] * 2}

    with m.register_forward_pre_hook(hook, with_kwargs=True):
        assert m(1.0, scale=3.0) == 2.0 * 6.0 + 1
    assert seen == [((1.0,), {"scale": 3.0})]
    with m.register_forward_pre_hook(lambda mod, a, k: a, with_kwargs=True):
        with pytest.raises(RuntimeError,
                           match=r"must return None or a tuple of \(new_args, new_kwargs\)"):
            m(1.0)


def test_forward_hook_replaces_output_and_sees_inputs() -> None:
    m = Affine()
    seen = []

    def hook(mod, args, output):
        seen.append((mod, args, output))
        return output * 100

    with m.register_forward_hook(hook):
        assert m(2.0, scale=2.0) == 500.0
    assert seen == [(m, (2.0,), 5.0)]
    with m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"],
                                 with_kwargs=True):
        assert m(2.0, scale=2.0) == 7.0


def test_forward_hook_sees_args_after_pre_hooks() -> None:
    m = Affine()
    seen = []
    m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    m.register_forward_hook(lambda mod, args, out: seen.append(args))
    m(1.0)
    assert seen == [(2.0,)]


def test_chained_hooks_and_prepend() -> None:
    m = Affine()
    m.register_forward_hook(lambda mod, a, out: out * 2)
    m.register_forward_hook(lambda mod, a, out: out + 3)
    assert m(0.0) == (1 * 2) + 3
    m.register_forward_hook(lambda mod, a, out: out * 10, prepend=True)
    assert m(0.0) == (1 * 10) * 2 + 3
    log = []
    m.register_forward_pre_hook(recorder(log, "a"))
    m.register_forward_pre_hook(recorder(log, "b"), prepend=True)
    m(0.0)
    assert log == ["b", "a"]


def test_always_call_runs_when_forward_raises() -> None:
    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, a, out: seen.append(("plain", out)))
    m.register_forward_hook(lambda mod, a, out: seen.append(("always", a, out)), always_call=True)
    m.register_forward_hook(lambda mod, a, k, out: seen.append(("kw", k, out)), always_call=True,
                            with_kwargs=True)
    with pytest.raises(ValueError, match="boom"):
        m(1.0)
    assert seen == [("always", (1.0,), None), ("kw", {}, None)]


def test_always_call_runs_when_a_pre_hook_raises() -> None:
    m = Affine()
    seen = []

    def bad_pre(mod, args):
        raise KeyError("pre")

    m.register_forward_pre_hook(bad_pre)
    m.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
    with pytest.raises(KeyError):
        m(1.0)
    assert seen == [None]


def test_always_call_hook_runs_once_and_sees_partial_result() -> None:
    m = Affine()
    seen = []

    def fail(mod, a, out):
        raise RuntimeError("late")

    m.register_forward_hook(lambda mod, a, out: (seen.append(("first", out)), out * 2)[1],
                            always_call=True)
    m.register_forward_hook(fail)
    m.register_forward_hook(lambda mod, a, out: seen.append(("after", out)), always_call=True)
    with pytest.raises(RuntimeError, match="late"):
        m(1.0)
    # the first always-call hook ran normally (once); the last one ran on the error path with
    # the output computed so far
    assert seen == [("first", 2.0), ("after", 4.0)]


def test_always_call_hook_errors_become_warnings() -> None:
    m = Boom()

    def bad(mod, a, out):
        raise TypeError("hook failed too")

    m.register_forward_hook(bad, always_call=True)
    with pytest.warns(UserWarning, match="module forward hook with ``always_call=True`` raised"):
        with pytest.raises(ValueError, match="boom"):
            m(1.0)


def test_always_call_on_success_path_runs_normally() -> None:
    m = Affine()
    m.register_forward_hook(lambda mod, a, out: out * 3, always_call=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m(1.0) == 6.0


def test_global_hooks() -> None:
    m = Affine()
    with nnm.register_module_forward_pre_hook(lambda mod, args: (args[0] * 2,)):
        assert m(1.0) == 3.0
    assert m(1.0) == 2.0
    with nnm.register_module_forward_hook(lambda mod, a, k, out: out + k.get("scale", 0),
                                          with_kwargs=True):
        assert m(1.0, scale=2.0) == 3.0 + 2.0
    seen = []
    with nnm.register_module_forward_hook(lambda mod, a, out: seen.append(out), always_call=True):
        with pytest.raises(ValueError):
            Boom()(1.0)
    assert seen == [None]


def test_global_hooks_see_every_module() -> None:
    seq = nn.Sequential(nn.Linear(2, 2, rng=0), nn.ReLU())
    names = []
    with nnm.register_module_forward_hook(lambda m, a, out: names.append(type(m).__name__)):
        seq(np.ones(2))
    assert names == ["Linear", "ReLU", "Sequential"]


def test_removal_and_context_manager() -> None:
    m = Affine()
    handle = m.register_forward_hook(lambda mod, a, out: out * 2, with_kwargs=False,
                                     always_call=True)
    assert m(1.0) == 4.0
    handle.remove()
    handle.remove()   # idempotent
    assert m(1.0) == 2.0
    assert not m._forward_hooks and not m._forward_hooks_always_called
    with m.register_forward_pre_hook(lambda mod, a, k: None, with_kwargs=True) as h:
        assert h.id in m._forward_pre_hooks and h.id in m._forward_pre_hooks_with_kwargs
    assert not m._forward_pre_hooks and not m._forward_pre_hooks_with_kwargs


def test_hook_may_remove_itself_during_the_call() -> None:
    m = Affine()
    calls = []

    def once(mod, args, out):
        calls.append(out)
        handle.remove()

    handle = m.register_forward_hook(once)
    m.register_forward_hook(lambda mod, a, out: out * 2)
    assert m(1.0) == 4.0 and m(1.0) == 4.0
    assert calls == [2.0]


def test_handle_ids_are_unique_across_modules() -> None:
    a, b = Affine(), Affine()
    ids = {a.register_forward_hook(print).id, b.register_forward_hook(print).id,
           a.register_forward_pre_hook(print).id}
    assert len(ids) == 3


def test_hooks_version_increments() -> None:
    m = Affine()
    v0 = nnm.hooks_version()
    h1 = m.register_forward_pre_hook(lambda *a: None)
    v1 = nnm.hooks_version()
    h2 = m.register_forward_hook(lambda *a: None)
    v2 = nnm.hooks_version()
    h1.remove()
    v3 = nnm.hooks_version()
    h1.remove()                       # nothing removed: no change
    assert nnm.hooks_version() == v3
    with nnm.register_module_forward_pre_hook(lambda *a: None):
        v4 = nnm.hooks_version()
    v5 = nnm.hooks_version()
    with nnm.register_module_forward_hook(lambda *a: None):
        v6 = nnm.hooks_version()
    v7 = nnm.hooks_version()
    h2.remove()
    v8 = nnm.hooks_version()
    assert v0 < v1 < v2 < v3 < v4 < v5 < v6 < v7 < v8
    m.register_state_dict_pre_hook(lambda *a: None).remove()   # not a forward hook
    m.register_load_state_dict_post_hook(lambda *a: None)
    assert nnm.hooks_version() == v8
    m(1.0)
    assert nnm.hooks_version() == v8


def test_state_dict_hook_handles() -> None:
    m = Affine()
    for register, attr in ((m.register_state_dict_pre_hook, "_state_dict_pre_hooks"),
                           (m.register_state_dict_post_hook, "_state_dict_hooks"),
                           (m.register_load_state_dict_pre_hook, "_load_state_dict_pre_hooks"),
                           (m.register_load_state_dict_post_hook, "_load_state_dict_post_hooks")):
        with register(lambda *a: None) as handle:
            assert list(getattr(m, attr)) == [handle.id]
        assert not getattr(m, attr)
