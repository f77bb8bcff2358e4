"""numba's cache index under ``lock_numba_index``: two saves to one index at once keep both
keys and give them different data files (unlocked, the later rename drops the other's key)."""

from __future__ import annotations

import os
import threading

from numba.core import caching

from astcompiler.lower.numba.files import lock_numba_index, lock_path


def test_concurrent_index_saves_lose_nothing(tmp_path):
    lock_numba_index()
    first_loaded, release = threading.Event(), threading.Event()
    slow = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    fast = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    load = slow._load_index

    def load_then_wait():  # the slow saver has read the index and waits before rewriting it
        overloads = load()
        first_loaded.set()
        release.wait(timeout=10)
        return overloads

    slow._load_index = load_then_wait
    thread = threading.Thread(target=slow.save, args=("sig-a", b"code of a"))
    thread.start()
    first_loaded.wait(timeout=10)
    other = threading.Thread(target=fast.save, args=("sig-b", b"code of b"))
    other.start()
    other.join(0.5)  # unlocked it saves now, and the slow one's rewrite then drops its key;
    release.set()  # locked it waits for the slow one
    thread.join(10)
    other.join(10)
    reader = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    index = reader._load_index()
    assert sorted(index) == ["sig-a", "sig-b"], index
    assert len(set(index.values())) == 2, index  # each key its own data file
    assert reader.load("sig-a") == b"code of a" and reader.load("sig-b") == b"code of b"
    # the lock lives in astcompiler's cache folder, not beside numba's index
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".lock")]
    assert os.path.isfile(lock_path(reader._index_path))
