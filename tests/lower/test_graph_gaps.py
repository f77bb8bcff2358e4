"""The last structural gaps of the numba code generator (issue 10): loop-carried values nothing
reads are not stored, stores with run-time indices are fused into their kernels, and shape tests
already proved by the guards are not emitted. Each compares plain and compiled calls over several
calls with changing inputs and checks the generated code before/after. Loops run past
``config.unroll_limit`` so they stay loops (regions)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import astcompiler as ac
from astcompiler.graph import eliminate_dead_carried
from astcompiler.lower.eager import interpret
from astcompiler.lower.numba.loop_kernels import drop_dead_carried

T = 70  # loop trips: past config.unroll_limit


def outcome(fn, *args):
    """A call's value (shape, dtype, values) or its exception (class, message)."""
    try:
        value = fn(*args)
    except Exception as error:  # compared by class and message
        return type(error), str(error)
    return value.shape, value.dtype, value.tolist()


def structured_source(compiled) -> str:
    code = compiled.entries[0].output_code
    start = code.index("def structured_kernel")
    end = code.find("# ----", start)  # the kernels' sources follow, if there are any
    return code[start:end if end >= 0 else len(code)]


def kernel_signatures(compiled) -> list[str]:
    """``def kernel_...(...)`` lines of the serial kernels a structured function calls."""
    return re.findall(r"def (kernel_\w+)\((.*)\):", compiled.entries[0].output_code)


# -- dead carried values -----------------------------------------------------------------------


def stepped(q, u):
    q = q.copy()
    for _ in range(T):
        grad = q - np.roll(q, 1)  # carried (assigned in the loop) but read only in its trip
        flux = u * grad
        lap = np.roll(q, 1) + np.roll(q, -1) - 2.0 * q
        q = q + 0.01 * (lap - flux)
    return q


def stepped_returning_flux(q, u):
    q = q.copy()
    flux = np.zeros_like(q)
    for _ in range(T):
        grad = q - np.roll(q, 1)
        flux = u * grad
        q = q + 0.01 * (np.roll(q, -1) - q - flux)
    return q, flux


def window_sum(u, w, n):
    s = np.zeros(3)
    for i in range(n):
        dead = u[i:i + 3] * w  # its ValueError on a short window must still happen
        s = s + w
    return s


STEPPED = ac.compile(stepped, backend="numba")
STEPPED_FLUX = ac.compile(stepped_returning_flux, backend="numba")
WINDOW = ac.compile(window_sum, backend="numba")


def test_dead_carried_values_are_not_stored():
    rng = np.random.default_rng(0)
    for n in (8, 8, 13):
        q, u = rng.random(n), rng.random(n) - 0.5
        assert outcome(STEPPED, q, u) == outcome(stepped, q, u)
    source = structured_source(STEPPED)
    assert "grad_c" not in source and "flux_c" not in source and "lap_c" not in source
    assert "q_c" in source
    (name, params), = [s for s in kernel_signatures(STEPPED) if "roll" in s[1]
                       and not s[0].endswith("_parallel")]
    assert len([p for p in params.split(", ") if p.startswith("out_")]) == 1  # q only


def test_a_carried_value_read_after_the_loop_is_kept():
    rng = np.random.default_rng(1)
    for n in (6, 6, 9):
        q, u = rng.random(n), rng.random(n)
        got, want = STEPPED_FLUX(q, u), stepped_returning_flux(q, u)
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert "flux_c" in structured_source(STEPPED_FLUX)


def test_a_dead_value_whose_computation_raises_still_raises():
    u, w = np.arange(80.0), np.ones(3)
    for n in (70, 78, 71):  # 78: the window u[77:80] is short -> NumPy's ValueError
        assert outcome(WINDOW, u, w, n) == outcome(window_sum, u, w, n)


def _captured(fn, *args):
    compiled = ac.compile(fn, backend="eager")
    compiled(*args)
    return compiled.entries[0].graph


