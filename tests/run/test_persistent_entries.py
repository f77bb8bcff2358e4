"""The persistent entry cache (warm start, ``run/persist.py``), across real processes.

A small user module and a driver are written once; one cold process compiles the kernels and
writes their entries; each test copies that cache directory and runs the driver in fresh Python
processes on its copy. They must load the entries (no capture: ``astcompiler.capture.capture``,
sympy and libcst never imported), give the plain call's results, and compile as usual whenever
the entry no longer applies (edited source, tampered files, new dtypes).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

KERNELS = '''
import numpy as np
import astcompiler as ac

SCALE = 2.0


def helper(a):
    return np.sqrt(a) * SCALE  # correctly rounded ops only: results compare exactly


@ac.compile
def pointwise(x, y):
    return helper(x) + np.maximum(y, 0.25) * 0.5


@ac.compile
def total(x):
    return (x * x).max(axis=-1)


@ac.compile
def relax(u, v, steps):  # a loop region: one structured numba function
    for _ in range(steps):
        u = u + 0.5 * (v - u)
    return u
'''

DRIVER = '''
import json, sys
import numpy as np
import kernels
from astcompiler.run import persist

calls = json.loads(sys.argv[1])
out = {"results": [], "plain": []}
for name, size, dtype in calls:
    compiled = getattr(kernels, name)
    args = [np.linspace(0.0, 1.0, size).astype(dtype)]
    if name in ("pointwise", "relax"):
        args.append(np.linspace(-1.0, 1.0, size).astype(dtype))
    if name == "relax":
        args.append(100)
    got = compiled(*args)
    want = compiled.__wrapped__(*args)
    for key, value in (("results", got), ("plain", want)):
        out[key].append([np.asarray(value).tolist(), str(np.asarray(value).dtype),
                         type(value).__name__])
out["stats"] = dict(persist.STATS)
out["entries"] = {n: [bool(e.loaded_from) for e in getattr(kernels, n).entries]
                  for n in ("pointwise", "total", "relax")}
out["modules"] = sorted(m for m in ("sympy", "libcst", "astcompiler.capture.capture")
                        if m in sys.modules)
print("RESULT" + json.dumps(out))
'''


COLD_CALLS = [["pointwise", 16, "float64"], ["total", 8, "float64"], ["total", 9, "float64"],
              ["total", 30, "float64"], ["relax", 16, "float64"]]  # total: static, then dynamic


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """The user module (one path: code fingerprints include it), and a cache written by one
    cold process."""
    base = tmp_path_factory.mktemp("persist")
    (base / "kernels.py").write_text(KERNELS)
    (base / "driver.py").write_text(DRIVER)
    first = run(base, base / "cache", COLD_CALLS)
    assert first["stats"]["saved"] == 4 and first["stats"]["loaded"] == 0
    assert first["entries"] == {"pointwise": [False], "total": [False, False], "relax": [False]}
    assert "astcompiler.capture.capture" in first["modules"]
    kinds = {}
    for manifest in glob.glob(str(base / "cache" / "entries" / "*" / "*.json")):
        with open(manifest) as handle:
            kind = json.load(handle)["lowering"]["kind"]
        kinds[os.path.basename(os.path.dirname(manifest)).split("_")[0]] = kind
    assert kinds == {"pointwise": "wrapper", "total": "wrapper", "relax": "structured"}
    return base


@pytest.fixture
def cache(cold, tmp_path):
    """This test's copy of the cold cache directory."""
    shutil.copytree(cold / "cache", tmp_path / "cache", symlinks=True)
    return tmp_path / "cache"


@pytest.fixture
def edit(cold):
    """Edit the user module for one test (restored afterwards)."""
    path = cold / "kernels.py"

    def replace(old: str, new: str) -> None:
        path.write_text(path.read_text().replace(old, new))
    yield replace
    path.write_text(KERNELS)


def environment(base, cache) -> dict:
    """The cache directory, the user module, and a pinned build id (the key would change
    whenever a file of astcompiler is edited while the tests run)."""
    env = dict(os.environ, ASTCOMPILER_CACHE_DIR=str(cache), PYTHONPATH=str(base),
               ASTCOMPILER_BUILD_ID="tests", PYTHONDONTWRITEBYTECODE="1")
    env.pop("ASTCOMPILER_LOGS", None)
    return env


