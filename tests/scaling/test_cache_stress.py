"""Eight processes compile and call the same functions at once on one fresh cache directory:
every result is right, no process fails, no temporary file is left, every generated file matches
the hash in its name, every persisted entry matches its manifest, and a ninth process loads warm."""

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

WORKER = '''
import json
import numpy as np
from astcompiler.run import persist
from tests.scaling import kernels

x = np.random.default_rng(1).standard_normal((40, 30))
ok = []
for _ in range(3):
    ok.append(np.array_equal(kernels.smooth(x), kernels.smooth_plain(x)))
    ok.append(kernels.scaled_sum(x) == kernels.scaled_sum.__wrapped__(x))
    ok.append(np.array_equal(kernels.smooth(x[:7]), kernels.smooth_plain(x[:7])))
print(json.dumps({"ok": all(ok), "stats": persist.STATS, "digest": persist.package_digest(),
                  "entries": kernels.entry_counts()}))
'''


def _start(cache: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT, ASTCOMPILER_CACHE_DIR=cache,
               OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", PYTHONWARNINGS="error")
    return subprocess.Popen([sys.executable, "-c", WORKER], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow  # eight processes compile the same kernels on two cores
def test_eight_processes_share_one_fresh_cache(tmp_path):
    cache = str(tmp_path / "cache")
    reports = [_finish(p) for p in [_start(cache) for _ in range(PROCESSES)]]
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

    warm = _finish(_start(cache))  # numba's index and the entries load in a new process
    assert warm["ok"] and warm["stats"]["refused"] == 0, warm
    if {r["digest"] for r in reports} == {warm["digest"]}:  # (astcompiler's sources unchanged
        assert warm["stats"]["loaded"] >= 2, warm  # meanwhile: an edit changes every key)
