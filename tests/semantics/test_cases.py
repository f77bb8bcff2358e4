"""Every semantics case on every backend: plain and compiled must not differ (issue 9).

Cases listed in ``known_failures.py`` differ today and run as ``xfail(strict=True)``; regenerate
that file with ``.venv/bin/python -m tests.semantics.survey --write`` after a fix.
"""

from __future__ import annotations

import pytest

from tests.helpers import BACKENDS as AVAILABLE

from . import program_gen
from .catalog import all_cases, case_params
from .harness import Case, check_case
from .known_failures import KNOWN_FAILURES


def known_reason(case: Case, backend: str) -> str | None:
    return KNOWN_FAILURES.get(f"{case.id}[{backend}]") or KNOWN_FAILURES.get(case.id)


def params() -> list:
    out = []
    for case, backend in case_params():
        marks = []
        if backend not in AVAILABLE:
            marks.append(pytest.mark.skip(reason=f"backend {backend} not available"))
        reason = known_reason(case, backend)
        if reason:
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
        out.append(pytest.param(case, backend, id=f"{case.id}-{backend}", marks=marks))
    return out


@pytest.mark.parametrize("case, backend", params())
def test_case(case: Case, backend: str) -> None:
    check_case(case, backend)


def test_catalog_size_and_ids() -> None:
    cases = all_cases()
    assert len(cases) >= 400
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    assert all(c.id.startswith(c.group + "/") for c in cases)


def test_known_failures_name_real_cases() -> None:
    pairs = {f"{c.id}[{b}]" for c, b in case_params()} | {c.id for c in all_cases()}
    pairs |= {f"generated/seed_{seed}[{b}]" for seed in range(program_gen.SURVEY_SEEDS)
              for b in program_gen.GENERATED_BACKENDS}
    stale = sorted(key for key in KNOWN_FAILURES if key not in pairs)
    assert not stale, f"known_failures.py names cases that do not exist: {stale}"
