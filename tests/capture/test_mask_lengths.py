"""Lengths of boolean-mask reads (and ``nonzero``) read at run time inside loops and branches.

``sel = data[labels == i]`` has a size only the data decides (an unbacked size). Reading it,
``len(sel)``, ``sel.shape[0]``, ``if len(sel) > 0:``, was a graph break, so the whole loop of
a k-means-style centroid update ran in Python (slower than the plain call: the split's
Python loop plus the prefix's overhead). The size now has the mask read as its run-time
source, like a data-bounded slice's length (``capture/sizes/data_lengths.py``): a traced int
inside the loop or branch that made it; after it, a graph break as before.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import counted, outcome

RNG = np.random.default_rng(11)


def _clusters(n: int, k: int, missing: tuple = ()):
    data = RNG.standard_normal((n, 3))
    labels = RNG.integers(0, k, n)
    for m in missing:
        labels[labels == m] = (m + 1) % k
    return data, labels, k


def centroids(data, labels, k):
    out = np.zeros((k, data.shape[1]))
    for i in range(k):
        sel = data[labels == i]
        if len(sel) > 0:
            out[i] = sel.mean(axis=0)
    return out


def cluster_sizes(data, labels, k):
    sizes = np.zeros(k, dtype=np.int64)
    for i in range(k):
        members = data[labels == i]
        sizes[i] = members.shape[0] + 1000 * members.size
    return sizes


def spread(data, labels, k):
    out = np.full(k, -1.0)
    for i in range(k):
        column = data[labels == i, 0]
        if column.shape[0] > 1:
            out[i] = column.max() - column.min()
    return out


def first_members(data, labels, k):
    out = np.zeros(k)
    for i in range(k):
        sel = data[labels == i, 0]
        total = 0.0
        for j in range(min(len(sel), 3)):
            total += sel[j]
        out[i] = total
    return out


FUNCTIONS = [centroids, cluster_sizes, spread, first_members]


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_mask_sizes_from_the_data_on_every_trip_and_call(fn, backend):
    counter, counting = counted(backend)
    compiled = ac.compile(fn, backend=counting)
    for args in (_clusters(400, 70, (5,)), _clusters(400, 70), _clusters(400, 70, (0, 69))):
        got = outcome(compiled, copy.deepcopy(args))
        want = outcome(fn, copy.deepcopy(args))
        assert repr(got) == repr(want)
    assert counter.frame_count == 1
    assert [e.break_reason for e in compiled.entries if e.break_reason is not None] == []


def test_a_mask_size_is_a_python_int_where_python_reads_it():
    def sizes(x, k):
        found = []
        for i in range(k):
            n = len(x[x > i])
            found.append(n)
        return found, [type(n) for n in found]

    compiled = ac.compile(sizes, backend="numba")
    x = np.arange(100.0)
    for k in (70, 80):
        assert repr(outcome(compiled, (x, k))) == repr(outcome(sizes, (x, k)))


def test_a_mask_size_read_after_its_loop_breaks_the_graph_and_stays_right():
    def last_size(x, k):
        for i in range(k):
            sel = x[x > i]
        return len(sel)

    compiled = ac.compile(last_size, backend="numba")
    x = np.arange(100.0)
    for k in (70, 90):
        assert repr(outcome(compiled, (x, k))) == repr(outcome(last_size, (x, k)))
