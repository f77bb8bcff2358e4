"""A compiled kernel over a chunked array on a Dask cluster with worker processes.

Run with ``.venv/bin/python examples/dask_blocks.py`` (needs ``pip install 'astcompiler[dask]'``).
It starts a ``LocalCluster`` (2 worker processes, loopback only) on a fresh cache directory, runs
``dask.array.map_blocks`` with the compiled kernel, checks the result against NumPy, prints the
speedup over the same graph with plain NumPy blocks, then measures each worker's first task cold
(it compiles) and, on a new cluster sharing the cache directory, warm (it loads the entry).
Exits non-zero if a result disagrees with NumPy.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads: no spinning
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import astcompiler as ac  # noqa: E402


def chain(block):
    """A memory-bound pointwise chain: NumPy makes four temporaries per block, the kernel one pass."""
    return block * 0.5 + block * block - 1.0 + np.abs(block) * 0.25


BLOCK = (1000, 2000)  # 8 blocks of 16 MB
kernel = ac.compile(chain)  # defined in __main__: cloudpickle sends it by value, workers compile it


def first_call_seconds() -> tuple[float, str]:
    """Run in a worker: the time of this process's first call of the kernel, and whether its
    entry was compiled or loaded from the persistent cache."""
    start = time.perf_counter()
    kernel(np.ones(BLOCK))  # the blocks' shape: the entry the tasks use
    seconds = time.perf_counter() - start
    return seconds, "loaded" if kernel.entries[-1].loaded_from else "compiled"


def start_cluster(cache_dir: str):
    from dask.distributed import Client, LocalCluster
    os.environ["ASTCOMPILER_CACHE_DIR"] = cache_dir  # worker processes inherit it
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    return cluster, Client(cluster)


def timed(compute) -> float:
    start = time.perf_counter()
    compute()
    return time.perf_counter() - start


def main() -> int:
    import dask.array as da
    cache_dir = tempfile.mkdtemp(prefix="astcompiler-dask-")
    cluster, client = start_cluster(cache_dir)
    try:
        cold = client.run(first_call_seconds)
        arr = da.random.default_rng(0).standard_normal((8 * BLOCK[0], BLOCK[1]), chunks=BLOCK)
        arr = client.persist(arr)  # made in the workers, kept there: the graphs time the kernels
        x = arr.compute()
        got = da.map_blocks(kernel, arr, dtype=x.dtype).compute()
        ok = np.array_equal(got, chain(x))
        print(f"compiled blocks match NumPy: {ok}")
        compiled_s, numpy_s = [], []
        for _ in range(5):  # interleaved, medians: the machine may be shared
            compiled_s.append(timed(lambda: da.map_blocks(kernel, arr, dtype=x.dtype)
                                    .sum().compute()))
            numpy_s.append(timed(lambda: da.map_blocks(chain, arr, dtype=x.dtype)
                                 .sum().compute()))
        c, n = statistics.median(compiled_s), statistics.median(numpy_s)
        print(f"graph of 8 blocks (map_blocks + sum), median of 5: compiled {1e3 * c:.1f} ms, "
              f"NumPy blocks {1e3 * n:.1f} ms, speedup {n / c:.2f}x")
    finally:
        client.close()
        cluster.close()

    cluster, client = start_cluster(cache_dir)  # new worker processes, the same cache directory
    try:
        warm = client.run(first_call_seconds)
    finally:
        client.close()
        cluster.close()
    for label, times in (("cold (compiles)", cold), ("warm (shared cache)", warm)):
        shown = ", ".join(f"{1e3 * t:.0f} ms ({how})" for t, how in times.values())
        print(f"first task per worker, {label}: {shown}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
