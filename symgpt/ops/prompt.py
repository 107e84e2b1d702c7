"""Learned prompt positions before the tokens (CPM-Ant, transformers' ``CpmAntModel``): the model
prepends ``prompt_length`` prompt-token ids to each sequence (:class:`PrependTokens`), runs every
layer over T + prompt_length positions, and drops the prompt positions before the LM head
(:class:`DropTokens`). Both are copies or views: no arithmetic."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .views import FreeView
from .base import register


@register
@dataclass(frozen=True)
class PrependTokens(FreeView):
    """Token ids (B, T) -> (B, count + T): ``count`` fixed ids concatenated in front (a copy of
    integer ids: no arithmetic)."""

    count: sympy.Expr
    kind = "prepend_tokens"
    title = "Prepend prompt ids"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-1], x[-1] + self.count)  # (B, T) -> (B, T + count)

    def describe(self):
        return f"Prepend {self.count} ids"


@register
@dataclass(frozen=True)
class DropTokens(FreeView):
    """(B, count + T, d) -> (B, T, d): the positions after the first ``count`` (a view)."""

    count: sympy.Expr
    kind = "drop_tokens"
    title = "Drop prompt positions"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) < 2:
            raise SymgptError(f"dropping positions expects (..., T, d), got {tuple(x)}")
        return (*x[:-2], x[-2] - self.count, x[-1])  # (B, count + T, d) -> (B, T, d)

    def describe(self):
        return f"Drop the first {self.count} positions"
