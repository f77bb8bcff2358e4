"""Eight processes compile and call the same functions at once on one fresh cache directory:
every result is right, no process fails, no temporary file is left, every generated file matches
the hash in its name, every persisted entry matches its manifest, and a ninth process loads warm:
it finds every entry and every numba overload the eight wrote (none lost by racing index writes)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from astcompiler.run import persist
from astcompiler.source.loading import verified_source

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROCESSES = 8

# each process compiles one memory layout of the same kernel (one generated file, one numba
# index, three signatures: the processes race to add theirs); the ninth runs all three
WORKER = '''
import json, os, sys
import numpy as np
from astcompiler.lower.numba.files import kernels_dir
from astcompiler.run import persist
from tests.scaling import kernels

x = np.random.default_rng(1).standard_normal((40, 30))
layouts = {"C": x, "F": np.asfortranarray(x), "strided": x[:, ::2]}
chosen = sys.argv[1].split(",")
ok = []
for _ in range(2):
    for name in chosen:
        ok.append(np.array_equal(kernels.smooth(layouts[name]), kernels.smooth_plain(layouts[name])))
    ok.append(kernels.scaled_sum(x) == kernels.scaled_sum.__wrapped__(x))
    ok.append(np.array_equal(kernels.smooth(x[:7]), kernels.smooth_plain(x[:7])))
import numba.core.registry
dispatchers = {id(v): v for m in list(sys.modules.values())
               if (getattr(m, "__file__", None) or "").startswith(kernels_dir())
               for v in vars(m).values() if isinstance(v, numba.core.registry.CPUDispatcher)}
misses = sum(sum(d._cache_misses.values()) for d in dispatchers.values())  # compiled here
hits = sum(sum(d._cache_hits.values()) for d in dispatchers.values())  # loaded from the index
print(json.dumps({"ok": all(ok), "stats": persist.STATS, "digest": persist.package_digest(),
                  "entries": kernels.entry_counts(), "misses": misses, "hits": hits}))
'''
LAYOUTS = ["C", "F", "strided"]


def _start(cache: str, layouts: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT, ASTCOMPILER_CACHE_DIR=cache,
               OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", PYTHONWARNINGS="error")
    return subprocess.Popen([sys.executable, "-c", WORKER, ",".join(layouts)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow  # eight processes compile the same kernels on two cores
def test_eight_processes_share_one_fresh_cache(tmp_path):
    cache = str(tmp_path / "cache")
    started = [_start(cache, [LAYOUTS[i % len(LAYOUTS)]]) for i in range(PROCESSES)]
    reports = [_finish(p) for p in started]
    assert all(r["ok"] for r in reports), reports

    names = [os.path.join(d, n) for d, _, files in os.walk(cache) for n in files]
    assert not [n for n in names if ".tmp" in os.path.basename(n)], names  # all renamed
    generated = [n for n in names if n.endswith(".py")]
    assert generated
    for path in generated:  # content-addressed: each file holds what its name promises
        verified_source(path)
    manifests = [n for n in names if n.endswith(".json") and os.sep + persist.ENTRIES + os.sep in n]
    assert manifests, names  # the kernels' entries were persisted
    for path in manifests:
        with open(path, "rb") as handle:
            manifest = json.loads(handle.read())
        for relative, digest in manifest["hashes"].items():
            with open(os.path.join(cache, relative), "rb") as handle:
                assert hashlib.sha256(handle.read()).hexdigest() == digest, relative

    warm = _finish(_start(cache, LAYOUTS))  # numba's index and the entries load in a new process
    assert warm["ok"] and warm["stats"]["refused"] == 0, warm
    # every overload the eight compiled is in numba's index: the ninth compiles none of them
    assert warm["misses"] == 0 and warm["hits"] >= len(LAYOUTS) + 1, warm
    if {r["digest"] for r in reports} == {warm["digest"]}:  # (astcompiler's sources unchanged
        assert warm["stats"]["loaded"] >= 2, warm  # meanwhile: an edit changes every key)
