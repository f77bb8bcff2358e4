"""numba's simulator gives a block's threads one shared array per source line by a look-up then
a store without a lock, so threads of one block could each make their own array and a block tree
reduction lost their values (a `(x * y).sum()` of 4.0 for 18.67, once in a CI run). The CUDA
target serialises those allocations when it runs on the simulator; these tests make the threads
switch as often as Python allows and check every thread of a block sees one array."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.lower.numba.gpu.devices import simulator_enabled

pytestmark = pytest.mark.skipif(not simulator_enabled(), reason="the simulator's own bug")


@pytest.fixture
def eager_switches():
    """Python switches threads after every microsecond (the default is 5 ms)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def allocations_of_one_block(threads: int):
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    shared, got = FakeCUDAShared(0), [None] * threads
    start = threading.Barrier(threads)

    def thread(i):
        start.wait()
        got[i] = shared.array(4, np.float64)

    running = [threading.Thread(target=thread, args=(i,)) for i in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    return got


def test_every_thread_of_a_block_gets_the_same_shared_array(eager_switches):
    ac.compile(lambda x: x + 1, device="cuda")  # the CUDA target serialises the allocations
    for _ in range(100):
        arrays = allocations_of_one_block(8)
        assert all(a is arrays[0] for a in arrays)
        assert arrays[0].shape == (4,) and arrays[0].dtype == np.float64


def dot(x, y):
    return (x * y).sum()


def test_block_tree_reductions_keep_every_threads_value(eager_switches):
    compiled = ac.compile(dot, device="cuda", dynamic=True)
    x, y = np.linspace(-2.0, 2.0, 7), np.arange(7.0)
    for _ in range(20):
        assert compiled(x, y) == dot(x, y)
