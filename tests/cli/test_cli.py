"""Tests of the command line: the --example grammar, error paths, rewrite/show/explain end to end.

The end-to-end tests (class ``TestEndToEnd``) need the compiler core (``astcompiler.compile``,
``show``, ``explain`` and ``astcompiler.rewrite.rewrite_module_source``); everything else runs on
the CLI module alone.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from astcompiler import cli
from astcompiler.cli import ArraySpec, CliError, ScalarSpec


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


@pytest.fixture
def isolated_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Undo what importing a user file does: its folder on sys.path, its module in sys.modules."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        module_file = getattr(sys.modules[name], "__file__", None) or ""
        if module_file.startswith(str(tmp_path)):
            del sys.modules[name]


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Call ``cli.main`` and return (exit status, stdout, stderr)."""
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, *needles: str, expected_code: int = 2) -> None:
    """A usage error: the exit status, one line on stderr, no traceback, and the given words."""
    assert code == expected_code, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("astcompiler"), err
    for needle in needles:
        assert needle in err, (needle, err)


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


PLAIN_MODULE = """\
    import numpy as np

    def scale(x, n):
        return x * n + 1.0

    def helper(a):
        return a

    VALUE = 3
"""


# ------------------------------------------------------------------------------------------
# --example grammar (unit)
# ------------------------------------------------------------------------------------------


class TestSplitTokens:
    def test_spaces_separate_tokens(self) -> None:
        assert cli.split_tokens("x=f64[N,3]  n=int") == ["x=f64[N,3]", "n=int"]

    def test_spaces_inside_brackets_stay(self) -> None:
        assert cli.split_tokens(" x=f64[N, 3]\tw=f32[ 4 ] ") == ["x=f64[N, 3]", "w=f32[ 4 ]"]

    def test_empty(self) -> None:
        assert cli.split_tokens("   ") == []


class TestParseToken:
    def test_array_with_named_and_fixed_dims(self) -> None:
        assert cli.parse_token("x=f64[N,3]") == ArraySpec("x", "float64", ("N", 3))

    def test_array_spaces_in_dims(self) -> None:
        assert cli.parse_token("x=f32[ N , M ]") == ArraySpec("x", "float32", ("N", "M"))

    def test_zero_dim_array(self) -> None:
        assert cli.parse_token("s=float64[]") == ArraySpec("s", "float64", ())

    def test_trailing_comma(self) -> None:
        assert cli.parse_token("v=i32[4,]") == ArraySpec("v", "int32", (4,))

    def test_zero_size(self) -> None:
        assert cli.parse_token("e=u8[0]") == ArraySpec("e", "uint8", (0,))

    @pytest.mark.parametrize("alias, name", sorted(cli.DTYPE_ALIASES.items()))
    def test_every_alias_is_a_numpy_dtype(self, alias: str, name: str) -> None:
        spec = cli.parse_token(f"x={alias}[2]")
        assert isinstance(spec, ArraySpec)
        assert np.dtype(spec.dtype) == np.dtype(name)

    @pytest.mark.parametrize("name", ["float64", "float32", "int64", "int8", "uint8", "bool",
                                      "complex64", "complex128"])
    def test_numpy_names(self, name: str) -> None:
        assert cli.parse_token(f"x={name}[2]") == ArraySpec("x", name, (2,))

    def test_int_and_bool_arrays(self) -> None:
        assert cli.parse_token("i=int[3]") == ArraySpec("i", "int64", (3,))
        assert cli.parse_token("m=bool[3]") == ArraySpec("m", "bool", (3,))
        assert cli.parse_token("m=b8[3]") == ArraySpec("m", "bool", (3,))

    @pytest.mark.parametrize("token, expected", [
        ("n=int", ScalarSpec("n", "int", None)),
        ("n=int:5", ScalarSpec("n", "int", 5)),
        ("n=int:-3", ScalarSpec("n", "int", -3)),
        ("n=int:N", ScalarSpec("n", "int", "N")),
        ("a=float", ScalarSpec("a", "float", None)),
        ("a=float:0.25", ScalarSpec("a", "float", 0.25)),
        ("a=float:-1e3", ScalarSpec("a", "float", -1000.0)),
        ("a=float:3", ScalarSpec("a", "float", 3.0)),
        ("b=bool", ScalarSpec("b", "bool", None)),
        ("b=bool:false", ScalarSpec("b", "bool", False)),
        ("b=bool:True", ScalarSpec("b", "bool", True)),
        ("b=bool:1", ScalarSpec("b", "bool", True)),
        ("b=bool:0", ScalarSpec("b", "bool", False)),
    ])
    def test_scalars(self, token: str, expected: ScalarSpec) -> None:
        assert cli.parse_token(token) == expected

    @pytest.mark.parametrize("token, words", [
        ("x", ["form name=type"]),
        ("=f64[3]", ["form name=type"]),
        ("x=", ["form name=type"]),
        ("x=f64[N,", ["brackets"]),
        ("x=f64]3[", ["form name=type"]),
        ("x=f64[[3]]", ["form name=type"]),
        ("x=f64", ["needs its dims", "x=f64[N]"]),
        ("x=f64[-1]", ["dimension '-1'"]),
        ("x=f64[3.5]", ["dimension '3.5'"]),
        ("x=f64[N,,3]", ["dimension ''"]),
        ("x=f64:3", ["':value' is only allowed"]),
        ("n=int:1.5", ["'1.5' is not an int"]),
        ("a=float:abc", ["'abc' is not a float"]),
        ("b=bool:maybe", ["'maybe' is not a bool"]),
        ("1x=f64[3]", ["not a valid parameter name"]),
        ("class=f64[3]", ["not a valid parameter name"]),
        ("x-y=f64[3]", ["not a valid parameter name"]),
    ])
    def test_invalid_tokens_name_the_token_and_grammar(self, token: str, words: list[str]) -> None:
        with pytest.raises(CliError) as info:
            cli.parse_token(token)
        message = str(info.value)
        assert info.value.code == 2
        assert repr(token) in message
        assert "name=dtype[dims]" in message  # the grammar is spelled out
        for word in words:
            assert word in message

    @pytest.mark.parametrize("token", ["x=f65[3]", "x=float128x[2]", "x=double[2]", "x=str[2]"])
    def test_unknown_dtype(self, token: str) -> None:
        with pytest.raises(CliError, match="unknown dtype") as info:
            cli.parse_token(token)
        assert "f64" in str(info.value)  # lists what is known

    def test_unknown_type_without_dims_is_an_unknown_dtype(self) -> None:
        with pytest.raises(CliError, match="unknown dtype 'tensor'"):
            cli.parse_token("x=tensor")


