"""cloudpickle (Dask's serializer) round trips of compiled functions, each in fresh processes:
functions defined in ``__main__`` travel by value and compile once per process; module-level
ones travel by reference."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("cloudpickle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# run as a script: its functions live in __main__, which the loading process does not have
MAIN = '''
import sys
import cloudpickle
import numpy as np
import astcompiler as ac

SCALE = 3.0

def helper(x):
    return x * SCALE

@ac.compile
def decorated(x):
    return np.sin(x) * 2 + helper(x)

def plain(x):
    return x * x - 1

wrapped = ac.compile(plain, backend="eager", fullgraph=True)

def make_local():
    offset = 5.0
    def local(x):
        return x + offset
    return ac.compile(local)

local = make_local()

@ac.compile
def fact(n):  # refers to itself: its globals hold the compiled function
    return 1 if n <= 1 else n * fact(n - 1)

def make_recursive():
    @ac.compile
    def countdown(n):  # its closure holds the compiled function
        return 0 if n <= 0 else countdown(n - 1)
    return countdown

payload = [cloudpickle.dumps(decorated), cloudpickle.dumps(decorated),
           cloudpickle.dumps((wrapped, plain)), cloudpickle.dumps(local),
           cloudpickle.dumps(fact), cloudpickle.dumps(make_recursive())]
x = np.arange(6.0)
same = cloudpickle.loads(payload[0]) is decorated and cloudpickle.loads(payload[2])[0] is wrapped
with open(sys.argv[1], "wb") as handle:
    cloudpickle.dump((payload, same), handle)
'''

LOAD = '''
import sys
import cloudpickle
import numpy as np
import astcompiler as ac

with open(sys.argv[1], "rb") as handle:
    payload, same = cloudpickle.load(handle)
first, second = cloudpickle.loads(payload[0]), cloudpickle.loads(payload[1])
wrapped, plain = cloudpickle.loads(payload[2])
local = cloudpickle.loads(payload[3])
fact, countdown = cloudpickle.loads(payload[4]), cloudpickle.loads(payload[5])
# one compiled object each: the one the function's globals (closure) call is the one loaded
assert fact.__wrapped__.__globals__["fact"] is fact
assert countdown.__wrapped__.__closure__[0].cell_contents is countdown
x = np.arange(6.0)
for _ in range(3):
    assert np.array_equal(first(x), first.__wrapped__(x))
    assert np.array_equal(second(x), second.__wrapped__(x))
    assert np.array_equal(wrapped(x), plain(x))
    assert np.array_equal(local(x), local.__wrapped__(x))
print(same, type(first).__mro__[1].__name__, first is second, len(first.entries),
      len(wrapped.entries), wrapped.fullgraph, wrapped(x).dtype, len(local.entries))
'''


def _run(script: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="error::RuntimeWarning")
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_main_functions_travel_by_value_and_compile_once(tmp_path):
    main = tmp_path / "job.py"  # a real script file: __main__ with source on disk
    main.write_text(textwrap.dedent(MAIN))
    out = tmp_path / "payload.bin"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, str(main), str(out)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    main.unlink()  # the loading process must not need the file: the pickle carries the source
    # the same process gets its own objects back; another one compiles each function once,
    # with its settings (eager backend, fullgraph), and without a "no source" warning
    assert _run(LOAD, str(out)) == "True CompiledFunction True 1 1 True float64 1"


def test_module_functions_travel_by_reference():
    script = '''
import cloudpickle, pickle
from tests.run import pickle_module as m
data = cloudpickle.dumps((m.softmax, m.fast))
back = cloudpickle.loads(data)
print(back[0] is m.softmax, back[1] is m.fast, b"pickle_module" in data, len(data) < 300)
'''
    assert _run(script) == "True True True True"
