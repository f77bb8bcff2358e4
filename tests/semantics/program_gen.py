"""A generator of small Python-level programs for the differential harness.

``generate(seed)`` returns the source of a module with helper functions, a global list and a
``program(x, n, f, lst, d)`` that mixes ints, floats, lists, dicts, if/else, bounded for/while
loops, helper calls, a closure, prints, ``ac.graph_break()`` and small NumPy arrays. Programs are
deterministic and terminate; values are chosen so that no result depends on float rounding order
(array values are multiples of 0.5, ints stay bounded). ``calls(seed)`` gives the call sequence.

Everything is a pure function of the seed, so a failing seed is a complete regression example.
"""

from __future__ import annotations

import importlib.util
import itertools
import pathlib
import random
import sys

import numpy as np

from .harness import Case, Program

GENERATED_BACKENDS = ("eager", "numba")
SURVEY_SEEDS = 100  # seeds 0..99: the survey measures them, the quick tests draw from them
_counter = itertools.count()

HEADER = '''import math

import numpy as np

import astcompiler as ac

STATE = []


def helper_mix(a, b):
    return a * 3 - b


def helper_loop(a):
    t = 0
    for q in range(3):
        t += (a + q) % 7
    return t


def helper_array(v, s):
    return v * s + 1.0


def helper_print(a):
    print("helper", a)
    return a + 1


def helper_break(v):
    w = v + 0.5
    ac.graph_break()
    return w * 2


def helper_append(lst, a):
    lst.append(a)
    return len(lst)
'''

INT_EXPRS = [
    "{i} + {j}", "{i} - {j}", "({i} * {j}) % 1009", "{i} // ({j} % 5 + 1)", "{i} % (abs({j}) + 1)",
    "min({i}, {j})", "max({i}, {j})", "abs({i})", "len(lst)", "{a}.shape[0]", "int({a}.sum())",
    "d.get('a', {i})", "helper_mix({i}, {j}) % 1009", "helper_loop({i})", "-{i}",
    "{i} if {i} > {j} else {j}", "len(STATE)", "sum(lst) % 1009", "({i} << 2) % 1009",
    "int({f})", "round({f})", "{i} ** 2 % 1009", "int({a}[{i} % {a}.shape[0]])",
]
FLOAT_EXPRS = [
    "{f} + {g}", "{f} - {g}", "{f} * 0.5", "{f} * {i}", "{f} / (abs({g}) + 1.0)", "float({a}.sum())",
    "float({a}.max())", "float({a}.min())", "abs({f})", "math.sqrt(abs({f}))", "round({f}, 2)",
    "min({f}, {g})", "float({i})", "{i} / ({j} % 3 + 1)", "float({a}[{i} % {a}.shape[0]])",
    "float({a}.mean())",
]
ARRAY_EXPRS = [
    "{a} + {b}", "{a} * {i}", "{a} + {f}", "{a} - {b} * 0.5", "np.abs({a})", "{a}[::-1]",
    "np.maximum({a}, {f})", "np.where({a} > {f}, {a}, {b})", "np.cumsum({a})",
    "helper_array({a}, {i})", "{a} * 2.0 - {f}", "np.minimum({a}, {b})", "-{a}",
]
STR_EXPRS = [
    "str({i})", "{s} + ':' + str({j})", "f'{{{i}}}-{{{f}}}'", "{s}[:3]", "'%d/%s' % ({i}, {s})",
    "{s}.upper() + str(len(lst))", "','.join(str(t) for t in lst)", "repr({f})", "str({a}.shape[0])",
    "type({i}).__name__ + type({f}).__name__", "str(isinstance({i}, int))",
]
BIG_EXPRS = [  # Python ints without a bound: arbitrary precision must survive
    "{B} * 1000 + {i}", "{B} ** 2 + 1", "{B} * {B} - {i}", "({B} << 20) | 1", "-{B} * 3",
    "{B} // 7 + {B} % 7",
]
CONDS = [
    "{i} > {j}", "{f} < {g}", "{a}.sum() > {f}", "len(lst) > 2", "'b' in d", "{i} % 2 == 0",
    "{a}[0] > 0", "not lst", "{i} == {j} or {f} > 0", "({a} > 0).any()",
]


