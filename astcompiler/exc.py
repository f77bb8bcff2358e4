"""Exceptions raised by astcompiler (all subclasses of ``AstCompilerError``)."""

from __future__ import annotations


class AstCompilerError(Exception):
    """Base class of every error astcompiler raises on purpose."""


class Unsupported(AstCompilerError):
    """The compiler cannot capture something; outside ``fullgraph=True`` it is a graph break.

    ``user_stack`` lists ``(file, line, source line)`` frames of the user's code, innermost last.
    """

    def __init__(self, reason: str, *, user_stack: list[tuple[str, int, str]] | None = None,
                 hint: str | None = None):
        self.reason = reason
        self.user_stack = list(user_stack or [])
        self.hint = hint
        super().__init__(reason)

    def __str__(self) -> str:
        lines = [self.reason]
        for filename, lineno, text in self.user_stack[-1:]:
            lines.append(f'  File "{filename}", line {lineno}')
            if text:
                lines.append(f"    {text.strip()}")
        if self.hint:
            lines.append(self.hint)
        return "\n".join(lines)


class GraphBreak(Unsupported):
    """Raised during capture where plain Python must take over."""


class ConstraintViolationError(AstCompilerError):
    """A dimension marked dynamic was specialized by the code, or is out of its range."""


class RecompileError(AstCompilerError):
    """Recompilation was forbidden (``config.error_on_recompile``)."""


class FailOnRecompileLimitHit(AstCompilerError):
    """The recompile limit was hit with ``config.fail_on_recompile_limit_hit``."""


class DataDependentError(AstCompilerError):
    """A guard needed the value of an unbacked size or of array data."""


class BackendCompilerFailed(AstCompilerError):
    """A backend failed to compile a graph it accepted."""


class ForbiddenInCompiledCode(AssertionError):
    """A function that must not run inside compiled code was reached (mark_dynamic, set_stance)."""


class InternalError(AstCompilerError):
    """A bug in astcompiler; please report it with the message."""


__all__ = ["AstCompilerError", "Unsupported", "GraphBreak", "ConstraintViolationError",
           "RecompileError", "FailOnRecompileLimitHit", "DataDependentError",
           "BackendCompilerFailed", "InternalError", "ForbiddenInCompiledCode"]
