"""``if``/``elif``/``while`` tests and ``for``/comprehension iterables go through the runtime.

``if c:`` becomes ``if __ac.truth(c):`` (static conditions are decided at capture and guarded;
array data is a graph break), ``while c:`` becomes ``while __ac.loop_test(c):`` (counted against
``config.unroll_limit``), and ``for t in it:`` becomes ``for t in __ac.iterate(it):`` (static
ranges, tuples, lists and array rows are unrolled within the limit). ``elif`` is an ``If`` in the
parent's ``orelse``; only its test changes, so chains need no special handling.
"""

from __future__ import annotations

import libcst as cst

from .templates import runtime_call


class RewriteControlFlow(cst.CSTTransformer):
    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        return updated.with_changes(test=runtime_call("truth", [updated.test]))

    def leave_While(self, original: cst.While, updated: cst.While) -> cst.While:
        return updated.with_changes(test=runtime_call("loop_test", [updated.test]))

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        return updated.with_changes(iter=runtime_call("iterate", [updated.iter]))

    def leave_CompFor(self, original: cst.CompFor, updated: cst.CompFor) -> cst.CompFor:
        return updated.with_changes(iter=runtime_call("iterate", [updated.iter]))

    def leave_CompIf(self, original: cst.CompIf, updated: cst.CompIf) -> cst.CompIf:
        return updated.with_changes(test=runtime_call("truth", [updated.test]))
