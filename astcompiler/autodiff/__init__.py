"""Reverse-mode differentiation of captured graphs (``ac.grad``, ``ac.value_and_grad``,
``ac.vjp``): ``reverse.py`` walks the forward nodes with each op's ``vjp`` rule, ``transform.py``
runs it at capture time so forward and backward are one graph."""

from .reverse import BackwardResult, backward
from .transform import GradSpec

__all__ = ["BackwardResult", "GradSpec", "backward"]