class TestParseExampleSpec:
    def test_several_tokens(self) -> None:
        specs = cli.parse_example_spec("x=f64[N,3] n=int w=f32[3]")
        assert specs == [ArraySpec("x", "float64", ("N", 3)), ScalarSpec("n", "int"),
                         ArraySpec("w", "float32", (3,))]

    def test_empty_is_an_error(self) -> None:
        with pytest.raises(CliError, match="empty"):
            cli.parse_example_spec("  ")

    def test_duplicate_names(self) -> None:
        with pytest.raises(CliError, match="'x' twice"):
            cli.parse_example_spec("x=f64[3] x=int")

    def test_first_bad_token_is_reported(self) -> None:
        with pytest.raises(CliError, match="'y=nope\\[2\\]'"):
            cli.parse_example_spec("x=f64[3] y=nope[2] z=zz[1]")


class TestSizes:
    def test_parse_sizes(self) -> None:
        assert cli.parse_sizes(["N=100", "M=3,K=0"]) == {"N": 100, "M": 3, "K": 0}
        assert cli.parse_sizes([]) == {}

    @pytest.mark.parametrize("item", ["N", "N=", "=3", "N=-1", "N=x", "1N=3", "N=3.0"])
    def test_bad_sizes(self, item: str) -> None:
        with pytest.raises(CliError, match="NAME=INT"):
            cli.parse_sizes([item])

    def test_size_names_in_order_of_use(self) -> None:
        specs = cli.parse_example_spec("x=f64[N,M] y=f64[M] n=int:K m=int:4")
        assert cli.size_names(specs) == ["N", "M", "K"]

    def test_resolve_defaults_and_given(self) -> None:
        specs = cli.parse_example_spec("x=f64[N,M]")
        assert cli.resolve_sizes(specs, {"M": 5}) == {"N": cli.DEFAULT_SIZE, "M": 5}
        assert cli.resolve_sizes(specs, {}, default=3) == {"N": 3, "M": 3}

    def test_unused_size_is_an_error(self) -> None:
        specs = cli.parse_example_spec("x=f64[N]")
        with pytest.raises(CliError, match="--size Q is not used.*N"):
            cli.resolve_sizes(specs, {"Q": 4})


