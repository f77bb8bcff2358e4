"""Generated Python-level programs, plain versus compiled (eager and numba backends).

``program_gen.generate(seed)`` builds a module (ints, big ints, floats, strings, lists, dicts,
branches, bounded loops, helper calls, a closure, caught exceptions, prints, graph breaks, small
arrays); it is written to a real file (the compiler reads source) and imported afresh for the plain
and for the compiled run, then compared call by call by the same harness as the hand-written cases.

Hypothesis draws the seed. Seeds ``0..SURVEY_SEEDS-1`` are measured by the survey
(``python -m tests.semantics.survey --write``): those that differ today are in
``known_failures.py`` as ``"generated/seed_N[backend]"`` and run below as strict xfails, and the
quick random runs (which draw from that range) skip them. The long run (``-m slow``) draws from
a large range and fails on any difference except programs with a known-bug feature.
"""

from __future__ import annotations

import pathlib
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.helpers import BACKENDS as AVAILABLE

from . import program_gen
from .harness import check_case
from .known_failures import KNOWN_FAILURES

BACKENDS = [b for b in program_gen.GENERATED_BACKENDS if b in AVAILABLE]

# "generated/seed_N[backend]" entries of known_failures.py: (seed, backend) -> reason
KNOWN_SEEDS: dict[tuple[int, str], str] = {
    (int(m.group(1)), m.group(2)): reason
    for key, reason in KNOWN_FAILURES.items()
    if (m := re.fullmatch(r"generated/seed_(\d+)\[(\w+)\]", key))}

# The long run tolerates programs with one of these features (``program_gen.features``) while
# the bug they hit is open (a hand-written case keeps it visible); any other difference fails.
KNOWN_FEATURES: dict[str, str] = {}


def run_seed(seed: int, backend: str, folder: pathlib.Path, *, long_run: bool = False) -> None:
    """Compare the plain and compiled runs of the program of ``seed``."""
    if not long_run and (seed, backend) in KNOWN_SEEDS:
        return  # a known difference: test_generated_regressions holds it as a strict xfail
    try:
        check_case(program_gen.generated_case(seed, folder), backend)
    except AssertionError as exc:
        if long_run and program_gen.features(seed) & set(KNOWN_FEATURES):
            return
        raise AssertionError(f"{exc}\n--- program (seed {seed}) ---\n"
                             f"{program_gen.generate(seed)}") from None


PHASES = [Phase.explicit, Phase.generate]  # a seed does not shrink: report it as drawn
QUICK = settings(max_examples=12, deadline=None, derandomize=True, database=None, phases=PHASES,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])
QUICK_NUMBA = settings(QUICK, max_examples=8)
LONG = settings(max_examples=400, deadline=None, database=None, phases=PHASES,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SURVEYED = st.integers(0, program_gen.SURVEY_SEEDS - 1)


@pytest.mark.skipif("eager" not in AVAILABLE, reason="eager backend not available")
@QUICK
@given(seed=SURVEYED)
def test_generated_programs_eager(seed: int, tmp_path: pathlib.Path) -> None:
    run_seed(seed, "eager", tmp_path)


@pytest.mark.skipif("numba" not in AVAILABLE, reason="numba backend not available")
@QUICK_NUMBA
@given(seed=SURVEYED)
def test_generated_programs_numba(seed: int, tmp_path: pathlib.Path) -> None:
    run_seed(seed, "numba", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@LONG
@given(seed=st.integers(program_gen.SURVEY_SEEDS, 10**6))
def test_generated_programs_long(seed: int, backend: str, tmp_path: pathlib.Path,
                                 request: pytest.FixtureRequest) -> None:
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the long run: select it with -m slow")
    run_seed(seed, backend, tmp_path, long_run=True)


@pytest.mark.parametrize("seed, backend", [
    pytest.param(seed, backend, id=f"seed{seed}-{backend}",
                 marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
    for (seed, backend), reason in sorted(KNOWN_SEEDS.items()) if backend in AVAILABLE])
def test_generated_regressions(seed: int, backend: str, tmp_path: pathlib.Path) -> None:
    check_case(program_gen.generated_case(seed, tmp_path), backend)


def test_generator_is_deterministic() -> None:
    assert program_gen.generate(7) == program_gen.generate(7)
    first, second = program_gen.calls(7), program_gen.calls(7)
    assert [c[1:] for c in first] == [c[1:] for c in second]
    for seed in range(50):
        compile(program_gen.generate(seed), f"gen_{seed}.py", "exec")
