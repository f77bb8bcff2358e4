"""Comprehensions: their iterables and ``if`` clauses go through the runtime.

``[f(v) for v in it if c]`` becomes ``[... for v in __ac.iterate(it) if __ac.truth(c)]``: static
iterables are unrolled within the limit, and a condition on array data is a graph break.
(Statements ``if``/``for``/``while`` are converted by ``structured.py``.)
"""

from __future__ import annotations

import libcst as cst

from .templates import runtime_call


class RewriteComprehensions(cst.CSTTransformer):
    def leave_CompFor(self, original: cst.CompFor, updated: cst.CompFor) -> cst.CompFor:
        return updated.with_changes(iter=runtime_call("iterate", [updated.iter]))

    def leave_CompIf(self, original: cst.CompIf, updated: cst.CompIf) -> cst.CompIf:
        return updated.with_changes(test=runtime_call("truth", [updated.test]))
