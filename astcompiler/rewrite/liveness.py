"""Which variables a loop leaves dead: nothing reads them after it (a conservative answer).

A loop whose trip count depends on array data may run zero times, so a variable it assigns ends
with a type the data decides: ``z = 0j`` is a Python complex before ``z = z * z + c`` and a NumPy
complex after it, and a variable first bound in the loop is unbound after zero trips. A compiled
loop region carries one type, which is exact only when nothing observes the variable after the
loop. ``Liveness(fn).dead_after(loop, names)`` says which of the variables a ``for``/``while`` of
the function binds are provably not read after it:

* the variable is read (loaded, augmented, deleted) only inside the loop's own body and test,
  never in a nested function or lambda, and is not ``global``/``nonlocal``;
* if the loop sits inside another loop, the value it leaves is never read by its next run:
  the loop assigns ``v`` before reading it (a ``for`` target, ``v = ...`` first in the body),
  or an unconditional assignment ``v = ...`` precedes the loop in the enclosing loop's body;
* the function never calls ``locals``/``vars``/``eval``/``exec``/``dir`` (they read every name).

``dead_after_if(branch, names)`` says the same of an ``if`` statement's variables: those read
only in ``for`` loops of its branches that bind them as their target (an inner loop's index),
or never read at all. A branch on array data may leave such a variable unbound or of another
type in one branch; nothing sees it.

Anything else counts as live: after such a loop the capture lets the value only be stored into
an array (``capture/runtime/regions.py``), and any other use of it is a graph break.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import libcst as cst

from .scopes import SkipNestedScopes

_READS_ALL = {"locals", "vars", "eval", "exec", "dir"}
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


class _Reads(cst.CSTVisitor):
    """Counts the reads of each name, nested functions and lambdas included (a store target is
    not a read; ``v += 1`` and ``del v`` are)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.declared: set[str] = set()  # global/nonlocal names

    def visit_Name(self, node: cst.Name) -> None:
        self.counts[node.value] += 1

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(n.name.value for n in node.names)

    # names that are not reads: attribute names, keywords, parameters, store targets
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        for part in (node.default, node.annotation):
            if part is not None:
                part.visit(self)
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        _visit_target(node.target, self)
        return False

    def visit_For(self, node: cst.For) -> bool:
        _visit_target(node.target, self)
        for part in (node.iter, node.body, node.orelse):
            if part is not None:
                part.visit(self)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        node.annotation.visit(self)
        if node.value is not None:
            node.value.visit(self)
        return False

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for part in (*node.decorators, node.params, node.returns):
            if part is not None:
                part.visit(self)
        node.body.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for part in (*node.decorators, *node.bases, *node.keywords):
            part.visit(self)
        node.body.visit(self)
        return False


def _visit_target(target: cst.BaseExpression, reads: _Reads) -> None:
    """A store target: its names are not reads; ``a[i] = ...`` and ``a.b = ...`` read ``a``, ``i``."""
    if isinstance(target, cst.Name):
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _visit_target(element.value, reads)
    elif isinstance(target, cst.StarredElement):
        _visit_target(target.value, reads)
    else:
        target.visit(reads)


class _DirectReads(SkipNestedScopes, _Reads):
    """Reads inside one loop, not counting nested functions, lambdas and classes (which may
    run later: their reads count as reads after the loop)."""


def _loop_reads(loop: cst.For | cst.While) -> Counter[str]:
    reads = _DirectReads()
    parts: list[cst.CSTNode] = [loop.body]
    if isinstance(loop, cst.While):
        parts.append(loop.test)
    for part in parts:
        part.visit(reads)
    return reads.counts


