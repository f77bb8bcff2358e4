"""Free-name analysis: which names a function reads from outside (globals, builtins, closure)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import BuiltinScope, GlobalScope, MetadataWrapper, ScopeProvider


_CONSTANT_NAMES = {"None", "True", "False", "__debug__"}


class _NameOrder(cst.CSTVisitor):
    """First appearance of each name, skipping annotations of local variables (never evaluated)."""

    def __init__(self) -> None:
        self.order: dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        self.order.setdefault(node.value, len(self.order))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        node.target.visit(self)
        if node.value is not None:
            node.value.visit(self)
        return False


def free_names(definition: cst.FunctionDef) -> list[str]:
    """Names read in ``definition`` (or any scope nested in it) that no enclosing scope of the
    function binds, in order of first appearance."""
    module = cst.Module(body=[definition])
    scopes = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    found: set[str] = set()
    for scope in set(scopes.values()):
        for access in scope.accesses:
            if not isinstance(access.node, cst.Name):
                continue
            owners = {ref.scope for ref in access.referents}
            if all(isinstance(owner, (GlobalScope, BuiltinScope)) for owner in owners):
                found.add(access.node.value)
    found.discard(definition.name.value)
    found -= _CONSTANT_NAMES
    order = _NameOrder()
    definition.body.visit(order)
    # a name read only in local-variable annotations is not read at all
    return sorted((n for n in found if n in order.order), key=order.order.__getitem__)
