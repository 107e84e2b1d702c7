"""A regrouping of a token sequence into other batches (Qwen2.5-VL's window attention: the patches of
an image read as windows of patches, then as the whole image; the patch merger's rows of m²
patches): a view with no arithmetic."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import numel, register
from .views import FreeView


@register
@dataclass(frozen=True)
class Regroup(FreeView):
    """(..., c) -> (rows, n, width), n = elements / (rows · width): the same elements in other
    batches (``reshape``; transformers' window permutation indexes a copy, not counted here)."""

    rows: sympy.Expr
    width: sympy.Expr
    kind = "regroup"
    title = "Regroup"

    def shape(self, inputs):
        (x,) = inputs
        n = sympy.simplify(numel(x) / (self.rows * self.width))
        if n.is_number and (not n.is_integer or n < 1):
            raise SymgptError(f"cannot regroup {tuple(x)} into {self.rows} rows of width {self.width}")
        return (self.rows, n, self.width)

    def describe(self):
        return f"Regroup into {self.rows} × n × {self.width}"
