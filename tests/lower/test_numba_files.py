"""numba backend: generated sources are real, content-addressed files, cached by numba."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from astcompiler.config import config
from astcompiler.lower import lookup_backend

from numba_helpers import GraphBuilder, check


def _graph():
    x = np.linspace(0.0, 1.0, 10)
    b = GraphBuilder(x)
    (X,) = b.inputs
    return b.output(b("sum", b("sqrt", b("add", X, 1.0)))), x


def test_kernels_and_wrapper_are_real_importable_files(tmp_path):
    graph, x = _graph()
    with config.patch(cache_dir=str(tmp_path)):
        compiled = lookup_backend("numba")(graph, [x])
    kernels_dir = tmp_path / "kernels"
    assert compiled.files and all(os.path.dirname(f) == str(kernels_dir) for f in compiled.files)
    for path in compiled.files:
        stem = os.path.splitext(os.path.basename(path))[0]
        assert stem in sys.modules  # registered under the file stem (numba's cache needs it)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        assert text in compiled.output_code
    (name, source), = compiled.kernels.items()
    kernel_file = next(f for f in compiled.files if os.path.basename(f).startswith(name))
    assert open(kernel_file, encoding="utf-8").read() == source
    assert "@numba.njit(cache=True" in source
    assert "# model.py:" in compiled.output_code  # origins on generated lines
    result = check(compiled, graph, (x,))
    assert isinstance(result[0], np.float64)
    cache = tmp_path / "kernels" / "__pycache__"
    assert any(p.suffix == ".nbi" for p in cache.iterdir())  # numba's disk cache index


def test_same_graph_same_files_never_rewritten(tmp_path):
    graph, x = _graph()
    with config.patch(cache_dir=str(tmp_path)):
        first = lookup_backend("numba")(graph, [x])
        stamps = {f: os.stat(f).st_mtime_ns for f in first.files}
        second = lookup_backend("numba")(graph, [x])
    assert first.files == second.files
    assert stamps == {f: os.stat(f).st_mtime_ns for f in second.files}


def test_a_new_process_reuses_numba_disk_cache(tmp_path):
    script = (
        "import sys, numpy as np\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "from numba_helpers import GraphBuilder\n"
        "from astcompiler.config import config\n"
        f"config.cache_dir = {str(tmp_path)!r}\n"
        "from astcompiler.lower.numba import numba_backend\n"
        "x = np.linspace(0.0, 1.0, 10)\n"
        "b = GraphBuilder(x)\n"
        "graph = b.output(b('sum', b('sqrt', b('add', b.inputs[0], 1.0))))\n"
        "compiled = numba_backend(graph, [x])\n"
        "print(float(compiled(x)[0]))\n"
        "kernel = [m for n, m in sys.modules.items() if n.startswith('kernel_0')][0]\n"
        "fn = [getattr(kernel, n) for n in dir(kernel) if n.startswith('kernel_0')][0]\n"
        "print(fn.stats.cache_hits)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] == "Counter()"  # compiled in the first process
    assert runs[1][1] != "Counter()"  # loaded from numba's disk cache in the second


def test_importing_the_package_does_not_import_numba():
    code = ("import sys, astcompiler, astcompiler.lower, astcompiler.ops\n"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_one_kernel_file_serves_every_size(tmp_path):
    def build(n):
        x = np.ones((n, 5))
        b = GraphBuilder(x)
        m = b("mean", b.inputs[0], axis=1, keepdims=True)
        return b.output(b("subtract", b.inputs[0], m)), x

    with config.patch(cache_dir=str(tmp_path)):
        small = lookup_backend("numba")(*build(3)[:1], [build(3)[1]])
        large = lookup_backend("numba")(*build(300)[:1], [build(300)[1]])
    assert small.files == large.files  # the same wrapper and kernel files: sizes are not baked in
    graph, x = build(7)
    check(small, graph, (np.random.default_rng(0).standard_normal((7, 5)),))
