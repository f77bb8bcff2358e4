"""Compiled functions pickle by reference, as functions do: ``pickle.loads(pickle.dumps(f))``
is ``f`` itself (its entries too), found again by module and name."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

import astcompiler as ac
from tests.run import pickle_module as m

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_decorated_module_function_unpickles_to_itself(protocol):
    x = np.arange(4.0)
    expected = m.softmax.__wrapped__(x)
    np.testing.assert_array_equal(m.softmax(x), expected)
    entries = m.softmax.entries
    clone = pickle.loads(pickle.dumps(m.softmax, protocol=protocol))
    assert clone is m.softmax
    assert clone.entries == entries  # the same cache: no recompile
    np.testing.assert_array_equal(clone(x), expected)


def test_names_that_pickle_uses_are_the_functions():
    assert (m.softmax.__module__, m.softmax.__qualname__) == (m.__name__, "softmax")
    assert m.softmax.__wrapped__.__code__.co_name == "softmax"
    assert m.fast.__wrapped__ is m.plain


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_compiled_under_another_name_unpickles_to_itself(protocol):
    assert pickle.loads(pickle.dumps(m.fast, protocol=protocol)) is m.fast
    assert pickle.loads(pickle.dumps(m.plain, protocol=protocol)) is m.plain  # still the original


def test_methods_and_static_methods_unpickle_to_themselves():
    scaler = m.Scaler()
    assert pickle.loads(pickle.dumps(m.Scaler.scale)) is m.Scaler.scale
    assert pickle.loads(pickle.dumps(m.Scaler.double)) is m.Scaler.double
    bound = pickle.loads(pickle.dumps(scaler.scale))
    np.testing.assert_array_equal(bound(np.ones(2)), scaler.scale(np.ones(2)))


def test_a_compiled_function_inside_a_container_pickles():
    payload = {"fn": m.softmax, "also": [m.fast]}
    clone = pickle.loads(pickle.dumps(payload))
    assert clone["fn"] is m.softmax and clone["also"][0] is m.fast


def test_a_local_compiled_function_says_what_to_do():
    local = m.make_local()
    with pytest.raises(pickle.PicklingError) as info:
        pickle.dumps(local)
    message = str(info.value)
    assert message.startswith(f"cannot pickle {local!r}: compiled functions are pickled by "
                              "reference")
    assert f"neither {m.__name__}.make_local.<locals>.local nor another name" in message
    assert "compile a module-level function" in message


def test_another_process_finds_it_by_name():
    """The pickle names the module and function: a fresh process imports and finds them."""
    data = pickle.dumps(m.softmax)
    code = ("import pickle, sys, numpy as np; f = pickle.loads(sys.stdin.buffer.read()); "
            "from tests.run import pickle_module as m; assert f is m.softmax; "
            "print(type(f).__name__, f(np.zeros(2)).tolist())")
    done = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                          timeout=120, cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == ["CompiledFunction", "[0.5,", "0.5]"]


def test_copy_is_a_new_object_deepcopy_the_same():
    """``copy.copy`` keeps making a new compiled function (as before pickling by reference);
    ``copy.deepcopy`` returns it unchanged, as it does for functions."""
    x = np.arange(3.0)
    clone = copy.copy(m.fast)
    assert clone is not m.fast and type(clone) is not type(m.fast)
    np.testing.assert_array_equal(clone(x), m.plain(x))
    assert copy.deepcopy(m.fast) is m.fast
    assert copy.deepcopy(m.plain) is m.plain
    assert isinstance(clone, ac.CompiledFunction)
