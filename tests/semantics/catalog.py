"""All semantics cases, in group order."""

from __future__ import annotations

import importlib

from .harness import Case

CASE_MODULES = ("cases_symbolic", "cases_guards", "cases_side_effects", "cases_control_flow",
                "cases_objects", "cases_python", "cases_numpy")


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for name in CASE_MODULES:
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise
            continue
        cases.extend(module.CASES.cases)
    return cases


def case_params() -> list[tuple[Case, str]]:
    """Every (case, backend) pair the case runs on."""
    return [(case, backend) for case in all_cases() for backend in case.backends]