class TestBuildInputs:
    def test_shapes_dtypes_and_dynamic_dims(self) -> None:
        specs = cli.parse_example_spec("x=f64[N,3] w=f32[M] i=i64[2,N] m=b8[4] c=c64[2] "
                                       "n=int a=float b=bool s=f64[]")
        sizes = cli.resolve_sizes(specs, {"N": 5, "M": 7})
        inputs = cli.build_example_inputs(specs, sizes)
        v = inputs.values
        assert (v["x"].shape, v["x"].dtype) == ((5, 3), np.float64)
        assert (v["w"].shape, v["w"].dtype) == ((7,), np.float32)
        assert (v["i"].shape, v["i"].dtype) == ((2, 5), np.int64)
        assert (v["m"].shape, v["m"].dtype) == ((4,), np.bool_)
        assert v["c"].dtype == np.complex64
        assert isinstance(v["s"], np.ndarray) and v["s"].shape == ()
        assert (v["n"], v["a"], v["b"]) == (2, 0.5, True)
        assert type(v["n"]) is int and type(v["a"]) is float and type(v["b"]) is bool
        assert inputs.dynamic == [("x", 0), ("w", 0), ("i", 1)]
        assert inputs.sizes == {"N": 5, "M": 7}

    def test_int_scalar_takes_a_size(self) -> None:
        specs = cli.parse_example_spec("x=f64[N] n=int:N k=int:3")
        inputs = cli.build_example_inputs(specs, cli.resolve_sizes(specs, {"N": 11}))
        assert inputs.values["n"] == 11 and inputs.values["k"] == 3

    def test_deterministic_and_positive_floats(self) -> None:
        specs = cli.parse_example_spec("x=f64[100]")
        a = cli.build_example_inputs(specs, {}, seed=1).values["x"]
        b = cli.build_example_inputs(specs, {}, seed=1).values["x"]
        c = cli.build_example_inputs(specs, {}, seed=2).values["x"]
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
        assert (a > 0).all()

    def test_mark_dynamic_dims(self) -> None:
        calls = []

        class FakeCompiler:
            @staticmethod
            def mark_dynamic(array, dim):
                calls.append((array.shape, dim))

        specs = cli.parse_example_spec("x=f64[N,3] y=f64[3,N]")
        inputs = cli.build_example_inputs(specs, {"N": 6})
        assert cli.mark_dynamic_dims(FakeCompiler, inputs) is True  # type: ignore[arg-type]
        assert calls == [((6, 3), 0), ((3, 6), 1)]

    def test_mark_dynamic_missing_is_skipped(self) -> None:
        inputs = cli.build_example_inputs(cli.parse_example_spec("x=f64[N]"), {"N": 4})
        assert cli.mark_dynamic_dims(object(), inputs) is False  # type: ignore[arg-type]


class TestBindExample:
    def test_positional_in_signature_order(self) -> None:
        def f(x, n, *, scale=1.0):
            return x

        args, kwargs = cli.bind_example(f, "f", {"n": 3, "x": "X", "scale": 2.0})
        assert args == ("X", 3) and kwargs == {"scale": 2.0}

    def test_skipped_default_switches_to_keywords(self) -> None:
        def f(x, a=1, b=2):
            return x

        args, kwargs = cli.bind_example(f, "f", {"x": 1, "b": 5})
        assert args == (1,) and kwargs == {"b": 5}

    def test_unknown_name(self) -> None:
        def f(x):
            return x

        with pytest.raises(CliError, match="names 'y'.*no such parameter"):
            cli.bind_example(f, "f", {"x": 1, "y": 2})

    def test_missing_required(self) -> None:
        def f(x, n, k=3):
            return x

        with pytest.raises(CliError, match="no value for parameter 'n'"):
            cli.bind_example(f, "f", {"x": 1})

    def test_var_keyword_accepts_extra_names(self) -> None:
        def f(x, **rest):
            return x

        assert cli.bind_example(f, "f", {"x": 1, "y": 2}) == ((1,), {"y": 2})


