"""Cold compile (issue 11, lever 6): the ``prange`` twin of a kernel is JIT-compiled only when an
input above ``config.parallel_threshold`` arrives, and a loop region's overlapping store copies
its temporary without numba's ``a[...] = b`` (whose broadcast error message costs seconds of
compile time). Behaviour: results equal the plain call's; which numba functions got compiled."""

from __future__ import annotations

import re
import sys

import numpy as np

import astcompiler as ac

SMALL, LARGE = 8, 4096
STEPS = 70  # past config.unroll_limit: the loop stays a loop (a region)


def two(x, y):
    return x * y + 1.0


def shift_in_place(a, steps):
    for _ in range(steps):
        a[1:] = a[:-1] * 0.5 + 1.0
    return a


def _kernels(output_code: str) -> dict[str, object]:
    """The numba dispatchers the wrapper imports, by name."""
    found = {}
    for module, names in re.findall(r"^from (kernel_\w+) import (.+)$", output_code, re.M):
        for name in (n.strip() for n in names.split(",")):
            found[name] = getattr(sys.modules[module], name)
    return found


def test_the_prange_twin_compiles_only_for_a_large_input():
    with ac.config.patch(parallel_threshold=1024):
        compiled = ac.compile(two, backend="numba", dynamic=True)
        x = np.linspace(0.0, 1.0, SMALL)
        np.testing.assert_array_equal(compiled(x, x), two(x, x))
    kernels = _kernels(compiled.entries[0].output_code)
    serial = [k for name, k in kernels.items() if not name.endswith("_parallel")]
    twins = [k for name, k in kernels.items() if name.endswith("_parallel")]
    assert serial and twins
    assert all(k.signatures for k in serial) and not any(k.signatures for k in twins)
    big = np.linspace(0.0, 1.0, LARGE)
    np.testing.assert_array_equal(compiled(big, big), two(big, big))
    assert any(k.signatures for k in twins) and len(compiled.entries) == 1


def test_an_overlapping_store_in_a_loop_copies_without_numbas_broadcast():
    compiled = ac.compile(shift_in_place, backend="numba")
    for n in (9, 9):
        a, b = np.arange(float(n)), np.arange(float(n))
        got, want = compiled(a, STEPS), shift_in_place(b, STEPS)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(a, b)  # the write into the argument
        assert got is a
    code = compiled.entries[0].output_code
    body = code[code.index("def structured_kernel"):]
    body = body[:body.find("# ----") if "# ----" in body else len(body)]
    assert "_ac_copy_same_shape(" in body and "[...] = tmp_" not in body, body