def run(base, cache, calls: list) -> dict:
    done = subprocess.run([sys.executable, str(base / "driver.py"), json.dumps(calls)],
                          cwd=base, env=environment(base, cache), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")][-1]
    result = json.loads(line[len("RESULT"):])
    assert result["results"] == result["plain"]  # value, dtype and Python type of every call
    return result


def test_second_process_loads_the_entries_without_capture(cold, cache):
    warm = run(cold, cache, [["pointwise", 16, "float64"], ["total", 8, "float64"],
                             ["relax", 16, "float64"]])
    assert warm["stats"] == {"loaded": 3, "saved": 0, "refused": 0, "missed": 0}
    assert warm["entries"] == {"pointwise": [True], "total": [True], "relax": [True]}
    assert warm["modules"] == []  # no sympy, no libcst, no capture


def test_edited_source_refuses_or_misses(cold, cache, edit):
    edit("np.sqrt(a) * SCALE", "np.abs(a) * SCALE")  # an inlined function: refused by fingerprint
    edit("(x * x).max", "(x * x + 1.0).max")  # the compiled function: another key
    edited = run(cold, cache, [["pointwise", 16, "float64"], ["total", 8, "float64"]])
    # the results were checked against the edited plain functions
    assert edited["stats"] == {"loaded": 0, "saved": 2, "refused": 1, "missed": 2}
    assert edited["entries"] == {"pointwise": [False], "total": [False], "relax": []}


def test_a_tampered_cache_file_is_refused_and_never_executed(cold, cache):
    modules = glob.glob(str(cache / "entries" / "pointwise_*" / "entry_*.py"))
    assert len(modules) == 1
    with open(modules[0], "a") as handle:
        handle.write("\nimport os\nos._exit(42)\n")  # would end the process if executed
    tampered = run(cold, cache, [["pointwise", 16, "float64"]])
    assert tampered["stats"]["loaded"] == 0 and tampered["stats"]["refused"] == 1
    assert tampered["entries"]["pointwise"] == [False]


def test_a_new_dtype_still_guards_and_recompiles(cold, cache):
    mixed = run(cold, cache, [["total", 8, "float64"], ["total", 8, "float32"]])
    assert mixed["entries"]["total"] == [True, False]  # float32 fails the loaded guard
    assert mixed["stats"] == {"loaded": 1, "saved": 1, "refused": 0, "missed": 1}


def test_dynamic_shapes_reuse_the_persisted_entries(cold, cache):
    warm = run(cold, cache, [["total", 8, "float64"], ["total", 9, "float64"],
                             ["total", 50, "float64"], ["total", 77, "float64"]])
    assert warm["entries"]["total"] == [True, True]  # the dynamic entry serves new sizes
    assert warm["stats"] == {"loaded": 2, "saved": 0, "refused": 0, "missed": 0}
    assert "libcst" not in warm["modules"] and "astcompiler.capture.capture" not in warm["modules"]


def test_the_setting_turns_it_off(cold, tmp_path):
    script = textwrap.dedent("""
        import numpy as np, kernels
        import astcompiler as ac
        from astcompiler.run import persist
        ac.config.persistent_cache = False
        kernels.total(np.ones(4))
        print("RESULT", persist.STATS["saved"], persist.STATS["loaded"])
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=cold, capture_output=True,
                          text=True, env=environment(cold, tmp_path / "cache"), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("RESULT")[-1].split() == ["0", "0"]
    assert os.path.isdir(tmp_path / "cache" / "kernels")
    assert not os.path.exists(tmp_path / "cache" / "entries")


def test_concurrent_writers_leave_one_loadable_entry(cold, tmp_path):
    """Two processes compiling the same function into one cache directory at once: each sees
    whole files only (temporary names, os.replace), and a third process loads the entry."""
    cache = tmp_path / "cache"
    calls = json.dumps([["total", 8, "float64"]])
    writers = [subprocess.Popen([sys.executable, str(cold / "driver.py"), calls], cwd=cold,
                                env=environment(cold, cache), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    manifests = glob.glob(str(cache / "entries" / "total_*" / "*.json"))
    assert len(manifests) == 1  # the same entry: one name, written by both
    assert not glob.glob(str(cache / "entries" / "*" / ".*.tmp"))
    warm = run(cold, cache, [["total", 8, "float64"]])
    assert warm["stats"] == {"loaded": 1, "saved": 0, "refused": 0, "missed": 0}
