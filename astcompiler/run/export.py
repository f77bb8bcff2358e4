"""Ahead of time: one compiled cache entry as a standalone module that imports only NumPy, numba
and the standard library (``astcompiler export FILE.py:FUNC --example ... -o OUT.py``).

Nothing is generated anew: the module is assembled from the files the compiler already wrote
for the entry (the kernels, the wrapper, the guard and run code) and from the sources of
``lower/places.py`` and ``lower/numba/runtime.py``, with their astcompiler imports cut. The
wrapper's NumPy steps get the op registry's NumPy reference of each op (``op_reference``). Around
them it adds the user's function itself (the run code's fallback, ``___original``), a stand-in
for the backend's ``RunFallback`` (numba failing, or an FP flag NumPy would warn about: the plain
function runs instead, which warns as NumPy does) and the exported function under the user's
name, with the user's signature and defaults: the guard, then the run code; inputs outside the
guard raise ``TypeError`` (type, dtype) or ``ValueError`` (rank, sizes, the rest). Kernels keep
``cache=True`` (their cache sits beside ``OUT.py``). An entry split at a graph break exports as
its pieces (``split_sections``): each compiled piece's sections in a namespace of their own,
the statement that broke as plain Python, and the function that runs them in turn; an entry
that runs eagerly is refused, naming the user's line and the reason.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import re
import sys
import textwrap
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..source.python_ast import parse as parse_python

EXPORTED_HEADER = '''\
"""{name}: exported ahead of time by astcompiler from {origin}.