class Gen:
    """Generates one program from a random source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.ints = ["n", "i0"]
        self.floats = ["f", "f0"]
        self.arrays = ["x", "a0"]
        self.strs = ["s0"]
        self.bigs = ["b0"]
        self.lines: list[str] = []
        self.loop_vars = 0
        self.closures: list[str] = []
        self.captured: str | None = None  # the local the closure reads
        self.features: set[str] = set()  # what the program does that a known bug depends on

    def pick(self, pool: list[str]) -> str:
        return self.rng.choice(pool)

    def target(self, pool: list[str]) -> str:
        """A variable to rebind (never the arguments n, f, x)."""
        name = self.pick(pool[1:])
        if name == self.captured:
            self.features.add("closure_rebound")  # the closure must see the new value
        return name

    def fill(self, template: str) -> str:
        return template.format(i=self.pick(self.ints), j=self.pick(self.ints),
                               f=self.pick(self.floats), g=self.pick(self.floats),
                               a=self.pick(self.arrays), b=self.pick(self.arrays),
                               s=self.pick(self.strs), B=self.pick(self.bigs))

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * (depth + 1) + text)

    def assign(self, depth: int) -> None:
        kind = self.rng.choice(["int", "int", "float", "array", "str", "big"])
        pool, exprs = {"int": (self.ints, INT_EXPRS), "float": (self.floats, FLOAT_EXPRS),
                       "array": (self.arrays, ARRAY_EXPRS), "str": (self.strs, STR_EXPRS),
                       "big": (self.bigs, BIG_EXPRS)}[kind]
        expr = self.fill(self.rng.choice(exprs))
        if depth == 0 and self.rng.random() < 0.5:
            name = f"{ {'big': 'b', 'str': 's'}.get(kind, kind[0]) }{len(pool)}".replace(" ", "")
            pool.append(name)
        elif kind in ("str", "big"):
            name = self.pick(pool)
        else:
            name = self.target(pool)
        if kind == "int":
            expr = f"({expr}) % 1009 - 500"  # ints stay bounded: they index and size things
        elif kind == "big":
            expr = f"({expr}) % (10 ** 40)"  # past 64 bits, but no runaway growth in loops
        self.emit(depth, f"{name} = {expr}")

    def effect(self, depth: int) -> None:
        choice = self.rng.randrange(14)
        i, j = self.pick(self.ints), self.pick(self.ints)
        if choice == 0:
            self.emit(depth, f"lst.append({i})")
        elif choice == 1:
            self.emit(depth, f"d['{self.rng.choice('abc')}'] = {i}")
        elif choice == 2:
            self.emit(depth, f"STATE.append({i})")
        elif choice == 3:
            self.emit(depth, f"print('p', {i}, {self.pick(self.floats)})")
        elif choice == 4:
            self.emit(depth, "ac.graph_break()")
        elif choice == 5:
            self.emit(depth, f"{self.target(self.ints)} = helper_print({i}) % 1009")
        elif choice == 6:
            self.emit(depth, f"{self.target(self.arrays)} = helper_break({self.pick(self.arrays)})")
        elif choice == 7:
            self.emit(depth, f"if lst:")
            self.emit(depth + 1, f"lst[{i} % len(lst)] = {j}")
        elif choice == 8:
            self.emit(depth, f"{self.target(self.ints)} = helper_append(lst, {i})")
        elif choice == 9:  # Python's own errors, caught
            target = self.target(self.ints)
            self.emit(depth, "try:")
            self.emit(depth + 1, f"{target} = ({i} * 7) // ({j} % 4)")
            self.emit(depth, "except ZeroDivisionError as exc:")
            self.emit(depth + 1, f"{target} = len(str(exc))")
        elif choice == 10:
            self.emit(depth, f"{self.target(self.floats)} = {self.pick(self.arrays)}[{i} % {self.pick(self.arrays)}.shape[0]]")
        elif choice == 11:
            self.emit(depth, f"{self.target(self.ints)} = sum(t * {i} for t in lst) % 1009")
        elif choice == 12:
            self.emit(depth, f"for key in sorted(d):")
            self.emit(depth + 1, f"{self.target(self.ints)} = (d[key] + {i}) % 1009")
        else:
            self.emit(depth, f"{self.target(self.floats)} = float({self.pick(self.arrays)}[{i} % (x.shape[0] + 1):].sum())")

    def block(self, depth: int, count: int) -> None:
        for _ in range(count):
            self.statement(depth)

    def statement(self, depth: int) -> None:
        roll = self.rng.random()
        if depth < 2 and roll < 0.15:
            self.emit(depth, f"if {self.fill(self.rng.choice(CONDS))}:")
            self.block(depth + 1, self.rng.randint(1, 2))
            if self.rng.random() < 0.6:
                self.emit(depth, "else:")
                self.block(depth + 1, self.rng.randint(1, 2))
        elif depth < 2 and roll < 0.25:
            var = f"k{self.loop_vars}"
            self.loop_vars += 1
            bound = self.rng.choice(["3", "len(lst) % 4", f"{self.pick(self.ints)} % 4", "x.shape[0]"])
            self.emit(depth, f"for {var} in range({bound}):")
            self.ints.append(var)
            self.block(depth + 1, self.rng.randint(1, 2))
            self.ints.remove(var)
            if self.rng.random() < 0.3:
                self.emit(depth + 1, f"if {var} == 1:")
                self.emit(depth + 2, self.rng.choice(["break", "continue"]))
        elif depth < 2 and roll < 0.32:
            var = f"w{self.loop_vars}"
            self.loop_vars += 1
            self.emit(depth, f"{var} = 0")
            self.emit(depth, f"while {var} < 3 and ({self.fill(self.rng.choice(CONDS))}):")
            self.emit(depth + 1, f"{var} += 1")
            self.block(depth + 1, self.rng.randint(1, 2))
        elif depth == 0 and roll < 0.37 and not self.closures:
            captured = self.pick(self.ints)
            self.captured = captured
            self.emit(depth, "def inner(v):")
            self.emit(depth + 1, f"return v * 2 + {captured}")
            self.closures.append("inner")
        elif self.closures and roll < 0.42:
            self.emit(depth, f"{self.target(self.ints)} = inner({self.pick(self.ints)}) % 1009")
        elif roll < 0.62:
            self.effect(depth)
        else:
            self.assign(depth)

    def program(self) -> str:
        self.emit(0, "i0 = n")
        self.emit(0, "f0 = f")
        self.emit(0, "a0 = x * 1.0")
        self.emit(0, "s0 = str(n)")
        self.emit(0, "b0 = n * 10 ** 18")
        self.block(0, self.rng.randint(3, 9))
        results = ", ".join(self.ints + self.floats + self.arrays + self.strs + self.bigs)
        self.emit(0, f"return ({results}), lst, d")
        return HEADER + "\n\ndef program(x, n, f, lst, d):\n" + "\n".join(self.lines) + "\n"


def generate(seed: int) -> str:
    """The module source for ``seed``."""
    return Gen(random.Random(seed)).program()


def features(seed: int) -> set[str]:
    """What the program of ``seed`` does that a known bug depends on ("closure_rebound": a local
    read by the closure is rebound after the closure was defined)."""
    gen = Gen(random.Random(seed))
    gen.program()
    return gen.features


def calls(seed: int, count: int = 4) -> list[tuple]:
    """The call sequence for ``seed``: sizes, ints and floats change from the second call."""
    rng = np.random.default_rng(seed)
    out = []
    for c in range(count):
        size = int(rng.integers(1, 7))
        x = rng.integers(-6, 7, size=size) / 2.0
        n = int(rng.integers(-5, 12))
        f = float(rng.integers(-12, 13)) / 4.0
        lst = [int(v) for v in rng.integers(-3, 10, size=int(rng.integers(0, 4)))]
        d = {k: int(rng.integers(0, 9)) for k in "abc" if rng.random() < 0.5}
        out.append((x, n, f, lst, d))
    return out


def generated_case(seed: int, folder: pathlib.Path) -> Case:
    """Write the program of ``seed`` into ``folder``; a case that imports it afresh for each run
    (fresh globals: ``STATE`` is observed)."""
    path = pathlib.Path(folder) / f"gen_{seed}_{next(_counter)}.py"
    path.write_text(generate(seed))

    def factory() -> Program:
        name = f"semantics_gen_{path.stem}_{next(_counter)}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return Program(module.program, calls(seed), observe=lambda: module.STATE)

    return Case(f"generated/seed_{seed}", "generated", factory, backends=GENERATED_BACKENDS,
                timeout_s=30.0)
