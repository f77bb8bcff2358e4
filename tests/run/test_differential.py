"""Property-based differential test: random NumPy programs, compiled == eager on every backend.

Programs are generated as source text (pointwise chains with broadcasting, reductions with
axis/keepdims, slicing with steps), written to a real module so the compiler can read them.
"""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import BACKENDS, assert_same

import astcompiler as ac

UNARY = ["np.sin({})", "np.exp(-np.abs({}))", "np.sqrt(np.abs({}))", "-{}", "np.tanh({})",
         "np.floor({})", "np.abs({})"]
BINARY = ["({} + {})", "({} * {})", "({} - {})", "np.maximum({}, {})", "np.minimum({}, {})",
          "np.where({} > 0, {}, 0.5)"]
SCALARS = ["2.0", "3", "0.5"]
REDUCTIONS = ["{}.sum(axis={axis}, keepdims={keep})", "{}.max(axis={axis}, keepdims={keep})",
              "{}.mean(axis={axis}, keepdims={keep})", "np.min({}, axis={axis}, keepdims={keep})"]
SLICES = ["{}[::2]", "{}[1:]", "{}[..., ::-1]", "{}[:, 1:3]"]

_counter = itertools.count()


@st.composite
def programs(draw):
    lines = ["    v0 = x", "    v1 = y"]
    names = ["v0", "v1"]
    for step in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "reduce", "slice"]))
        a = draw(st.sampled_from(names))
        if kind == "unary":
            expr = draw(st.sampled_from(UNARY)).format(a)
        elif kind == "binary":
            b = draw(st.sampled_from(names))
            expr = draw(st.sampled_from(BINARY)).format(a, b)
        elif kind == "scalar":
            expr = f"({a} * {draw(st.sampled_from(SCALARS))})"
        elif kind == "reduce":
            template = draw(st.sampled_from(REDUCTIONS))
            expr = template.format(a, axis=draw(st.sampled_from(["-1", "0", "None", "(0, 1)"])),
                                   keep="True")
        else:
            expr = draw(st.sampled_from(SLICES)).format(a)
        name = f"v{len(names)}"
        lines.append(f"    {name} = {expr}")
        names.append(name)
    lines.append(f"    return {names[-1]}")
    return "\n".join(lines)


def load_program(body: str, folder) -> object:
    name = f"prog_{next(_counter)}"
    path = folder / f"{name}.py"
    path.write_text("import numpy as np\n\n\ndef program(x, y):\n" + body + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


def run_case(body: str, backend: str, folder, dtype) -> None:
    program = load_program(body, folder)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(dtype)
    y = rng.standard_normal((1, 6)).astype(dtype)
    try:
        with np.errstate(all="ignore"):
            expected = program(x.copy(), y.copy())
    except (ValueError, IndexError):
        return  # shapes that NumPy itself rejects
    with np.errstate(all="ignore"):
        actual = ac.compile(program, backend=backend)(x.copy(), y.copy())
    assert_same(actual, expected)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "numba"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=programs(), dtype=st.sampled_from([np.float64, np.float32]))
def test_random_programs_interpreted(body, dtype, backend, tmp_path):
    run_case(body, backend, tmp_path, dtype)


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba backend not available")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=programs(), dtype=st.sampled_from([np.float64, np.float32]))
def test_random_programs_numba(body, dtype, tmp_path):
    run_case(body, "numba", tmp_path, dtype)
