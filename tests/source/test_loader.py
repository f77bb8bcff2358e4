"""Finding a function's source: methods, nested functions, closures, lambdas, wraps, notebooks."""

from __future__ import annotations

import functools
import linecache

import libcst as cst
import pytest

from astcompiler.source import NoSourceError, function_source


def module_function(x, n=2):
    return x * n


class Holder:
    def method(self, x):
        return x + 1

    @staticmethod
    def static(x):
        return x - 1


def make_closure(k):
    def inner(x):
        return x * k
    return inner


def decorate(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@decorate
def decorated(x):
    return x


square, cube = (lambda v: v * v), (lambda w: w * w * w)


def test_module_function_position():
    src = function_source(module_function)
    assert isinstance(src.node, cst.FunctionDef) and src.node.name.value == "module_function"
    assert src.line_of(src.node) == module_function.__code__.co_firstlineno
    assert src.display_name == "test_loader.py"


def test_method_and_staticmethod():
    assert function_source(Holder.method).node.name.value == "method"
    assert function_source(Holder.static).node.name.value == "static"


def test_closure():
    src = function_source(make_closure(3))
    assert src.node.name.value == "inner"


def test_wraps_uses_the_wrapper_not_wrapped():
    src = function_source(decorated)
    assert src.node.name.value == "wrapper"


def test_lambdas_on_one_line_are_told_apart_by_parameters():
    assert isinstance(function_source(square).node, cst.Lambda)
    assert function_source(cube).node.params.params[0].name.value == "w"


def test_exec_has_no_source():
    scope = {}
    exec("def f(x):\n    return x\n", scope)
    with pytest.raises(NoSourceError, match="exec"):
        function_source(scope["f"])


def test_notebook_cells_are_read_through_linecache():
    filename = "<ipython-input-7-abcdef>"
    text = "def cell_fn(x):\n    return x + 41\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        scope: dict = {}
        exec(compile(text, filename, "exec"), scope)
        src = function_source(scope["cell_fn"])
        assert src.node.name.value == "cell_fn"
        assert src.line_text(2).strip() == "return x + 41"
    finally:
        del linecache.cache[filename]
