"""``astcompiler export`` of an entry whose wrapper runs NumPy steps (``np.sort``, ``np.cumsum``,
``np.linalg.norm``: the op registry's NumPy references, written into the module) and whose
function has defaults (the signature as written; the guard checks the defaults by identity).
The module runs where astcompiler, libcst and sympy cannot be imported; every answer, warning
and error is compared with the plain function's.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from astcompiler import cli
from astcompiler.ops import REGISTRY
from astcompiler.run.export import ExportError, op_reference

from .export_support import BLOCKED_HEADER

USER_FILE = '''\
import numpy as np

SHIFT = 1.0


def steps(x, scale=2.0, *, shift=SHIFT):
    y = x * scale + shift
    z = np.sort(y, axis=1)
    w = np.cumsum(z, axis=1)
    return w - np.linalg.norm(x)
'''

# (label, args, kwargs) as Python source: the importer and the plain call evaluate the same text
CASES = [
    ("n2", "rng(2).standard_normal((2, 16))", ""),
    ("n3", "rng(3).standard_normal((3, 16))", ", 2.0"),
    ("n9", "rng(9).standard_normal((9, 16))", ", shift=1.0"),
    ("overflow", "np.full((2, 16), 6e307)", ""),  # cumsum overflows; inf - inf in the kernel
]
BAD = [
    "[[0.5] * 16, [0.5] * 16]",
    "np.ones((3, 16), np.float32)",
    "np.ones((3, 16)), 3.0",
    "np.ones((3, 16)), shift=1",
    "np.ones((1, 16))",
]

IMPORTER = BLOCKED_HEADER + '''\
import steps_aot
rng = np.random.default_rng
result = {"warnings": {}, "errors": []}
for label, args, more in CASES:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = eval(f"steps_aot.steps({args}{more})")
    np.save(f"{sys.argv[1]}/{label}.npy", out)
    result["warnings"][label] = [[w.category.__name__, str(w.message), w.filename, w.lineno]
                                 for w in caught]
for bad in BAD:
    try:
        eval(f"steps_aot.steps({bad})")
        result["errors"].append(["no error", ""])
    except (TypeError, ValueError) as error:
        result["errors"].append([type(error).__name__, str(error)])
result["loaded"] = sorted(m for m in sys.modules
                          if m.split(".")[0] in ("astcompiler", "libcst", "sympy"))
result["signature"] = str(inspect.signature(steps_aot.steps))
exported, original = steps_aot.steps, steps_aot.___original
result["same_defaults"] = (exported.__defaults__ is original.__defaults__
                           and exported.__kwdefaults__ is original.__kwdefaults__)
print(json.dumps(result))
'''.replace("CASES", repr(CASES)).replace("BAD", repr(BAD))


def load_user_module(path: Path):
    spec = importlib.util.spec_from_file_location("model_steps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("export_steps")
    (root / "model_steps.py").write_text(USER_FILE, encoding="utf-8")
    out = root / "steps_aot.py"
    assert cli.main(["export", f"{root / 'model_steps.py'}:steps", "--example", "x=f64[N,16]",
                     "-o", str(out)]) == 0
    (root / "importer.py").write_text(IMPORTER, encoding="utf-8")
    run = subprocess.run([sys.executable, str(root / "importer.py"), str(root)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return root, json.loads(run.stdout)


@pytest.mark.slow  # one export (numba compiles) and one import in a process
def test_numpy_steps_answer_with_the_plain_functions_bits_and_warnings(exported):
    root, result = exported
    assert result["loaded"] == []
    user = load_user_module(root / "model_steps.py")
    rng = np.random.default_rng
    for label, args, more in CASES:
        with recorded() as caught:
            expected = eval(f"user.steps({args}{more})", {"user": user, "np": np, "rng": rng})
        assert bool(caught) == (label == "overflow"), label
        got = np.load(root / f"{label}.npy")
        assert got.dtype == expected.dtype and got.shape == expected.shape, label
        assert got.tobytes() == expected.tobytes(), label  # the same bits, NaNs included
        seen = [[w.category.__name__, str(w.message), w.filename, w.lineno] for w in caught]
        assert result["warnings"][label] == seen, label  # as NumPy words them, from the user's line


@contextlib.contextmanager
def recorded() -> Iterator[list]:
    """Records every warning (the importer's filter: "always")."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


@pytest.mark.slow  # one export (numba compiles) and one import in a process
def test_the_signature_keeps_the_defaults_and_the_guard_checks_them(exported):
    _, result = exported
    assert result["signature"] == "(x, scale=2.0, *, shift=1.0)"
    assert result["same_defaults"]
    assert result["errors"] == [
        ["TypeError", "steps(): x must be a numpy.ndarray (x: float64[N, 16]), got list"],
        ["TypeError", "steps(): x must have dtype float64 (x: float64[N, 16]), got float32"],
        ["ValueError", "steps(): scale must be 2.0 (the value it was exported for), got 3.0"],
        ["TypeError", "steps(): shift must be of type float, got int"],
        ["ValueError", "steps(): x must have a size of at least 2 in dimension 0 (sizes 0 and 1 "
                       "compile apart), got shape (1, 16)"],
    ]


def test_an_op_reference_travels_as_numpy_code_or_is_refused_by_name():
    source = op_reference("op_cumsum", REGISTRY.ops["cumsum"].impl, "cumsum")
    space: dict = {"np": np}
    exec(source, space)  # no astcompiler name in it: NumPy only
    x = np.arange(12.0).reshape(3, 4)
    assert space["op_cumsum"](x, axis=1).tobytes() == np.cumsum(x, axis=1).tobytes()
    assert "astcompiler" not in source and "fn = np.cumsum" in source
    assert op_reference("op_exp", np.exp, "exp") == "op_exp = np.exp"
    impl = REGISTRY.ops["ufunc_outer"].impl
    with pytest.raises(ExportError, match=r"the NumPy step 'ufunc_outer' runs astcompiler's "
                                          r"'\w+', which reads astcompiler's 'UFUNCS'"):
        op_reference("op_outer", impl, "ufunc_outer")
    assert inspect.signature(space["op_cumsum"]) == inspect.signature(
        REGISTRY.ops["cumsum"].impl).replace(
        parameters=[p.replace(annotation=p.empty)
                    for p in inspect.signature(REGISTRY.ops["cumsum"].impl).parameters.values()],
        return_annotation=inspect.Signature.empty)
