"""Compiled functions on a real ``dask.distributed.LocalCluster`` with two worker processes:
``map_blocks`` and ``client.map`` give NumPy's results, and each worker holds compiled entries
(loaded from the cache this process filled)."""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import astcompiler as ac  # noqa: E402
from tests.scaling import kernels  # noqa: E402


X = np.random.default_rng(0).standard_normal((32, 24))
CHUNKS = (16, 12)  # 4 blocks over 2 workers


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("ASTCOMPILER_CACHE_DIR", str(cache))  # workers inherit it: one shared cache
    patch.setattr(ac.config, "cache_dir", str(cache))
    # compiled here once, before the workers start: they load the entries from the shared cache
    # instead of both compiling the same kernels on the same cores (the cold path of a worker is
    # tests/scaling/test_cache_stress.py's)
    kernels.smooth(X[:CHUNKS[0], :CHUNKS[1]])
    kernels.scaled_sum(X[:8])
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    with cluster, distributed.Client(cluster) as connected:
        yield connected
    patch.undo()


# not slow: `make test` runs it (the test extra brings dask); 23 s with the cluster's start on two
# busy cores (issue 15: under a minute)
def test_map_blocks_and_client_map_match_numpy(client):
    x = X
    arr = da.from_array(x, chunks=CHUNKS)
    got = da.map_blocks(kernels.smooth, arr, dtype=x.dtype).compute()
    expected = kernels.smooth_plain(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected)

    chunks = [x[i:i + 8] for i in range(0, len(x), 8)]
    futures = client.map(kernels.scaled_sum, chunks)
    results = client.gather(futures)
    assert results == [kernels.scaled_sum.__wrapped__(c) for c in chunks]
    assert all(type(r) is type(kernels.scaled_sum.__wrapped__(chunks[0])) for r in results)

    counts = client.run(kernels.entry_counts)  # per worker address
    assert len(counts) == 2
    busy = [c for c in counts.values() if c["smooth"] or c["scaled_sum"]]
    assert busy, counts  # the work ran in the workers, compiled there
    # one entry per kernel in each worker that ran it: no recompiles across tasks
    assert all(n <= 1 for c in counts.values() for n in c.values()), counts
