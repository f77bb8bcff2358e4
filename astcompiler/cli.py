"""The ``astcompiler`` command line (also ``python -m astcompiler``).

    astcompiler rewrite FILE.py [-o OUT.py]
    astcompiler show    FILE.py:FUNC --example "x=f64[N,3] n=int" [--size N=100] [--backend NAME]
    astcompiler explain FILE.py:FUNC --example "x=f64[N,3] n=int" [--size N=100]
    astcompiler export  FILE.py:FUNC --example "x=f32[N,16]" -o OUT.py
    astcompiler report  TRACE_DIR [-o report.html]

``rewrite`` prints the graph-building source of every ``@compile``-decorated function of a file.
``show`` compiles one function for example inputs, calls it once and prints everything generated
(``astcompiler.show``); ``explain`` prints ``astcompiler.explain(fn)(*inputs)``.

Example inputs are written as space-separated tokens (see ``EXAMPLE_GRAMMAR``). Bad input (a
missing file, an unknown function, an invalid token, an unknown dtype) is reported on one line of
stderr with exit status 2, as argparse does; a failure of the user's code or of the compiler exits
with status 1 (``--traceback`` shows the full Python traceback instead).

This module imports neither NumPy nor the compiler until a command needs them, so ``--help`` is
fast.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import keyword
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Callable, NoReturn, Sequence, Union

PROG = "astcompiler"
DEFAULT_SIZE = 8
USAGE_ERROR = 2
FAILURE = 1

EXAMPLE_GRAMMAR = (
    "tokens are separated by spaces: arrays 'name=dtype[dims]' (dims: comma-separated ints or size "
    "names such as N; 'x=f64[]' is 0-d), scalars 'name=int', 'name=float', 'name=bool' with an "
    "optional value 'n=int:5' (an int may also take a size: 'n=int:N')"
)

# Short dtype names accepted in --example, and the NumPy dtype each one means.
DTYPE_ALIASES: dict[str, str] = {
    "f64": "float64", "f32": "float32", "f16": "float16",
    "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8",
    "u64": "uint64", "u32": "uint32", "u16": "uint16", "u8": "uint8",
    "b8": "bool", "c64": "complex64", "c128": "complex128",
    "int": "int64", "float": "float64", "complex": "complex128",
}
DTYPES: dict[str, str] = {
    **DTYPE_ALIASES,
    **{name: name for name in set(DTYPE_ALIASES.values())},
}
SCALAR_KINDS = ("int", "float", "bool")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(
    r"(?P<name>[^=\s]+)=(?P<type>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\[(?P<dims>[^\[\]]*)\]|:(?P<value>\S+))?"
)


class CliError(Exception):
    """A problem to report on one line of stderr; ``code`` is the process exit status."""

    def __init__(self, message: str, code: int = USAGE_ERROR) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------------------------
# --example and --size: parsing (pure, no NumPy)
# --------------------------------------------------------------------------------------------

Dim = Union[int, str]


@dataclass(frozen=True)
class ArraySpec:
    """``name=dtype[dims]``: an array input; a str dim is a named (dynamic) size."""

    name: str
    dtype: str
    dims: tuple[Dim, ...]

    def describe(self, sizes: dict[str, int], dynamic: bool = True) -> str:
        """``x: float64[8, 3] (dim 0 = N, dynamic)``; ``dynamic``: named dims were marked."""
        shape = ", ".join(str(resolve_dim(d, sizes)) for d in self.dims)
        named = [f"dim {i} = {d}" for i, d in enumerate(self.dims) if isinstance(d, str)]
        if dynamic and named:
            named.append("dynamic")
        extra = f" ({', '.join(named)})" if named else ""
        return f"{self.name}: {self.dtype}[{shape}]{extra}"


@dataclass(frozen=True)
class ScalarSpec:
    """``name=int|float|bool[:value]``: a Python scalar; an int value may be a size name."""

    name: str
    kind: str
    value: Union[int, float, bool, str, None] = None

    def describe(self, sizes: dict[str, int], dynamic: bool = True) -> str:
        return f"{self.name}: {self.kind} = {scalar_value(self, sizes)!r}"


ExampleSpec = Union[ArraySpec, ScalarSpec]


def split_tokens(text: str) -> list[str]:
    """Split on whitespace outside brackets, so ``x=f64[N, 3]`` stays one token."""
    tokens: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        if char.isspace() and depth == 0:
            if current:
                tokens.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        tokens.append("".join(current))
    return tokens


def _token_error(token: str, problem: str) -> CliError:
    return CliError(f"invalid --example token {token!r}: {problem}; {EXAMPLE_GRAMMAR}")


def parse_dims(token: str, text: str) -> tuple[Dim, ...]:
    """``"N, 3"`` -> ``("N", 3)``; ``""`` -> ``()``; a trailing comma is allowed."""
    parts = [part.strip() for part in text.split(",")]
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if parts == [""]:
        return ()
    dims: list[Dim] = []
    for part in parts:
        if re.fullmatch(r"\d+", part):
            dims.append(int(part))
        elif _IDENT.fullmatch(part):
            dims.append(part)
        else:
            raise _token_error(token, f"dimension {part!r} is neither a non-negative int "
                                      f"nor a size name")
    return tuple(dims)


def parse_scalar_value(token: str, kind: str, text: str) -> Union[int, float, bool, str]:
    """The ``:value`` part of a scalar token, checked against its kind."""
    if kind == "int":
        if _IDENT.fullmatch(text):
            return text  # a size name, resolved later
        try:
            return int(text)
        except ValueError:
            raise _token_error(token, f"{text!r} is not an int or a size name") from None
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            raise _token_error(token, f"{text!r} is not a float") from None
    lowered = text.lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise _token_error(token, f"{text!r} is not a bool (true, false, 1, 0)")


def unknown_dtype_error(token: str, dtype: str) -> CliError:
    """The error for a dtype name not in ``DTYPES``."""
    short = " ".join(DTYPE_ALIASES)
    return CliError(f"unknown dtype {dtype!r} in --example token {token!r}; known dtypes: "
                    f"{short}, or a NumPy name such as float64, int32, uint8, complex128, bool")


def parse_token(token: str) -> ExampleSpec:
    """Parse one ``--example`` token into an ``ArraySpec`` or a ``ScalarSpec``."""
    if token.count("[") != token.count("]"):
        raise _token_error(token, "its brackets are not balanced")
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise _token_error(token, "it does not have the form name=type")
    name, type_name = match["name"], match["type"]
    if not _IDENT.fullmatch(name) or keyword.iskeyword(name):
        raise _token_error(token, f"{name!r} is not a valid parameter name")
    if match["dims"] is not None:
        if type_name not in DTYPES:
            raise unknown_dtype_error(token, type_name)
        return ArraySpec(name, DTYPES[type_name], parse_dims(token, match["dims"]))
    if type_name in SCALAR_KINDS:
        value = match["value"]
        parsed = None if value is None else parse_scalar_value(token, type_name, value)
        return ScalarSpec(name, type_name, parsed)
    if match["value"] is not None:
        raise _token_error(token, f"a ':value' is only allowed for the scalars "
                                  f"{', '.join(SCALAR_KINDS)}")
    if type_name in DTYPES:
        raise _token_error(token, f"an array needs its dims, e.g. '{name}={type_name}[N]' "
                                  f"('{name}={type_name}[]' for 0-d)")
    raise unknown_dtype_error(token, type_name)


def parse_example_spec(text: str) -> list[ExampleSpec]:
    """Parse a whole ``--example`` string; names must be unique and at least one must be given."""
    tokens = split_tokens(text)
    if not tokens:
        raise CliError(f"--example is empty; {EXAMPLE_GRAMMAR}")
    specs = [parse_token(token) for token in tokens]
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise CliError(f"--example names {spec.name!r} twice")
        seen.add(spec.name)
    return specs


def parse_sizes(items: Sequence[str]) -> dict[str, int]:
    """``["N=100", "M=3,K=1"]`` (repeated ``--size``) -> ``{"N": 100, "M": 3, "K": 1}``."""
    sizes: dict[str, int] = {}
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            name, sep, value = part.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not _IDENT.fullmatch(name) or not re.fullmatch(r"\d+", value):
                raise CliError(f"invalid --size {part!r}; expected NAME=INT with INT >= 0, "
                               f"e.g. --size N=100")
            sizes[name] = int(value)
    return sizes


def size_names(specs: Sequence[ExampleSpec]) -> list[str]:
    """Every size name the specs use, in order of first use."""
    names: list[str] = []
    for spec in specs:
        candidates: Sequence[Any] = spec.dims if isinstance(spec, ArraySpec) else [spec.value]
        for item in candidates:
            if isinstance(item, str) and item not in names:
                names.append(item)
    return names


def resolve_sizes(specs: Sequence[ExampleSpec], given: dict[str, int],
                  default: int = DEFAULT_SIZE) -> dict[str, int]:
    """Every size the specs use: from ``given``, else ``default``; an unused one is an error."""
    used = size_names(specs)
    unused = sorted(set(given) - set(used))
    if unused:
        known = ", ".join(used) if used else "none"
        raise CliError(f"--size {unused[0]} is not used by --example (its sizes: {known})")
    return {name: given.get(name, default) for name in used}


def resolve_dim(dim: Dim, sizes: dict[str, int]) -> int:
    return sizes[dim] if isinstance(dim, str) else dim


def scalar_value(spec: ScalarSpec, sizes: dict[str, int]) -> Union[int, float, bool]:
    """The Python value of a scalar input (defaults: int 2, float 0.5, bool True)."""
    if spec.value is None:
        return {"int": 2, "float": 0.5, "bool": True}[spec.kind]
    if isinstance(spec.value, str):
        return sizes[spec.value]
    return spec.value


# --------------------------------------------------------------------------------------------
# example inputs (NumPy)
# --------------------------------------------------------------------------------------------


@dataclass
class ExampleInputs:
    """Values by parameter name, and the ``(name, dim)`` pairs that are dynamic."""

    values: dict[str, Any]
    dynamic: list[tuple[str, int]]
    sizes: dict[str, int]


def random_array(rng: Any, shape: tuple[int, ...], dtype: str) -> Any:
    """Deterministic example data: floats in [0.1, 1) (safe for log/sqrt), ints in [0, 8), bools."""
    import numpy as np

    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind in "iu":
        return rng.integers(0, 8, size=shape).astype(dtype)
    values = rng.uniform(0.1, 1.0, size=shape)
    if kind == "c":
        values = values + 1j * rng.uniform(0.1, 1.0, size=shape)
    return values.astype(dtype)


def build_example_inputs(specs: Sequence[ExampleSpec], sizes: dict[str, int],
                         seed: int = 0) -> ExampleInputs:
    """Make the example values; ``sizes`` must cover every size name (see ``resolve_sizes``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    values: dict[str, Any] = {}
    dynamic: list[tuple[str, int]] = []
    for spec in specs:
        if isinstance(spec, ScalarSpec):
            values[spec.name] = scalar_value(spec, sizes)
            continue
        shape = tuple(resolve_dim(d, sizes) for d in spec.dims)
        values[spec.name] = random_array(rng, shape, spec.dtype)
        dynamic.extend((spec.name, i) for i, d in enumerate(spec.dims) if isinstance(d, str))
    return ExampleInputs(values, dynamic, dict(sizes))


def mark_dynamic_dims(ac: ModuleType, inputs: ExampleInputs) -> bool:
    """``ac.mark_dynamic`` on every named dim; False when this build has no ``mark_dynamic``."""
    mark = getattr(ac, "mark_dynamic", None)
    if mark is None:
        return False
    for name, dim in inputs.dynamic:
        mark(inputs.values[name], dim)
    return True


# --------------------------------------------------------------------------------------------
# the user's file and function
# --------------------------------------------------------------------------------------------


def existing_file(text: str) -> Path:
    """The path, or a usage error when it is not an existing file."""
    path = Path(text)
    if not path.exists():
        raise CliError(f"no such file: {text}")
    if not path.is_file():
        raise CliError(f"not a file: {text}")
    return path


def split_target(target: str) -> tuple[Path, str]:
    """``"model.py:f"`` -> (path, "f"); the function part may be dotted (``Cls.method``)."""
    file_part, sep, func = target.rpartition(":")
    if not sep or not file_part or not func:
        raise CliError(f"expected FILE.py:FUNC, got {target!r}")
    if not all(_IDENT.fullmatch(part) for part in func.split(".")):
        raise CliError(f"{func!r} in {target!r} is not a function name")
    return existing_file(file_part), func


def user_location(tb: TracebackType | None, path: Path) -> str:
    """``" (model.py:12)"`` for the innermost traceback frame in the user's file, else ``""``."""
    wanted = path.resolve()
    found = ""
    for frame in traceback.extract_tb(tb):
        if frame.filename and Path(frame.filename).resolve() == wanted:
            found = f" ({path}:{frame.lineno})"
    return found


def module_name_for(path: Path) -> str:
    """The file stem when it is free in ``sys.modules``, else a private name."""
    stem = path.stem
    if _IDENT.fullmatch(stem) and stem not in sys.modules:
        return stem
    return "_astcompiler_cli_" + re.sub(r"\W", "_", stem)


def load_module(path: Path) -> ModuleType:
    """Import ``path`` as a module, with its folder first on ``sys.path``."""
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = module_name_for(path)
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        sys.modules.pop(name, None)
        raise CliError(f"{path}:{err.lineno}: syntax error: {err.msg}") from None
    except (Exception, SystemExit) as err:
        sys.modules.pop(name, None)
        where = user_location(err.__traceback__, path)
        raise CliError(f"importing {path} failed: {type(err).__name__}: {err}{where}",
                       FAILURE) from err
    return module


def is_compiled(obj: Any) -> bool:
    """True for an ``astcompiler.compile`` result (a ``CompiledFunction``-like object)."""
    if hasattr(obj, "_orig_fn"):
        return True
    return hasattr(obj, "__wrapped__") and type(obj).__module__.startswith("astcompiler")


def unwrap_compiled(obj: Any) -> Callable[..., Any]:
    """The original Python function of a compiled one; plain functions are returned as they are."""
    if not is_compiled(obj):
        return obj
    return getattr(obj, "_orig_fn", None) or obj.__wrapped__


def list_functions(module: ModuleType) -> list[str]:
    """Names of the functions (plain or compiled) defined in ``module``."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("__"):
            continue
        target = unwrap_compiled(value)
        if inspect.isfunction(target) and target.__module__ == module.__name__:
            names.append(name)
    return sorted(names)


def find_function(module: ModuleType, func: str, path: Path) -> Callable[..., Any]:
    """``module.<func>`` (dotted), or a usage error listing the functions that exist."""
    obj: Any = module
    for part in func.split("."):
        if not hasattr(obj, part):
            existing = ", ".join(list_functions(module)) or "none"
            raise CliError(f"{path} has no function {func!r}; functions defined there: {existing}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CliError(f"{path}:{func} is not a function (type {type(obj).__name__})")
    return obj


def bind_example(fn: Callable[..., Any], func: str,
                 values: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments for ``fn`` from the named example values.

    Parameters are passed positionally, in signature order, up to the first one the example
    leaves to its default; the rest by keyword. Names ``fn`` does not take, and required
    parameters the example does not give, are usage errors.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature (a builtin): pass everything by keyword
        return (), dict(values)
    kinds = inspect.Parameter
    params = signature.parameters
    takes_any_keyword = any(p.kind is kinds.VAR_KEYWORD for p in params.values())
    named = {name for name, p in params.items()
             if p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)}
    for name in values:
        if name not in named and not takes_any_keyword:
            raise CliError(f"--example names {name!r}, but {func}{signature} has no such parameter")
    for p in params.values():
        if p.name in named and p.default is p.empty and p.name not in values:
            raise CliError(f"--example gives no value for parameter {p.name!r} of "
                           f"{func}{signature}")
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    for p in params.values():
        if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD):
            if p.name not in values:
                positional = False
            elif positional:
                args.append(values[p.name])
            elif p.kind is kinds.POSITIONAL_ONLY:
                raise CliError(f"positional-only parameter {p.name!r} of {func}{signature} "
                               f"needs the parameters before it in --example too")
            else:
                kwargs[p.name] = values[p.name]
        elif p.kind is kinds.KEYWORD_ONLY and p.name in values:
            kwargs[p.name] = values[p.name]
    kwargs.update({name: value for name, value in values.items() if name not in named})
    return tuple(args), kwargs


# --------------------------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------------------------


def import_astcompiler() -> ModuleType:
    """``import astcompiler``, with a clear error when the build is incomplete."""
    import astcompiler

    for name in ("compile", "show", "explain"):
        if not hasattr(astcompiler, name):
            raise CliError(f"this build of astcompiler has no astcompiler.{name}", FAILURE)
    return astcompiler


def check_backend(name: str) -> None:
    """A usage error for a backend name the registry does not know."""
    try:
        from astcompiler.lower import list_backends
    except ImportError:
        return
    known = list_backends()
    if name not in known:
        raise CliError(f"unknown backend {name!r}; choose one of {', '.join(known)}")


@dataclass
class Prepared:
    """Everything ``show`` and ``explain`` need: the function, its inputs and the compiler."""

    path: Path
    func: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    inputs: ExampleInputs
    specs: list[ExampleSpec]
    ac: ModuleType
    marked: bool  # named sizes were marked dynamic (False: this build has no mark_dynamic)


def prepare(args: argparse.Namespace) -> Prepared:
    """Parse the example, import the file, find and unwrap the function, build its inputs."""
    if args.default_size < 0:
        raise CliError(f"--default-size must be >= 0, got {args.default_size}")
    specs = parse_example_spec(args.example)
    sizes = resolve_sizes(specs, parse_sizes(args.size or []), args.default_size)
    path, func = split_target(args.target)
    module = load_module(path)
    fn = unwrap_compiled(find_function(module, func, path))
    inputs = build_example_inputs(specs, sizes, seed=args.seed)
    call_args, call_kwargs = bind_example(fn, func, inputs.values)
    ac = import_astcompiler()
    marked = mark_dynamic_dims(ac, inputs)
    return Prepared(path, func, fn, call_args, call_kwargs, inputs, specs, ac, marked)


def describe_inputs(prep: Prepared) -> str:
    """One line: every example input with its shape, and whether named sizes are dynamic."""
    text = ", ".join(spec.describe(prep.inputs.sizes, prep.marked) for spec in prep.specs)
    if prep.inputs.dynamic and not prep.marked:
        text += " (named sizes are static: this build has no astcompiler.mark_dynamic)"
    return text


def run_user_code(path: Path, what: str, call: Callable[[], Any]) -> Any:
    """Run ``call``; a failure becomes a short error naming the user's line when it can.

    Compiler errors (``AstCompilerError``) keep their own message, which already names the
    user's file and line; any other exception is reported as ``TypeName: message (file:line)``.
    """
    from astcompiler.exc import AstCompilerError

    try:
        return call()
    except AstCompilerError as err:
        raise CliError(f"{what} failed: {err}", FAILURE) from err
    except Exception as err:
        where = user_location(err.__traceback__, path)
        raise CliError(f"{what} raised {type(err).__name__}: {err}{where}", FAILURE) from err


def cmd_rewrite(args: argparse.Namespace) -> int:
    """``astcompiler rewrite FILE.py [-o OUT]``."""
    path = existing_file(args.file)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CliError(f"cannot read {path}: {err}") from None
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as err:
        raise CliError(f"{path}:{err.lineno}: syntax error: {err.msg}") from None
    try:
        from astcompiler.rewrite import rewrite_module_source
    except ImportError:
        raise CliError("this build of astcompiler has no "
                       "astcompiler.rewrite.rewrite_module_source", FAILURE) from None
    text = run_user_code(path, f"rewriting {path}",
                         lambda: rewrite_module_source(source, str(path)))
    if not text.strip():
        print(f"{PROG} rewrite: note: {path} has no @compile-decorated function", file=sys.stderr)
    if args.output in (None, "-"):
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as err:
        raise CliError(f"cannot write {args.output}: {err.strerror or err}") from None
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``astcompiler show FILE.py:FUNC --example ...``: compile, call once, print all generated."""
    if args.backend is not None:
        check_backend(args.backend)
    prep = prepare(args)
    backend = args.backend or "numba"
    compiled = run_user_code(prep.path, f"compiling {prep.func}",
                             lambda: prep.ac.compile(prep.fn, backend=backend))
    run_user_code(prep.path, f"calling compiled {prep.func}",
                  lambda: compiled(*prep.args, **prep.kwargs))
    print(f"# {prep.path}:{prep.func} with backend={backend!r}; inputs: {describe_inputs(prep)}")
    sys.stdout.flush()
    prep.ac.show(compiled)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    """``astcompiler explain FILE.py:FUNC --example ...``: graphs, breaks, guards."""
    prep = prepare(args)
    output = run_user_code(prep.path, f"explaining {prep.func}",
                           lambda: prep.ac.explain(prep.fn)(*prep.args, **prep.kwargs))
    print(f"# {prep.path}:{prep.func}; inputs: {describe_inputs(prep)}")
    print(output)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``astcompiler export FILE.py:FUNC --example ... -o OUT.py``: a standalone module of the
    guards, the wrapper and the kernels of one compile (imports only NumPy and numba)."""
    prep = prepare(args)
    from astcompiler.run.export import ExportError, export_entry

    # kernels that import nothing of astcompiler: libm instead of its vectorized math, float
    # sums in 64 lanes instead of NumPy's pairwise order (docs/cli.md, "export")
    with prep.ac.config.patch(vector_math=False, pairwise_sums=False, persistent_cache=False):
        compiled = run_user_code(prep.path, f"compiling {prep.func}",
                                 lambda: prep.ac.compile(prep.fn, backend="numba"))
        run_user_code(prep.path, f"calling compiled {prep.func}",
                      lambda: compiled(*prep.args, **prep.kwargs))
    shown = {spec.name: f"{spec.name}: {spec.dtype}[{', '.join(map(str, spec.dims))}]"
             for spec in prep.specs if isinstance(spec, ArraySpec)}
    try:
        text = export_entry(prep.fn, compiled.entries[-1], origin=f"{prep.path}:{prep.func}",
                            example=args.example, shown=shown)
    except ExportError as err:
        raise CliError(f"cannot export {prep.path}:{prep.func}: {err}", FAILURE) from None
    output = Path(args.output)
    try:
        tmp = output.with_name(f".{output.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(output)
    except OSError as err:
        raise CliError(f"cannot write {args.output}: {err.strerror or err}") from None
    print(f"{output}: {prep.func}({describe_inputs(prep)})")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """``astcompiler report TRACE_DIR -o report.html``: the compile trace as one HTML page."""
    folder = Path(args.trace_dir)
    if not folder.is_dir():
        raise CliError(f"no such trace directory: {args.trace_dir} (record one with "
                       "ASTCOMPILER_TRACE_DIR=DIR or astcompiler.config.trace_dir)")
    from astcompiler.report import write_report

    try:
        count = write_report(str(folder), args.output, layout=args.layout)
    except OSError as err:
        raise CliError(f"cannot write {args.output}: {err.strerror or err}") from None
    except ValueError as err:  # a compile.json that is not JSON
        raise CliError(f"{args.trace_dir} holds an unreadable compile record: {err}",
                       FAILURE) from None
    if count == 0:
        print(f"{PROG} report: note: {args.trace_dir} holds no recorded compile", file=sys.stderr)
    print(f"{args.output}: {count} compiles")
    return 0


# --------------------------------------------------------------------------------------------
# argument parsing and main
# --------------------------------------------------------------------------------------------


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``prog: error: message``, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def add_example_options(parser: argparse.ArgumentParser) -> None:
    """The options ``show`` and ``explain`` share."""
    parser.add_argument("target", metavar="FILE.py:FUNC",
                        help="the file to import and the function in it (plain or decorated)")
    parser.add_argument("--example", required=True, metavar="SPEC",
                        help=f"example inputs, e.g. \"x=f64[N,3] n=int:5\"; {EXAMPLE_GRAMMAR}")
    parser.add_argument("--size", action="append", metavar="NAME=INT",
                        help=f"value of a named size (repeatable; default {DEFAULT_SIZE})")
    parser.add_argument("--default-size", type=int, default=DEFAULT_SIZE, metavar="INT",
                        help=f"value of named sizes not given by --size (default {DEFAULT_SIZE})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random example data")


def build_parser() -> argparse.ArgumentParser:
    """The ``astcompiler`` argument parser with its subcommands."""
    parser = OneLineParser(prog=PROG, description="astcompiler: torch.compile for NumPy, "
                                                  "by source rewriting.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    parser.add_argument("--traceback", action="store_true",
                        help="on a failure of user code or of the compiler, print the traceback")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rewrite = commands.add_parser("rewrite", help="print the graph-building source of each "
                                                  "@compile-decorated function of a file")
    rewrite.add_argument("file", metavar="FILE.py")
    rewrite.add_argument("-o", "--output", metavar="OUT.py",
                         help="write to OUT.py instead of stdout")
    rewrite.set_defaults(handler=cmd_rewrite)

    show = commands.add_parser("show", help="compile FUNC for example inputs, call it once and "
                                            "print every generated source")
    add_example_options(show)
    show.add_argument("--backend", default=None,
                      help="backend to compile with (default: numba, also for decorated functions)")
    show.set_defaults(handler=cmd_show)

    explain = commands.add_parser("explain",
                                  help="print astcompiler.explain(FUNC)(*example inputs)")
    add_example_options(explain)
    explain.set_defaults(handler=cmd_explain)

    export = commands.add_parser("export", help="write FUNC compiled for the example inputs as "
                                                "a standalone module (NumPy and numba only)")
    add_example_options(export)
    export.add_argument("-o", "--output", required=True, metavar="OUT.py",
                        help="the module to write")
    export.set_defaults(handler=cmd_export)

    report = commands.add_parser("report", help="write the compiles recorded under "
                                                "ASTCOMPILER_TRACE_DIR as one HTML page")
    report.add_argument("trace_dir", metavar="TRACE_DIR")
    report.add_argument("-o", "--output", default="report.html", metavar="OUT.html",
                        help="the page to write (default report.html)")
    report.add_argument("--layout", choices=("auto", "dot", "own"), default="auto",
                        help="graph drawings: Graphviz when installed (auto), or the built-in "
                             "layered layout (own)")
    report.set_defaults(handler=cmd_report)
    return parser


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("astcompiler")
    except Exception:  # not installed (running from a source tree)
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failure, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    try:
        return args.handler(args)
    except CliError as err:
        if args.traceback and err.__cause__ is not None:
            traceback.print_exception(err.__cause__)
        print(f"{PROG} {args.command}: error: {err}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # a bug in astcompiler itself: still no traceback unless asked
        if args.traceback:
            traceback.print_exc()
        print(f"{PROG} {args.command}: internal error: {type(err).__name__}: {err} "
              f"(run with --traceback for details)", file=sys.stderr)
        return FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
