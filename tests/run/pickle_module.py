"""Compiled functions for ``test_pickle_by_reference.py`` (a module: pickle finds them by name)."""

from __future__ import annotations

import numpy as np

import astcompiler as ac


@ac.compile(backend="eager")
def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def plain(x):
    return x * 2


fast = ac.compile(plain, backend="eager")  # the compiled one under another name


class Scaler:
    @ac.compile(backend="eager")
    def scale(self, x):
        return x * 3

    @staticmethod
    @ac.compile(backend="eager")
    def double(x):
        return x * 2


def make_local():
    @ac.compile(backend="eager")
    def local(x):
        return x + 1
    return local