Example inputs: {example}. Imports only NumPy, numba and the standard library; the kernels are
numba functions with cache=True. Inputs outside the guards raise TypeError or ValueError.
Sections: runtime (astcompiler's lower/places.py and lower/numba/runtime.py), kernels, wrapper
(its NumPy steps: the ops' NumPy references), the original
function (the fallback), the run code (its guarded function: the guards, then the wrapper), the
exported function.
"""
'''

FALLBACK = '''
class ___UseOriginal(Exception):
    """The compiled graph declines this call: the run code runs the original function."""


class ___Fallback:
    """The stand-in for astcompiler's RunFallback: numba failing to compile a kernel, or a
    floating-point flag NumPy would warn about, sends the call to the original function."""

    slow = False

    def eager(self, *inputs):
        raise ___UseOriginal()

    def recover(self, error):
        return isinstance(error, (numba.core.errors.NumbaError, ___UseOriginal))

    def use_twin(self, error, namespace, name, twin):
        if not isinstance(error, numba.core.errors.NumbaError):
            return False
        namespace[name] = namespace[twin]
        return True

    def slow_call(self, fast, args):
        return fast(*args)

    @property
    def localize(self):  # inputs the kernels were not traced for (another broadcast): NumPy
        return self

    def numpy_kernel(self, name):
        def decline(*inputs):
            raise ___UseOriginal()
        return decline

    transposed_kernel = numpy_kernel  # F-ordered operands of a 2-D sum: the original function


def ___note(error):
    """The run code's hook for a failed compiled call (astcompiler logs it once)."""
'''


class ExportError(Exception):
    """What keeps an entry from being exported, in words (the CLI prints it on one line)."""


@dataclass
class Parts:
    """The generated sources of one entry, read back from the files the compiler wrote."""

    kernels: list[str]
    wrapper: str
    guard: str
    run: str


def read_parts(entry: Any) -> Parts:
    files = list(getattr(entry, "files", []) or [])

    def read(path: str) -> str:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    kernels = [read(p) for p in files if "/kernels/" in p and "/kernel_" in p]
    wrappers = [read(p) for p in files if "/kernels/" in p and "/forward_" in p]
    guards = [read(p) for p in files if "/guards/" in p]
    runs = [read(p) for p in files if "/run/" in p]
    if len(wrappers) != 1 or len(runs) != 1:
        raise ExportError("this entry has no numba wrapper, guard and run file to export "
                          f"(files: {', '.join(files) or 'none'}); export needs backend='numba'")
    return Parts(kernels, wrappers[0], guards[0] if guards else "", runs[0])


def strip_imports(source: str, what: str) -> str:
    """``source`` without ``from __future__`` lines; an astcompiler import is an ``ExportError``
    unless it is the wrapper's kernel imports or an import of runtime or places names
    (``zero_watch``, ``at_line as ___at_line``: an alias line): the module's sections define
    them."""
    kept = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("from __future__"):
            continue
        alias = re.fullmatch(r"from astcompiler\.lower\.places import (\w+) as (\w+)", stripped)
        if alias:  # the wrapper's ___at_line: the places section's at_line
            kept.append(f"{alias.group(2)} = {alias.group(1)}")
            continue
        if re.match(r"from kernel_\w+ import ", stripped) or \
                stripped == "import astcompiler.lower.numba.runtime as ___rt" or \
                re.match(r"from (astcompiler\.lower\.numba\.runtime|astcompiler\.lower\.places"
                         r"|\.\.places) import [\w, ]+$", stripped):
            continue  # the kernels, runtime and places names: the module defines them (sections)
        if re.match(r"(from|import) astcompiler\b|from \.", stripped):
            raise ExportError(f"the {what} imports astcompiler ({stripped}); it cannot run "
                              "standalone")
        kept.append(line)
    return "\n".join(kept) + "\n"


def runtime_source() -> str:
    """``lower/places.py`` (``warn_at``; ``at_line`` for NumPy steps) and
    ``lower/numba/runtime.py``, as they are, but for their imports of each other."""
    from ..lower import places
    from ..lower.numba import runtime

    return (strip_imports(inspect.getsource(places), "places") + "\n\n"
            + strip_imports(inspect.getsource(runtime), "runtime"))


def value_expression(name: str, value: Any) -> str:
    """Python source that makes ``value`` in the exported module (numpy, numba, stdlib only)."""
    if name == "___G":
        return "globals()"
    if isinstance(value, types.ModuleType):
        top = value.__name__.split(".")[0]
        if top not in ("numpy", "numba", "math", "builtins"):
            raise ExportError(f"the guards need the module {value.__name__}")
        return f"__import__({value.__name__!r}, fromlist=['_'])"
    if isinstance(value, np.dtype):
        return f"np.dtype({value.str!r})"
    if value is np.ndarray:
        return "np.ndarray"
    if isinstance(value, type) and getattr(builtins, value.__name__, None) is value:
        return value.__name__
    if isinstance(value, (bool, int, float, str, type(None))) and not (
            isinstance(value, float) and not math.isfinite(value)):
        return repr(value)
    if isinstance(value, float):  # inf, nan
        return f"float({repr(value)!r})"
    for module, prefix in ((np, "np"), (math, "math"), (builtins, "builtins")):
        short = getattr(value, "__name__", None)
        if short and getattr(module, short, None) is value:
            return f"{prefix}.{short}" if prefix != "builtins" else \
                f"__import__('builtins').{short}"
    home, short = getattr(value, "__module__", None) or "", getattr(value, "__name__", "")
    if home.split(".")[0] in ("numpy", "operator", "_operator") and short.isidentifier() \
            and getattr(sys.modules.get(home), short, None) is value:  # np.linalg.norm
        return f"__import__({home!r}, fromlist=['_']).{short}"
    raise ExportError(f"the guards need {name} = {value!r} ({type(value).__name__}), which has no "
                      "form made of NumPy and standard imports")


OP_LINE = re.compile(r"(\w+) = (?:REGISTRY\.ops\['(\w+)'\]\.(impl|python)|PYTHON_OPS\['(\w+)'\]"
                     r"|SCANS\['(\w+)'\])")
OP_IMPORTS = ("from astcompiler.ops import REGISTRY",
              "from astcompiler.ops.python_scalars import PYTHON_OPS")


def _bare(args: ast.arguments) -> ast.arguments:
    """``args`` without annotations (the module has no ``from __future__ import annotations``)."""
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None:
            arg.annotation = None
    return args


def _default_names(args: ast.arguments) -> set[str]:
    """The names the default values' expressions read (evaluated where the def runs)."""
    return {n.id for d in (*args.defaults, *args.kw_defaults) if d is not None
            for n in ast.walk(d) if isinstance(n, ast.Name)}


def op_reference(name: str, fn: Any, op: str) -> str:
    """Module source that binds ``name`` to ``fn``, the NumPy reference of the op ``op``: a NumPy
    (or ``operator``) callable by its name, else the reference's own source (a few lines of
    NumPy: ``np.sort(a, axis=axis, ...)``) without annotations, its closure's NumPy callables
    bound around it. Anything else it reads is an ``ExportError`` naming the op."""
    try:
        return f"{name} = {value_expression(name, fn)}"
    except ExportError:
        pass
    refuse = f"the NumPy step {op!r} runs astcompiler's {getattr(fn, '__qualname__', fn)!r}"
    try:
        node = parse_python(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        raise ExportError(f"{refuse}, whose source cannot be read") from None
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        raise ExportError(f"{refuse}, which is not a plain def")
    node.name, node.returns, node.args = name, None, _bare(node.args)
    for read in sorted(_names_read(fn.__code__) | _default_names(node.args)):
        if read in fn.__globals__ and fn.__globals__[read] is not np \
                and not hasattr(builtins, read):
            raise ExportError(f"{refuse}, which reads astcompiler's {read!r}")
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    bound = [f"    {var} = {value_expression(var, cell.cell_contents)}"
             for var, cell in cells.items()]
    source = ast.unparse(node)
    if not bound:
        return f"# {op}: the op's NumPy reference\n{source}"
    inner = textwrap.indent(source, "    ")
    return (f"def ___make_{name}():  # {op}: the op's NumPy reference\n" + "\n".join(bound)
            + f"\n{inner}\n    return {name}\n\n\n{name} = ___make_{name}()")


def wrapper_source(wrapper: str) -> str:
    """The wrapper with its NumPy steps' ops (``op_sort = REGISTRY.ops['sort'].impl``) bound to
    their NumPy references in the module (``op_reference``)."""
    from ..ops import REGISTRY
    from ..ops.python_scalars import PYTHON_OPS

    lines = []
    for line in wrapper.splitlines():
        found = OP_LINE.fullmatch(line)
        if line in OP_IMPORTS:
            continue
        if found is None:
            lines.append(line)
            continue
        name, target, field, python, scan = found.groups()
        if scan is not None:
            raise ExportError(f"the NumPy step {scan!r} runs astcompiler's numba scan "
                              "(lower/numba/scans.py), which does not travel")
        if python is not None:
            lines.append(op_reference(name, PYTHON_OPS[python], python))
        else:
            op = REGISTRY.ops[target]
            lines.append(op_reference(name, op.impl if field == "impl" else op.python, target))
    return "\n".join(lines) + "\n"


def namespace_source(var: str, source: str, values: dict[str, Any], given: dict[str, str]) -> str:
    """``var = {...}``: every ``___ns['NAME']`` that ``source`` reads."""
    names = sorted(set(re.findall(r"___ns\['(\w+)'\]", source)))
    items = [f"    {n!r}: {given[n] if n in given else value_expression(n, values.get(n))},"
             for n in names]
    return f"{var} = {{\n" + "\n".join(items) + "\n}\n"


def original_source(fn: types.FunctionType) -> str:
    """The user's function without its decorators (it runs as written: the fallback)."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as error:
        raise ExportError(f"the source of {fn.__qualname__} cannot be read ({error})") from None
    tree = parse_python(text)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise ExportError(f"{fn.__qualname__} is not a plain def")
    if fn.__code__.co_freevars:
        raise ExportError(f"{fn.__qualname__} is a closure (it reads "
                          f"{', '.join(fn.__code__.co_freevars)})")
    lines = text.splitlines()
    return "\n".join(lines[node.lineno - 1:node.end_lineno]) + "\n"


def _names_read(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def globals_source(fn: types.FunctionType) -> str:
    """The imports and constants of the user's module that the function reads."""
    lines = []
    node = parse_python(original_source(fn)).body[0]
    assert isinstance(node, ast.FunctionDef)
    for name in sorted(_names_read(fn.__code__) | _default_names(node.args)):
        if name not in fn.__globals__:
            continue
        value = fn.__globals__[name]
        if isinstance(value, types.ModuleType):
            lines.append(f"import {value.__name__} as {name}")
            if value.__name__.split(".")[0] not in ("numpy", "math"):
                raise ExportError(f"{fn.__qualname__} reads the module {value.__name__} "
                                  f"(global {name!r}); only NumPy and math travel")
        elif isinstance(value, (bool, int, float, str, type(None))):
            lines.append(f"{name} = {value_expression(name, value)}")
        else:
            try:
                lines.append(f"{name} = {value_expression(name, value)}")
            except ExportError:
                raise ExportError(f"{fn.__qualname__} reads the global {name!r} "
                                  f"({type(value).__name__}), which cannot travel") from None
    return "\n".join(lines) + "\n"


def array_facts(guard: Any) -> list[tuple[str, str, tuple]]:
    """(parameter, dtype, shape with None for a dynamic size) of each guarded array argument."""
    found = []
    for fact in guard.facts:
        match = re.fullmatch(r"L\['(\w+)'\]", fact.source.name)
        if fact.kind == "array" and match:
            dtype, shape = fact.value[0], fact.value[1]
            found.append((match.group(1), np.dtype(dtype).name, tuple(shape)))
    return found


def scalar_facts(guard: Any) -> list[tuple[str, str, Any]]:
    """(parameter, type name, value) of each int/float/bool argument guarded by its value."""
    found = []
    for fact in guard.facts:
        match = re.fullmatch(r"L\['(\w+)'\]", fact.source.name)
        if fact.kind == "equals" and match and type(fact.value) in (int, float, bool):
            found.append((match.group(1), type(fact.value).__name__, fact.value))
    return found


def size_facts(guard: Any) -> list[tuple[str, int, Any, Any]]:
    """(parameter, dimension, lowest, highest or None) of each guarded dynamic size."""
    found = []
    for fact in guard.facts:
        match = re.fullmatch(r"L\['(\w+)'\]\.size\(\)\[(\d+)\]", fact.source.name)
        if fact.kind == "size" and match and isinstance(fact.value, tuple):
            found.append((match.group(1), int(match.group(2)), *fact.value[:2]))
    return found


REJECT = '''
def ___reject(___args):
    """Why these inputs are outside the guards: TypeError (type, dtype), ValueError (the rest)."""
    for name, dtype, shape, shown in ___ARRAYS:
        value = ___args[name]
        if type(value) is not np.ndarray:
            raise TypeError(f"{{___NAME}}(): {{name}} must be a numpy.ndarray ({{shown}}), got "
                            f"{{type(value).__name__}}")
        if value.dtype != np.dtype(dtype):
            raise TypeError(f"{{___NAME}}(): {{name}} must have dtype {{dtype}} ({{shown}}), got "
                            f"{{value.dtype}}")
        if value.ndim != len(shape):
            raise ValueError(f"{{___NAME}}(): {{name}} must have {{len(shape)}} dimensions "
                             f"({{shown}}), got shape {{value.shape}}")
        for dim, (want, got) in enumerate(zip(shape, value.shape)):
            if want is not None and want != got:
                raise ValueError(f"{{___NAME}}(): {{name}} must have size {{want}} in dimension "
                                 f"{{dim}} ({{shown}}), got shape {{value.shape}}")
    for name, kind, want in ___SCALARS:
        value = ___args[name]
        if type(value).__name__ != kind:
            raise TypeError(f"{{___NAME}}(): {{name}} must be of type {{kind}}, got "
                            f"{{type(value).__name__}}")
        if value != want:
            raise ValueError(f"{{___NAME}}(): {{name}} must be {{want!r}} (the value it was exported "
                             f"for), got {{value!r}}")
    for name, dim, low, high in ___SIZES:
        size = ___args[name].shape[dim]
        if size < low or (high is not None and size > high):
            raise ValueError(f"{{___NAME}}(): {{name}} must have a size of at least {{low}}"
                             + (f" and at most {{high}}" if high is not None else "")
                             + f" in dimension {{dim}} (sizes 0 and 1 compile apart), got "
                             f"shape {{___args[name].shape}}")
    raise ValueError(f"{{___NAME}}(): these inputs are outside what was exported (guard: "
                     f"{{___CONDITION}}); export again with an --example that covers them")
'''


def signature_source(fn: types.FunctionType, source: str | None = None) -> str:
    """The user's parameters as written (defaults kept, annotations left out); ``source``: the
    ``def`` (else read from ``fn``)."""
    node = parse_python(source if source is not None else original_source(fn)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return ast.unparse(_bare(node.args))


def call_arguments(fn: types.FunctionType) -> str:
    """``fn``'s parameters passed on as they came (``x, *args, k=k, **kw``)."""
    sig = inspect.signature(fn)
    return ", ".join(f"*{p.name}" if p.kind is p.VAR_POSITIONAL else f"**{p.name}"
                     if p.kind is p.VAR_KEYWORD else f"{p.name}={p.name}"
                     if p.kind is p.KEYWORD_ONLY else p.name for p in sig.parameters.values())


def doc_literal(name: str, fn: types.FunctionType) -> str:
    """The exported function's docstring as source: the user's, else ``NAME (exported)``."""
    return repr(inspect.cleandoc(fn.__doc__)) if fn.__doc__ else repr(f"{name} (exported)")


def exported_function(name: str, fn: types.FunctionType, guard: Any,
                      source: str | None = None, internal: bool = False) -> str:
    """The exported function: the user's signature (its defaults are the original's very
    objects, which the guard checks by identity), the guard and run code, else ``___reject``;
    ``source``: the ``def`` (else read from ``fn``). ``internal`` (a split's resume, called with
    the values the pieces before it made): outside the guard, the original runs instead (the
    compiler would compile it anew)."""
    call = call_arguments(fn)
    doc = doc_literal(name, fn)
    defaults = (f"\n{name}.__defaults__ = ___original.__defaults__"
                f"\n{name}.__kwdefaults__ = ___original.__kwdefaults__\n"
                if fn.__defaults__ or fn.__kwdefaults__ else "")
    return (f"\ndef {name}({signature_source(fn, source)}):\n    {doc}\n"
            f"    ___out = ___guarded({call})  # the guard, then the run code\n"
            f"    if ___out is ___MISS:\n"
            + (f"        return ___original({call})  # values outside the export: plain Python\n"
               if internal else "        ___reject(locals())\n")
            + "    return ___out\n" + defaults)


def function_names(fn: types.FunctionType, values: dict[str, Any]) -> dict[str, str]:
    """The run code's names for the user's function and its defaults (guarded by identity): the
    module's copy of the function (``___original``) and its defaults."""
    mine = {"___original": fn, "___original.__defaults__": fn.__defaults__,
            "___original.__kwdefaults__": fn.__kwdefaults__}
    return {var: source for var, value in values.items() for source, own in mine.items()
            if own is not None and value is own}


def break_words(reason: Any) -> str:
    """Why an entry with a graph break is refused: the break's reason and the user's line."""
    words = ("this function does not compile to one graph for these inputs; export writes one "
             "graph (move the code that breaks it out of the function)")
    if reason is None:
        return words
    where = ""
    if reason.user_stack:
        filename, lineno, text = reason.user_stack[-1]
        where = f" at {filename}:{lineno} ({text.strip()})"
    return f"{words}: graph break{where}: {reason.reason}"


def export_entry(fn: types.FunctionType, entry: Any, *, origin: str, example: str,
                 shown: dict[str, str]) -> str:
    """The standalone module's source for ``entry`` of ``fn``; ``shown``: each parameter's
    example as written (``f32[N,16]``), for the error messages. An entry split at a graph break
    becomes its pieces (``split_sections``)."""
    name = fn.__name__
    module = Module()
    module.add(EXPORTED_HEADER.format(name=name, origin=origin, example=example))
    module.add("import numpy as np\nimport numba\nimport numba.core.errors\n")
    module.add("# ======== runtime (astcompiler/lower/places.py, lower/numba/runtime.py) ========\n"
               + runtime_source())
    module.add("___rt = __import__('types').SimpleNamespace(**{k: v for k, v in list(globals()"
               ".items()) if not k.startswith('__')})\n")
    module.add(FALLBACK)
    if getattr(entry, "pieces", None):
        module.add(PIECES)
        split_sections(module, fn, entry, Piece(fn, original_source(fn), name), shown)
    else:
        if getattr(entry, "graph", None) is None:
            raise ExportError(break_words(getattr(entry, "break_reason", None)))
        for section in entry_sections(fn, entry, Piece(fn, original_source(fn), name), shown):
            module.add(section)
    module.add(f"\n__all__ = [{name!r}]\n")
    text = module.text()
    compile(text, "<export>", "exec")  # a syntax error here is ours: never write a broken module
    return text


class Module:
    """The exported module's text, section by section, knowing the line each section starts at
    (a piece's text is executed with its line numbers in the module)."""

    def __init__(self) -> None:
        self.sections: list[str] = []
        self.lines = 0
        self.pieces = 0  # ``___PIECE_n`` strings so far

    def add(self, section: str) -> None:
        text = section.rstrip("\n") + "\n"
        if self.sections:
            self.lines += 1  # the blank line between sections
        self.sections.append(text)
        self.lines += text.count("\n")

    def text(self) -> str:
        return "\n".join(self.sections)


@dataclass
class Piece:
    """A function the module exports: the compiled function, its ``def`` as text (no
    decorators), and the name its error messages give (the user's function for a prefix)."""

    fn: types.FunctionType
    source: str
    title: str
    internal: bool = False  # a resume: inputs outside its guard run its plain Python


def entry_sections(user: types.FunctionType, entry: Any, piece: Piece,
                   shown: dict[str, str]) -> list[str]:
    """The sections of one graph entry: its kernels, wrapper, the original function (the
    fallback; ``user``'s globals), the run code and the exported function under
    ``piece.fn.__name__``."""
    parts = read_parts(entry)
    name, guard = piece.fn.__name__, entry.guard
    run_ns = namespace_source("___run_ns", parts.run, guard.namespace, {
        **function_names(piece.fn, guard.namespace), **piece_cells(piece.fn, guard.namespace),
        "___original": "___original",
        "___compiled": "make_forward(___Fallback())", "___MISS": "___MISS", "___note": "___note"})
    arrays = [(p, d, s, shown.get(p, "")) for p, d, s in array_facts(guard)]
    return [
        *("# ======== kernel ========\n" + strip_imports(k, "kernel") for k in parts.kernels),
        "# ======== wrapper ========\n" + strip_imports(wrapper_source(parts.wrapper),
                                                       "wrapper"),
        "# ======== the original function (the run code's fallback) ========\n"
        + globals_source(user) + "\n" + piece.source + f"\n___original = {name}\n",
        "# ======== run code: the guard, then the wrapper ========\n"
        + strip_imports(parts.run, "run code") + "\n___MISS = object()\n" + run_ns
        + "___run, ___guarded = ___make_run(___run_ns)\n",
        "# ======== the exported function ========\n"
        f"___NAME = {piece.title!r}\n___ARRAYS = {arrays!r}\n"
        f"___SCALARS = {scalar_facts(guard)!r}\n___SIZES = {size_facts(guard)!r}\n"
        f"___CONDITION = {' '.join(guard.condition.split())!r}\n"
        + REJECT.format() + exported_function(name, piece.fn, guard, piece.source,
                                              piece.internal),
    ]


PIECES = '''
class ___Unbound:
    """A variable not bound when one piece of a split hands its variables to the next."""

    def __repr__(self):
        return "<unbound>"


___UNBOUND = ___Unbound()


def ___live(*thunks):
    """The values of the variables the next piece of a split needs (unbound: ``___UNBOUND``)."""
    values = []
    for thunk in thunks:
        try:
            values.append(thunk())
        except NameError:
            values.append(___UNBOUND)
    return tuple(values)


___live.unbound = lambda value: value is ___UNBOUND


def ___load_piece(text, line, name):
    """Run one piece's sections (a string of this module, its first line at ``line``) in a
    namespace of its own: each piece's kernels, wrapper and run code keep their names, and
    numba caches its kernels by this file and their lines in it."""
    namespace = {k: v for k, v in globals().items() if not k.startswith("___PIECE_")}
    exec(compile("\\n" * (line - 1) + text, __file__, "exec", dont_inherit=True), namespace)
    return namespace[name]
'''


def piece_literal(module: Module, sections: list[str], name: str, about: str) -> str:
    """Add a piece's sections as ``___PIECE_n`` (a string, executed by ``___load_piece`` with
    its own line numbers) and bind its exported function; returns the name it is bound to."""
    module.pieces += 1
    number = module.pieces
    body = "\n".join(section.rstrip("\n") + "\n" for section in sections)
    escaped = body.replace("\\", "\\\\").replace("'''", "\\'\\'\\'")  # lines stay put
    bound = f"___piece_{number}"
    # the section starts after the blank line that separates it; its third line is the text's first
    first_line = module.lines + (1 if module.sections else 0) + 3
    module.add(f"# ======== piece {number}: {about} ========\n"
               f"___PIECE_{number} = '''\\\n{escaped}'''\n"
               f"{bound} = ___load_piece(___PIECE_{number}, {first_line}, {name!r})\n")
    return bound


def split_sections(module: Module, user: types.FunctionType, entry: Any, piece: Piece,
                   shown: dict[str, str]) -> None:
    """A split entry (``run/splitting.py``): each compiled piece as its own namespace
    (``piece_literal``; a piece split again, recursively), the statement that broke as plain
    Python, and under ``piece.fn.__name__`` the function that runs them in turn, as the
    entry's split runner does."""
    plan = getattr(entry, "split", None)
    if plan is None:
        raise ExportError(break_words(getattr(entry, "break_reason", None)))
    brk_source = plan.sources["break"]
    if "___redirect(" in brk_source:
        raise ExportError(break_words(entry.break_reason) + "; export splits a function only "
                          "where it breaks in its own statements, not in a function it calls")
    compiled = {"prefix": entry.pieces[0] if plan.prefix is not None else None,
                "resume": entry.pieces[1 if plan.prefix is not None else 0]
                if plan.resume is not None else None}
    lines = break_line(entry.break_reason)
    calls: dict[str, str] = {}
    for kind, synthetic in (("prefix", plan.prefix), ("resume", plan.resume)):
        if synthetic is None:
            continue
        piece_entry = one_entry(compiled[kind], kind)
        title = piece.title if kind == "prefix" else f"{piece.title} (after line {lines})"
        part = Piece(synthetic, plan.sources[kind], title, piece.internal or kind == "resume")
        about = (f"{synthetic.__name__}, the statements before the graph break" if kind == "prefix"
                 else f"{synthetic.__name__}, the statements after it")
        if getattr(piece_entry, "pieces", None):  # the piece splits again: its own pieces
            split_sections(module, user, piece_entry, part, shown)
            calls[kind] = synthetic.__name__
            continue
        if getattr(piece_entry, "graph", None) is None:
            raise ExportError(break_words(getattr(piece_entry, "break_reason", None)))
        calls[kind] = piece_literal(module, entry_sections(user, piece_entry, part, shown),
                                    synthetic.__name__, about)
    module.add(f"# ======== the statement that broke the graph (line {lines}), plain Python "
               f"========\n{brk_source}")
    module.add(split_function(piece, plan, calls))


def one_entry(compiled: Any, kind: str) -> Any:
    """The entry of a split's piece that the example call compiled."""
    entries = list(getattr(compiled, "entries", []) or [])
    if not entries:
        raise ExportError(f"the {kind} of the split has no compiled entry")
    return entries[-1]


def break_line(reason: Any) -> str:
    """The user's line of a graph break (``?`` when unknown)."""
    stack = getattr(reason, "user_stack", None)
    return str(stack[-1][1]) if stack else "?"


SPLIT_CELLS = {"___live": "___live", "___redirect": "lambda fn: fn"}  # a piece's own free names


def piece_cells(fn: types.FunctionType, values: dict[str, Any]) -> dict[str, str]:
    """The run code's names for a split piece's closure cells of its own (``___live``,
    ``___redirect``: the module's functions); the user's cells stay unexportable."""
    own = {id(cell): SPLIT_CELLS[var] for var, cell in zip(fn.__code__.co_freevars,
                                                             fn.__closure__ or ())
           if var in SPLIT_CELLS}
    return {var: f"__import__('types').CellType({own[id(value)]})" for var, value in values.items()
            if isinstance(value, types.CellType) and id(value) in own}


def split_function(piece: Piece, plan: Any, calls: dict[str, str]) -> str:
    """``piece``'s function as the split runs it: the prefix (or the arguments themselves),
    the statement that broke, the resume; each piece returns ``(done, value or variables)``."""
    name, fn = piece.fn.__name__, piece.fn
    lines = [f"def {name}({signature_source(fn, piece.source)}):",
             f"    {doc_literal(name, fn)}"]
    if "prefix" in calls:
        lines += [f"    ___done, ___values = {calls['prefix']}({call_arguments(fn)})",
                  "    if ___done:", "        return ___values"]
    else:
        lines.append(f"    ___values = ({''.join(v + ', ' for v in plan.live_in)})")
    lines += [f"    ___done, ___values = {plan.brk.__name__}(*___values)",
              "    if ___done:", "        return ___values",
              f"    return {calls['resume']}(*___values)" if "resume" in calls else
              "    return None"]
    text = "# ======== the exported function: the pieces in turn ========\n" + "\n".join(lines)
    if "prefix" in calls and (fn.__defaults__ or fn.__kwdefaults__):  # the guard's very objects
        text += (f"\n\n\n{name}.__defaults__ = {calls['prefix']}.__defaults__"
                 f"\n{name}.__kwdefaults__ = {calls['prefix']}.__kwdefaults__")
    return text + "\n"


__all__ = ["ExportError", "export_entry", "op_reference"]