class TestTargetsAndModules:
    def test_split_target(self, tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        assert cli.split_target(f"{path}:scale") == (path, "scale")
        assert cli.split_target(f"{path}:Cls.method") == (path, "Cls.method")

    @pytest.mark.parametrize("suffix, words", [("", "FILE.py:FUNC"), (":", "FILE.py:FUNC"),
                                               (":1f", "not a function name")])
    def test_bad_targets(self, tmp_path: Path, suffix: str, words: str) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        with pytest.raises(CliError, match=words):
            cli.split_target(f"{path}{suffix}")

    def test_list_functions_only_those_defined_there(self, tmp_path: Path,
                                                     isolated_imports: None) -> None:
        module = cli.load_module(write(tmp_path, "model.py", PLAIN_MODULE))
        assert cli.list_functions(module) == ["helper", "scale"]

    def test_unwrap_compiled_like_objects(self) -> None:
        def original(x):
            return x

        class CompiledFunction:  # what astcompiler.compile returns, as far as the CLI cares
            def __init__(self, fn):
                self._orig_fn = fn

            def __call__(self, *args):
                return self._orig_fn(*args)

        assert cli.unwrap_compiled(CompiledFunction(original)) is original
        assert cli.unwrap_compiled(original) is original


# ------------------------------------------------------------------------------------------
# error paths (no compiler needed)
# ------------------------------------------------------------------------------------------


class TestErrors:
    def test_missing_file(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        code, out, err = run_main(["show", f"{tmp_path}/nope.py:f", "--example", "x=f64[3]"],
                                  capsys)
        assert_one_line_error(code, err, "no such file", "nope.py")
        assert out == ""

    def test_missing_file_rewrite(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        code, _, err = run_main(["rewrite", str(tmp_path / "nope.py")], capsys)
        assert_one_line_error(code, err, "no such file")

    def test_directory_is_not_a_file(self, capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:
        code, _, err = run_main(["rewrite", str(tmp_path)], capsys)
        assert_one_line_error(code, err, "not a file")

    def test_function_not_found_lists_functions(self, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:missing", "--example", "x=f64[3]"], capsys)
        assert_one_line_error(code, err, "no function 'missing'", "helper, scale")

    def test_not_a_function(self, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                            isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["explain", f"{path}:VALUE", "--example", "x=f64[3]"], capsys)
        assert_one_line_error(code, err, "VALUE is not a function (type int)")

    def test_invalid_spec(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:scale", "--example", "x=f64[N,3 n=int"], capsys)
        assert_one_line_error(code, err, "invalid --example token", "name=dtype[dims]")

    def test_unknown_dtype(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:scale", "--example", "x=f99[3] n=int"], capsys)
        assert_one_line_error(code, err, "unknown dtype 'f99'", "'x=f99[3]'")

    def test_bad_size(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:scale", "--example", "x=f64[N] n=int",
                                 "--size", "N=lots"], capsys)
        assert_one_line_error(code, err, "invalid --size 'N=lots'")

    def test_unused_size(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:scale", "--example", "x=f64[N] n=int",
                                 "--size", "M=3"], capsys)
        assert_one_line_error(code, err, "--size M is not used")

    def test_example_names_unknown_parameter(self, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:scale", "--example", "x=f64[3] q=int"], capsys)
        assert_one_line_error(code, err, "names 'q'", "scale(x, n)")

    def test_example_misses_a_parameter(self, capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path, isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["explain", f"{path}:scale", "--example", "x=f64[3]"], capsys)
        assert_one_line_error(code, err, "no value for parameter 'n'")

    def test_missing_example_option(self, capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", PLAIN_MODULE)
        code, _, err = run_main(["show", f"{path}:scale"], capsys)
        assert_one_line_error(code, err, "--example")

    def test_no_command(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, _, err = run_main([], capsys)
        assert_one_line_error(code, err, "COMMAND")

    def test_unknown_command(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, _, err = run_main(["compile-all", "x.py:f"], capsys)  # (export exists now)
        assert_one_line_error(code, err, "invalid choice")

    def test_syntax_error_in_file(self, capsys: pytest.CaptureFixture[str],
                                  tmp_path: Path) -> None:
        path = write(tmp_path, "broken.py", "def f(x):\n    return x +\n")
        code, _, err = run_main(["rewrite", str(path)], capsys)
        assert_one_line_error(code, err, "broken.py:2", "syntax error")

    def test_syntax_error_in_show(self, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                  isolated_imports: None) -> None:
        path = write(tmp_path, "broken.py", "def f(x):\n    return x +\n")
        code, _, err = run_main(["show", f"{path}:f", "--example", "x=f64[3]"], capsys)
        assert_one_line_error(code, err, "broken.py:2", "syntax error")

    def test_import_failure_names_the_line(self, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path, isolated_imports: None) -> None:
        path = write(tmp_path, "raises.py", "X = 1\nY = 1 / 0\n")
        code, _, err = run_main(["show", f"{path}:f", "--example", "x=f64[3]"], capsys)
        assert_one_line_error(code, err, "ZeroDivisionError", "raises.py:2", expected_code=1)

    def test_help_and_version(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run_main(["--help"], capsys)
        assert code == 0 and "rewrite" in out and "show" in out and "explain" in out
        code, out, _ = run_main(["--version"], capsys)
        assert code == 0 and out.startswith("astcompiler ")

    def test_python_dash_m_reports_errors_without_traceback(self, tmp_path: Path) -> None:
        result = subprocess.run(
            [sys.executable, "-m", "astcompiler", "show", f"{tmp_path}/nope.py:f",
             "--example", "x=f64[3]"],
            capture_output=True, text=True, timeout=60)
        assert_one_line_error(result.returncode, result.stderr, "no such file")


# ------------------------------------------------------------------------------------------
# end to end: these need the compiler core (compile, show, explain, rewrite_module_source)
# ------------------------------------------------------------------------------------------


DECORATED_MODULE = """\
    import numpy as np
    import astcompiler as ac

    @ac.compile(backend="eager")
    def smooth(x, n):
        y = np.sin(x) * 2.0
        if x.shape[0] > 4:
            y = y + x.sum(axis=0)
        return y * n

    def plain(x):
        return x + 1.0
"""


class TestEndToEnd:
    def test_rewrite_prints_decorated_functions(self, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        code, out, err = run_main(["rewrite", str(path)], capsys)
        assert code == 0, err
        assert "smooth" in out
        assert "model.py:" in out  # every generated line names its origin
        assert "def plain" not in out  # only decorated functions are rewritten
        compile(out, "rewritten.py", "exec")  # the output is valid Python

    def test_rewrite_to_file(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        target = tmp_path / "out.py"
        code, out, err = run_main(["rewrite", str(path), "-o", str(target)], capsys)
        assert code == 0, err
        assert out == ""
        assert "smooth" in target.read_text(encoding="utf-8")

    def test_show_plain_function_numba(self, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        code, out, err = run_main(["show", f"{path}:plain", "--example", "x=f64[N,3]",
                                   "--size", "N=16"], capsys)
        assert code == 0, err
        assert "x: float64[16, 3] (dim 0 = N, dynamic)" in out
        assert "guards" in out.lower()
        assert "def " in out

    def test_show_decorated_function_eager(self, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path, isolated_imports: None) -> None:
        """A decorated function is unwrapped and recompiled with --backend."""
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        code, out, err = run_main(["show", f"{path}:smooth", "--example", "x=f64[N,3] n=int:3",
                                   "--backend", "eager"], capsys)
        assert code == 0, err
        assert "backend='eager'" in out
        assert "guards" in out.lower()

    def test_show_unknown_backend(self, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                  isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        code, _, err = run_main(["show", f"{path}:plain", "--example", "x=f64[3]",
                                 "--backend", "tpu"], capsys)
        assert_one_line_error(code, err, "unknown backend 'tpu'")

    def test_explain(self, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                     isolated_imports: None) -> None:
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        code, out, err = run_main(["explain", f"{path}:smooth", "--example", "x=f64[8,3] n=int"],
                                  capsys)
        assert code == 0, err
        assert "graph" in out.lower()

    def test_show_via_subprocess(self, tmp_path: Path) -> None:
        path = write(tmp_path, "model.py", DECORATED_MODULE)
        result = subprocess.run(
            [sys.executable, "-m", "astcompiler", "show", f"{path}:plain", "--example", "x=f32[5]",
             "--backend", "eager"],
            capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "guards" in result.stdout.lower()
