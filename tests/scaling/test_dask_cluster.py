"""Compiled functions on a real ``dask.distributed.LocalCluster`` with two worker processes:
``map_blocks`` and ``client.map`` give NumPy's results, and each worker holds compiled entries
(loaded from the cache the client's process filled).

The cluster runs in a process of its own (``CLUSTER``), bounded in time with its whole process
group (``tests.helpers.run_process_group``): a cluster that cannot start or stop on some machine
fails this test with what it printed, instead of holding the test run until CI's limit."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.array")

from tests.helpers import run_process_group  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 240  # the cluster's start on two busy cores takes about 20 s (issue 15: under a minute)

CLUSTER = '''
import json
import numpy as np
import dask.array as da
import distributed
import astcompiler as ac
from tests.scaling import kernels

if __name__ == "__main__":  # (the workers, started by spawn, import this file too)
    x = np.random.default_rng(0).standard_normal((32, 24))
    chunks = (16, 12)  # 4 blocks over 2 workers
    # compiled here once, before the workers start: they load the entries from the shared
    # cache (ASTCOMPILER_CACHE_DIR, which they inherit) instead of both compiling the same
    # kernels on the same cores (the cold path of a worker is tests/scaling/test_cache_stress.py's)
    kernels.smooth(x[:chunks[0], :chunks[1]])
    kernels.scaled_sum(x[:8])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \\
            distributed.Client(cluster) as client:
        got = da.map_blocks(kernels.smooth, da.from_array(x, chunks=chunks),
                            dtype=x.dtype).compute()
        expected = kernels.smooth_plain(x)
        parts = [x[i:i + 8] for i in range(0, len(x), 8)]
        results = client.gather(client.map(kernels.scaled_sum, parts))
        plain = [kernels.scaled_sum.__wrapped__(p) for p in parts]
        counts = client.run(kernels.entry_counts)  # per worker address
    print(json.dumps({
        "blocks_equal": bool(got.dtype == expected.dtype and got.shape == expected.shape
                             and np.array_equal(got, expected)),
        "sums_equal": results == plain,
        "types": sorted({type(r).__name__ for r in results}),
        "plain_type": type(plain[0]).__name__,
        "counts": list(counts.values())}))
'''


# not slow: `make test` runs it (the test extra brings dask); about 25 s on two busy cores
def test_map_blocks_and_client_map_match_numpy(tmp_path):
    script = tmp_path / "cluster.py"
    script.write_text(CLUSTER, encoding="utf-8")
    env = {**os.environ, "ASTCOMPILER_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = run_process_group([sys.executable, str(script)], timeout=SECONDS, cwd=str(ROOT),
                             env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["blocks_equal"] and result["sums_equal"], result
    assert result["types"] == [result["plain_type"]]
    counts = result["counts"]
    assert len(counts) == 2
    busy = [c for c in counts if c["smooth"] or c["scaled_sum"]]
    assert busy, counts  # the work ran in the workers, compiled there
    # one entry per kernel in each worker that ran it: no recompiles across tasks
    assert all(n <= 1 for c in counts for n in c.values()), counts
