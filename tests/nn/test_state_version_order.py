"""The module-state version moves *after* each write (issue 11's race): a guard check in another
thread between the version bump and the write would otherwise validate the old state under the new
version and then skip the checks after the write."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import astcompiler.nn as nn
from astcompiler.nn.modules import module as module_state


@pytest.fixture
def bumps(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], bool]], list[bool]]:
    """Replace the version bump by one that records whether ``written()`` already holds."""
    def install(written: Callable[[], bool]) -> list[bool]:
        seen: list[bool] = []
        original = module_state._bump_state_version
        monkeypatch.setattr(module_state, "_bump_state_version",
                            lambda: (seen.append(written()), original())[1])
        return seen
    return install


def test_parameter_assignment_bumps_after_the_write(bumps) -> None:
    layer = nn.Linear(2, 2)
    weight = nn.Parameter(np.ones((2, 2)))
    seen = bumps(lambda: layer._parameters["weight"] is weight)
    layer.weight = weight
    assert seen and all(seen)


def test_plain_attribute_and_delete_bump_after_the_write(bumps) -> None:
    layer = nn.Linear(2, 2)
    seen = bumps(lambda: getattr(layer, "scale", None) == 3)
    layer.scale = 3
    assert seen == [True]
    seen_delete = bumps(lambda: not hasattr(layer, "scale"))
    del layer.scale
    assert seen_delete and all(seen_delete)


def test_registry_methods_bump_after_the_write(bumps) -> None:
    layer = nn.Linear(2, 2)
    buffer = np.zeros(2)
    seen = bumps(lambda: layer._buffers.get("running") is buffer)
    layer._buffers["running"] = buffer
    layer._buffers.update(running=buffer)
    layer._buffers.setdefault("running", buffer)
    assert seen == [True, True, True]
    gone = bumps(lambda: "running" not in layer._buffers)
    layer._buffers.pop("running")
    assert gone == [True]


def test_unchanged_attribute_does_not_bump(bumps) -> None:
    layer = nn.Linear(2, 2)
    layer.scale = 3
    before = module_state.state_version()
    layer.scale = layer.scale
    assert module_state.state_version() == before
