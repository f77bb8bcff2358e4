"""``v is np.True_`` of a NumPy bool scalar: NumPy has two singletons, so identity is truth.

The capture compared the stand-in of ``(x > 2)[0]`` with the real ``np.False_`` by identity:
always distinct, decided once at capture (a loop counting ``(x[i] > 2) is np.True_`` counted
nothing), and an ``np.bool_`` argument compared with ``np.True_`` was guarded as distinct after
answering wrongly on its first call. Each case: the plain call's value, type and warnings.
"""

from __future__ import annotations

import numpy as np
import pytest

import astcompiler as ac
from tests.helpers import outcome

TRUE, FALSE = np.True_, np.False_


def element_identities(x):
    return (x > 2)[0] is np.False_, (x > 2)[0] is np.True_, (x > 2)[4] is np.True_


def other_spellings(x):
    return (x > 2)[0] is not FALSE, (x[0] > 2) is TRUE, (x > 2)[0] is True, (x > 2)[0] is False


def argument_identity(x, flag):
    return flag is np.True_, (x > 2)[0] is flag


def count_in_loop(x):
    count = 0
    for i in range(x.shape[0]):
        if (x[i] > 2) is np.True_:
            count += 1
    return count


CASES = [(element_identities, (np.arange(5.0),)), (other_spellings, (np.arange(5.0),)),
         (count_in_loop, (np.arange(100.0),)), (count_in_loop, (-np.arange(100.0),))]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in
                                                 enumerate(CASES)])
def test_identity_with_numpys_bool_singletons(fn, args):
    assert repr(outcome(ac.compile(fn), args)) == repr(outcome(fn, args))


def test_a_numpy_bool_argument_is_compared_by_value_and_guarded():
    compiled = ac.compile(argument_identity)
    x = np.arange(5.0)
    for flag in (np.True_, np.False_, np.True_):
        assert repr(outcome(compiled, (x, flag))) == repr(outcome(argument_identity, (x, flag)))
    assert len(compiled.entries) == 2  # one per singleton