def loops_and_branches(a, flag):
    x = a * 2.0
    t = a
    k = 0
    y = z = a
    for i in range(T):
        t = a + i  # overwritten before each read; read after only where no call goes (below)
        k = i  # the same (a Python int)
        x = x + t
    while x.sum() > 1.0:
        y = x  # the same after the loop
        x = x * 0.5
    if flag.sum() > 0:
        z = x + 1.0  # the same after the branch
        x = x - 1.0
    if a.ndim == 0:  # decided at capture (a guard): the rewrite sees these reads, the graph none,
        return t, k, y, z  # so the slots stay carried until the graph pass drops them
    return x


def test_the_pass_drops_exactly_the_dead_slots_and_keeps_results():
    a, flag = np.arange(4.0), np.ones(2)
    graph = _captured(loops_and_branches, a, flag)
    regions = [n for n in graph.nodes if n.op == "region"]
    before = [r.info.n_carried for r in regions]
    dropped = drop_dead_carried(graph)
    after = [r.info.n_carried for r in regions]
    assert dropped == sum(before) - sum(after) and dropped >= 3
    assert all(len(r.info.names) == r.info.n_carried for r in regions)
    for r in regions:  # placeholders and outputs of each subgraph follow the slots
        lead = 1 if r.target == "for_range" else 0
        for sub in r.info.subgraphs.values():
            assert len(sub.placeholders) == lead + r.info.n_carried + r.info.n_captured
    for sample in (a, a + 3.0, -a):
        # the first output is the result; unused ops that may warn follow it (passes.output_unused)
        got, want = interpret(graph, (sample, flag))[0], loops_and_branches(sample, flag)
        assert np.array_equal(got, want)
    assert drop_dead_carried(graph) == 0  # a fixpoint


def test_the_pass_needs_the_reader_of_each_slot():
    a, flag = np.arange(4.0), np.ones(2)
    graph = _captured(loops_and_branches, a, flag)
    # a caller that cannot say which slot a user reads keeps every slot
    assert eliminate_dead_carried(graph, lambda user: None, lambda node: False) == 0


# -- fused stores with run-time indices -------------------------------------------------------


def rows(ey, hz):
    ey = ey.copy()
    for t in range(ey.shape[0]):
        ey[t, :] = hz[t, :] * 0.5 + ey[t, :]
    return ey


def rows_reversed(ey, hz, k):
    ey = ey.copy()
    for t in range(T):
        ey[-(t + 1), ::2] = hz[t, ::2] * 2.0 - 1.0
        ey[k, 1::2] = hz[t, 1::2]  # k out of range -> NumPy's IndexError
    return ey


def windows(u, k, n):
    u = u.copy()
    for i in range(n):
        u[i:i + k] = u[i:i + k] * 0.5 + 1.0  # shrinks near the end of u: NumPy clips
    return u


def shifted(u, n):
    u = u.copy()
    for i in range(n):
        u[i + 1:i + 4] = u[i:i + 3] * 2.0  # overlaps the read: NumPy reads all of it first
    return u


def backwards(u, w, n):
    u = u.copy()
    for i in range(n):
        u[i + 3:i:-1] = w * 1.5  # a negative step; a short view -> NumPy's ValueError
    return u


ROWS = ac.compile(rows, backend="numba")
ROWS_REVERSED = ac.compile(rows_reversed, backend="numba")
WINDOWS = ac.compile(windows, backend="numba")
SHIFTED = ac.compile(shifted, backend="numba")
BACKWARDS = ac.compile(backwards, backend="numba")


def test_a_row_store_is_fused_into_its_kernel():
    rng = np.random.default_rng(2)
    for n in (T, T, T + 3):
        ey, hz = rng.random((n, 5)), rng.random((n, 5))
        assert outcome(ROWS, ey, hz) == outcome(rows, ey, hz)
    source = structured_source(ROWS)
    assert re.search(r"view_\w+ = copy\w*\[i, :\]", source)
    assert not re.search(r"copy\w*\[i, :\] = ", source.split("else:")[-1])  # no separate copy-in
    assert "np.empty" not in source.split("for i in")[-1].split("else:")[-1]


