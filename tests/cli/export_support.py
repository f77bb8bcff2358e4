"""What the export tests' subprocess scripts share: a script header that blocks importing
astcompiler, libcst and sympy, then puts the exported module's folder (``sys.argv[1]``) first on
the path, so the exported module must run on NumPy and numba alone."""

BLOCKED_HEADER = '''\
import importlib.abc, inspect, json, sys, warnings
import numpy as np


class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("astcompiler", "libcst", "sympy"):
            raise ImportError(f"blocked: {name}")
        return None


sys.meta_path.insert(0, Blocked())
sys.path.insert(0, sys.argv[1])
'''
