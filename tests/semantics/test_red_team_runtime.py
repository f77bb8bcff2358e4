"""Red team, the runtime: module guards by version counters and the fast dispatch path (helper D1),
the persistent entry cache in a second process (D2), threads calling one compiled function.

Each test changes state the way a user does after the first compiled call and compares the
compiled call (``backend="numba"`` unless noted) with the plain call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

import astcompiler as ac
from astcompiler import nn

from .red_team_support import array_difference, value_difference

pytest.importorskip("numba")


def same(got, want) -> None:
    found = value_difference(got, want)
    assert found is None, found


# ----------------------------------------------------------------------------- module guards (D1)

class Cfg:
    """A plain (non-module) object held by a module."""

    def __init__(self) -> None:
        self.scale = 2.0


class Net(nn.Module):
    bias_scale = 1.0  # a class attribute

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3, rng=0)
        self.cfg = Cfg()
        self.weights = [1.0, 2.0]
        self.table = {"k": 0.5}

    def forward(self, x):
        y = self.fc(x) * self.cfg.scale + self.weights[1] * self.table["k"]
        return y + self.bias_scale


def _x() -> np.ndarray:
    return np.linspace(-1.0, 1.0, 6).reshape(2, 3)


CHANGES = {
    "plain_object_attribute": lambda m: setattr(m.cfg, "scale", 3.0),
    "list_item_in_place": lambda m: m.weights.__setitem__(1, -4.0),
    "dict_item_in_place": lambda m: m.table.__setitem__("k", 7.0),
    "class_attribute": lambda m: setattr(type(m), "bias_scale", -2.0),
    "parameter_values_in_place": lambda m: m.fc.weight.__imul__(3.0),
    "instance_dict_write": lambda m: m.__dict__.__setitem__("bias_scale", 9.0),
    "submodule_attribute": lambda m: setattr(m.fc, "bias", None),
}


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_module_state_changed_after_compile(change, backend):
    class Local(Net):  # its own class: class attributes changed here stay here
        pass
    model = Local()
    compiled = ac.compile(model, backend=backend)
    same(compiled(_x()), model(_x()))
    CHANGES[change](model)
    same(compiled(_x()), model(_x()))
    same(compiled(_x()), model(_x()))


def test_shared_submodule_changed_through_other_parent():
    shared = nn.Linear(3, 3, rng=1)

    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = shared

        def forward(self, x):
            return self.inner(x) * 2.0
    a, b = A(), A()
    compiled = ac.compile(a, backend="numba")
    same(compiled(_x()), a(_x()))
    b.inner.weight = nn.Parameter(np.ones((3, 3)))
    same(compiled(_x()), a(_x()))


def test_module_global_and_function_swapped_after_compile():
    mod = types.ModuleType("red_team_settings")
    mod.SCALE = 2.0
    mod.helper = lambda x: x + 1.0
    sys.modules[mod.__name__] = mod
    try:
        def f(x):
            return mod.helper(x) * mod.SCALE
        compiled = ac.compile(f, backend="numba")
        for change in (None, lambda: setattr(mod, "SCALE", 3.0),
                       lambda: setattr(mod, "SCALE", -0.0),
                       lambda: setattr(mod, "helper", lambda x: x - 1.0),
                       lambda: setattr(mod, "SCALE", np.float32(2.0)),
                       lambda: setattr(mod, "SCALE", 2)):
            if change:
                change()
            same(compiled(np.arange(3.0)), f(np.arange(3.0)))
    finally:
        del sys.modules[mod.__name__]


def test_function_defaults_and_closure_changed():
    k = 2.0

    def g(x, c=1.0):
        return x * c + k
    def f(x):
        return g(x) * 2.0
    compiled = ac.compile(f, backend="numba")
    same(compiled(np.arange(3.0)), f(np.arange(3.0)))
    g.__defaults__ = (5.0,)
    same(compiled(np.arange(3.0)), f(np.arange(3.0)))
    k = -1.0  # noqa: F841 - the closure cell changes
    same(compiled(np.arange(3.0)), f(np.arange(3.0)))
    g.__code__ = (lambda x, c=1.0: x - c + k).__code__
    same(compiled(np.arange(3.0)), f(np.arange(3.0)))


def test_numpy_function_monkeypatched_after_compile():
    def f(x):
        return np.tanh(x) * 2.0
    compiled = ac.compile(f, backend="numba")
    same(compiled(np.arange(3.0)), f(np.arange(3.0)))
    saved = np.tanh
    try:
        np.tanh = lambda x: x * 10.0
        same(compiled(np.arange(3.0)), f(np.arange(3.0)))
    finally:
        np.tanh = saved
    same(compiled(np.arange(3.0)), f(np.arange(3.0)))


# ----------------------------------------------------------------------------- threads

def test_four_threads_first_compile_race():
    """Four threads make the first calls together, with different dtypes and sizes."""
    def f(x, k):
        return (x * k + 1.0).sum(axis=-1), x.dtype
    compiled = ac.compile(f, backend="numba")
    inputs = [(np.arange(12.0).reshape(3, 4), 2.0), (np.arange(12, dtype=np.float32).reshape(4, 3), 3.0),
              (np.arange(10, dtype=np.int64).reshape(2, 5), 2), (np.ones((1, 7)), 0.5)]
    errors: list = []
    got: dict = {}
    barrier = threading.Barrier(4)

    def worker(i):
        try:
            barrier.wait()
            got[i] = [compiled(*inputs[i]) for _ in range(20)]
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, results in got.items():
        for r in results:
            found = value_difference(r, f(*inputs[i]), rtol=1e-6)
            assert found is None, found


# ----------------------------------------------------------------------------- persistent cache (D2)

USER = '''
import numpy as np
import astcompiler as ac
import settings
from helpers import shift


@ac.compile
def scaled(x):
    return shift(x) * settings.SCALE


@ac.compile
def with_default(x, k=2.0):
    return x * k + 1.0


@ac.compile
def loop(u, steps):
    for _ in range(steps):
        u = u * 0.5 + settings.SCALE
    return u


@ac.compile
def logf(x):
    return np.log(x) * settings.SCALE


@ac.compile
def logged(x, log):
    log.append(1)
    y = x * 2.0
    print("mid")
    return y + 1.0
'''

DRIVER = '''
import io, json, os, sys, contextlib
import numpy as np
import settings, user
from astcompiler.run import persist

if os.environ.get("RT_SCALE"):
    settings.SCALE = float(os.environ["RT_SCALE"])
out = {"diffs": []}

def check(name, compiled, *args):
    buf_c, buf_p = io.StringIO(), io.StringIO()
    def attempt(g, buf):
        with contextlib.redirect_stdout(buf):
            try:
                return g(*[a.copy() if hasattr(a, "copy") else a for a in args])
            except Exception as exc:
                return "raised %s: %s" % (type(exc).__name__, exc)
    got = attempt(compiled, buf_c)
    want = attempt(compiled.__wrapped__, buf_p)
    g, w = np.asarray(got), np.asarray(want)
    if (type(got) is not type(want) or g.dtype != w.dtype or g.shape != w.shape
            or not np.array_equal(g, w) or buf_c.getvalue() != buf_p.getvalue()):
        out["diffs"].append([name, repr(got), repr(want), buf_c.getvalue(), buf_p.getvalue()])

x = np.linspace(0.0, 1.0, 8)
check("scaled", user.scaled, x)
check("scaled32", user.scaled, x.astype(np.float32))
check("default", user.with_default, x)
if os.environ.get("RT_DEFAULT"):
    user.with_default.__wrapped__.__defaults__ = (float(os.environ["RT_DEFAULT"]),)
check("default_after", user.with_default, x)
check("strided", user.scaled, np.linspace(0.0, 1.0, 16)[::2])
check("log_ok", user.logf, x + 1.0)
with np.errstate(all="raise"):
    check("log_raise", user.logf, x)
with np.errstate(all="ignore"):
    check("log_ignore", user.logf, x)
check("loop", user.loop, x, 50)
check("loop32", user.loop, x.astype(np.float32), 50)
check("loop_steps", user.loop, x, 51)
log_c, log_p = [], []
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    got = user.logged(x.copy(), log_c)
    want = user.logged.__wrapped__(x.copy(), log_p)
if not np.array_equal(got, want) or buf.getvalue() != "mid\\nmid\\n":
    out["diffs"].append(["logged", repr(got), repr(want), buf.getvalue(), ""])
out["log"] = [len(log_c), len(log_p)]
settings.SCALE = settings.SCALE + 1.0
check("scaled_after_global_change", user.scaled, x)
out["stats"] = dict(persist.STATS)
print("RESULT" + json.dumps(out))
'''


def _run(base, cache, **env_extra) -> dict:
    import os
    env = dict(os.environ, ASTCOMPILER_CACHE_DIR=str(cache), PYTHONPATH=str(base),
               ASTCOMPILER_BUILD_ID="red-team", PYTHONDONTWRITEBYTECODE="1", **env_extra)
    env.pop("ASTCOMPILER_LOGS", None)
    done = subprocess.run([sys.executable, str(base / "driver.py")], cwd=base, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    base = tmp_path_factory.mktemp("red_team_persist")
    (base / "user.py").write_text(USER)
    (base / "driver.py").write_text(DRIVER)
    (base / "settings.py").write_text("SCALE = 2.0\n")
    (base / "helpers.py").write_text("def shift(x):\n    return x + 1.0\n")
    cold = _run(base, base / "cache")
    assert cold["diffs"] == [] and cold["log"] == [1, 1]
    return base


def test_persist_second_process_same_results(project):
    warm = _run(project, project / "cache")
    assert warm["diffs"] == [] and warm["log"] == [1, 1]
    assert warm["stats"]["loaded"] >= 1


def test_persist_changed_global_value_between_processes(project):
    warm = _run(project, project / "cache", RT_SCALE="-3.5")
    assert warm["diffs"] == []


def test_persist_changed_default_between_processes(project):
    warm = _run(project, project / "cache", RT_DEFAULT="7.0")
    assert warm["diffs"] == []


def test_persist_edited_helper_in_another_module(project):
    path = project / "helpers.py"
    old = path.read_text()
    try:
        path.write_text("def shift(x):\n    return x - 100.0\n")
        warm = _run(project, project / "cache")
        assert warm["diffs"] == []
    finally:
        path.write_text(old)


def test_persist_edited_settings_module_constant(project):
    path = project / "settings.py"
    old = path.read_text()
    try:
        path.write_text("SCALE = 11.0\n")
        warm = _run(project, project / "cache")
        assert warm["diffs"] == []
    finally:
        path.write_text(old)


def test_pool_thread_results_independent():
    """Two threads alternate calls on one compiled function; no result is overwritten."""
    compiled = ac.compile(lambda x: x * 2.0 + 1.0, backend="numba")
    keep: list = []
    lock = threading.Lock()

    def worker(seed):
        for j in range(50):
            x = np.full(40, float(seed * 100 + j))
            r = compiled(x)
            with lock:
                keep.append((x, r, r.copy()))
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, r, snap in keep:
        assert np.array_equal(r, snap)
        assert array_difference(r, x * 2.0 + 1.0) is None


def test_modules_in_a_plain_list_attribute():
    """Submodules held in a plain list (not registered children) changed after compile."""
    class L(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(3, 3, rng=2), nn.Linear(3, 3, rng=3)]

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    model = L()
    compiled = ac.compile(model, backend="numba")
    same(compiled(_x()), model(_x()))
    model.layers[0].weight = nn.Parameter(np.ones((3, 3)))
    same(compiled(_x()), model(_x()))
    model.layers[1].bias = None
    same(compiled(_x()), model(_x()))
    model.layers.append(nn.ReLU())
    same(compiled(_x()), model(_x()))


def test_module_in_a_global_changed_after_compile():
    lin = nn.Linear(3, 3, rng=4)

    def f(x):
        return lin(x) * 2.0
    compiled = ac.compile(f, backend="numba")
    same(compiled(_x()), f(_x()))
    lin.weight = nn.Parameter(np.full((3, 3), 0.5))
    same(compiled(_x()), f(_x()))
    lin.weight[...] = 3.0  # in place: the values are inputs, not constants
    same(compiled(_x()), f(_x()))


@pytest.mark.parametrize("kind", ["pointwise", "loop", "masked"])
def test_errstate_changes_between_calls(kind):
    """One compiled function called under changing ``np.errstate`` / ``np.seterr`` / warning
    filters: each call raises, warns or stays silent exactly as the plain call."""
    import warnings

    def pointwise(x):
        return np.log(x) * 2.0
    def loop(x):
        for _ in range(40):
            x = np.sqrt(x - 0.01)
        return x
    def masked(d, x):
        m = x < 2.0
        d[m] = np.log(x[m] - 0.5)
        return d
    fn = {"pointwise": pointwise, "loop": loop, "masked": masked}[kind]
    compiled = ac.compile(fn, backend="numba")

    def args():
        x = np.array([1.0, 0.0, 3.0])
        return (np.zeros(3), x) if kind == "masked" else (x,)

    def outcome(g, state):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(state.get("filter", "always"))
            old = np.seterr(**state.get("seterr", {}))
            try:
                with np.errstate(**state.get("errstate", {})):
                    try:
                        r = g(*args())
                        got = ("ok", r.tolist())
                    except Exception as exc:  # noqa: BLE001
                        got = ("raise", type(exc).__name__, str(exc))
            finally:
                np.seterr(**old)
        return got, [(w.category.__name__, str(w.message)) for w in caught
                     if issubclass(w.category, RuntimeWarning)
                     and not str(w.message).startswith("astcompiler")]
    states = [{}, {"errstate": {"all": "raise"}}, {"errstate": {"all": "ignore"}},
              {"seterr": {"divide": "raise"}}, {"filter": "error"}, {"errstate": {"invalid": "raise"}},
              {}, {"errstate": {"all": "raise"}}]
    for state in states:
        want = outcome(fn, state)
        got = outcome(compiled, state)
        assert value_difference(got, want) is None, (state, got, want)