def test_negative_indices_steps_and_index_errors():
    rng = np.random.default_rng(3)
    ey, hz = rng.random((T, 6)), rng.random((T, 6))
    for k in (0, -1, 5, T, -T - 1):
        assert outcome(ROWS_REVERSED, ey, hz, k) == outcome(rows_reversed, ey, hz, k)
    assert "view_" in structured_source(ROWS_REVERSED)


def test_a_window_store_clips_as_numpy():
    u = np.arange(80.0)
    for k, n in ((3, 70), (3, 79), (5, 80), (2, 72)):
        assert outcome(WINDOWS, u, k, n) == outcome(windows, u, k, n)
    assert "_ac_slice_len(" in structured_source(WINDOWS)


def test_a_store_overlapping_its_read_goes_through_a_buffer():
    u = np.arange(80.0)
    for n in (70, 76, 77, 78):  # from 77 on the destination is shorter: NumPy's ValueError
        assert outcome(SHIFTED, u, n) == outcome(shifted, u, n)
    source = structured_source(SHIFTED)
    assert "_ac_may_share_memory(" in source and "tmp_" in source


def test_a_store_with_a_negative_step_and_numpys_value_error():
    u, w = np.arange(80.0), np.arange(3.0)
    for n in (70, 77, 78, 70):  # from 78 on, u[80:77:-1] has two elements
        assert outcome(BACKWARDS, u, w, n) == outcome(backwards, u, w, n)
    error = outcome(BACKWARDS, u, w, 78)
    assert error[0] is ValueError and "could not broadcast input array from shape (3,)" in error[1]


# -- shape tests proved by the guards --------------------------------------------------------


def test_guarded_shapes_need_no_tests_but_windows_keep_theirs():
    top = structured_source(STEPPED)
    assert ".shape[0] == " not in top  # q, u guarded; rolls of q follow q; q_c by induction
    window = structured_source(WINDOW)
    # u[i:i + 3] may be shorter on a later trip: the kernel's operands are tested against it
    assert "if not (w.shape[0] == getitem.shape[0]" in window


@pytest.mark.parametrize("n", [5, 9])
def test_dynamic_sizes_still_compare_equal(n):
    rng = np.random.default_rng(n)
    q, u = rng.random(n), rng.random(n)
    assert outcome(STEPPED, q, u) == outcome(stepped, q, u)


def test_the_slice_length_helper_is_pythons():
    """``_ac_slice_len`` (run as plain Python) against ``slice.indices`` on a grid of bounds."""
    from types import SimpleNamespace

    from astcompiler.lower.numba.loop_kernels import SLICE_LEN

    namespace = {"numba": SimpleNamespace(njit=lambda **options: (lambda fn: fn))}
    exec(SLICE_LEN, namespace)
    slice_len = namespace["_ac_slice_len"]
    bounds = [None, -9, -5, -1, 0, 1, 3, 5, 9]
    for n in (0, 1, 5):
        for start in bounds:
            for stop in bounds:
                for step in (None, -3, -1, 1, 2):
                    want = len(range(*slice(start, stop, step).indices(n)))
                    got = slice_len(start or 0, start is not None, stop or 0, stop is not None,
                                    1 if step is None else step, n)
                    assert got == want, (start, stop, step, n)
    assert slice_len(0, False, 0, False, 0, 5) == -1  # a zero step: the array code raises


def third_of_window(u, n):
    s = 0.0
    for i in range(n):
        w = u[i:i + 3]
        s = s + w[2]  # proven in range for the traced length 3 only: near the end w is shorter
    return s


THIRD = ac.compile(third_of_window, backend="numba")


def test_a_constant_index_into_a_shrinking_window_raises_numpys_index_error():
    u = np.arange(80.0)
    for n in (70, 79, 78, 70):  # 79: w = u[78:81] has two elements -> IndexError
        assert outcome(lambda *a: np.asarray(THIRD(*a)), u, n) == \
            outcome(lambda *a: np.asarray(third_of_window(*a)), u, n)
    assert "_ac_ix(2, getitem.shape[0], 0)" in structured_source(THIRD)