class _Parents(cst.CSTVisitor):
    """Parent links and the loops of one function (nested functions are converted on their own)."""

    def __init__(self, root: cst.FunctionDef) -> None:
        self.root = root
        self.parent: dict[int, cst.CSTNode] = {}
        self.loops: list[cst.For | cst.While] = []
        self._stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self.parent[id(node)] = self._stack[-1]
        if isinstance(node, _SCOPES) and node is not self.root:
            return False
        if isinstance(node, (cst.For, cst.While)):
            self.loops.append(node)
        self._stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self._stack and self._stack[-1] is original_node:
            self._stack.pop()


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _assigns(statement: cst.BaseStatement, name: str) -> bool:
    """``statement`` is a line that always binds ``name`` (``name = ...``, ``a, name = ...``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign):
            if any(name in _target_names(t.target) for t in small.targets):
                return True
        elif isinstance(small, cst.AnnAssign) and small.value is not None \
                and isinstance(small.target, cst.Name) and small.target.value == name:
            return True
    return False


def _assigned_first(loop: cst.For | cst.While, name: str) -> bool:
    """``loop`` binds ``name`` before it reads it: its run never sees the value from before."""
    if isinstance(loop, cst.For):
        if name in _target_names(loop.target):
            return True
    elif _reads_of(loop.test)[name]:
        return False
    body = loop.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    for statement in statements:
        if _reads_of(statement)[name]:
            return False
        if _assigns(statement, name):
            return True
    return False


def _reads_of(node: cst.CSTNode) -> Counter[str]:
    reads = _Reads()
    node.visit(reads)
    return reads.counts


def _fresh_each_iteration(loop: cst.CSTNode, name: str, parents: _Parents) -> bool:
    """No loop encloses ``loop`` without an assignment of ``name`` before it, in between."""
    node = loop
    while node is not parents.root:
        parent = parents.parent.get(id(node))
        if parent is None:
            return False
        statements = getattr(parent, "body", None)
        if isinstance(statements, Sequence) and not isinstance(statements, cst.CSTNode) \
                and node in statements:
            if any(_assigns(s, name) for s in statements[:statements.index(node)]):
                return True
        if isinstance(parent, (cst.For, cst.While)):
            return False  # an enclosing loop would carry the value into its next iteration
        node = parent
    return True


class Liveness:
    """Reads of one function, to tell which variables its loops leave dead."""

    def __init__(self, fn: cst.FunctionDef) -> None:
        self.reads = _Reads()
        fn.body.visit(self.reads)
        self.parents = _Parents(fn)
        fn.visit(self.parents)
        self.reads_all = any(self.reads.counts[n] for n in _READS_ALL)

    def dead_after(self, loop: cst.For | cst.While, names: Sequence[str]) -> tuple[str, ...]:
        """Those of ``names`` (bound by ``loop``) that nothing reads after ``loop``."""
        if self.reads_all or id(loop) not in {id(n) for n in self.parents.loops}:
            return ()
        inside = _loop_reads(loop)
        counts, declared = self.reads.counts, self.reads.declared
        return tuple(n for n in names if n not in declared and counts[n] == inside[n]
                     and (_assigned_first(loop, n)
                          or _fresh_each_iteration(loop, n, self.parents)))

    def unused_by_loop(self, loop: cst.For | cst.While, dead: Sequence[str]) -> tuple[str, ...]:
        """Those of ``dead`` (``dead_after(loop, ...)``) whose value on entry to an iteration the
        loop never reads either: its own ``for`` target, a variable it assigns first, the index
        of a loop nested in it (read only in that loop's body). The loop need not carry them."""
        return tuple(n for n in dead if _assigned_first(loop, n)
                     or _loop_reads(loop)[n] == self._reads_in_binding_loops(loop, n))

    def dead_after_if(self, branch: cst.If, names: Sequence[str]) -> tuple[str, ...]:
        """Those of ``names`` (bound in ``branch``) whose value after the ``if`` nothing reads:
        read only in the bodies of ``for`` loops inside it that bind them first, or not at all."""
        if self.reads_all:
            return ()
        parts = [branch.body] + ([branch.orelse] if branch.orelse is not None else [])
        inside: Counter[str] = Counter()
        for part in parts:
            reads = _DirectReads()
            part.visit(reads)
            inside += reads.counts
        counts, declared = self.reads.counts, self.reads.declared
        return tuple(n for n in names if n not in declared and counts[n] == inside[n]
                     and inside[n] == self._reads_in_binding_loops(branch, n))

    @staticmethod
    def _reads_in_binding_loops(statement: cst.If | cst.For | cst.While, name: str) -> int:
        """Reads of ``name`` in the bodies of the outermost ``for`` loops inside ``statement``'s
        body (and ``else``) whose target binds it (each body run reads the loop's own value).
        ``statement`` may be one the rewrite made (the guard after a ``continue``): its own
        tree is walked."""
        finder = _BindingLoops(name)
        for part in (statement.body, statement.orelse):
            if part is not None:
                part.visit(finder)
        return sum(_loop_reads(loop)[name] for loop in finder.loops)


class _BindingLoops(SkipNestedScopes):
    """The outermost ``for`` loops whose target binds one name."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.loops: list[cst.For] = []

    def visit_For(self, node: cst.For) -> bool:
        if self.name in _target_names(node.target):
            self.loops.append(node)
            return False
        return True
