"""Regrouping a square grid of patch features into fewer, wider tokens: Idefics3's pixel shuffle
(``Idefics3Connector.pixel_shuffle``, Laurençon et al. 2024) and Pixtral's patch merger
(``Mistral3PatchMerger``: ``torch.nn.functional.unfold`` over m × m blocks)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import register
from .views import FreeView


@register
@dataclass(frozen=True)
class PixelShuffle(FreeView):
    """(B, n, dim) -> (B, n / s², s²·dim): each s × s block of the (√n × √n) patch grid becomes one
    token of s²·dim features. Views and permuted copies only: no arithmetic
    (``torch.utils.flop_counter`` counts none), no parameters, nothing saved for the backward (a
    reshape's and an unfold's gradients are index moves)."""

    scale: sympy.Expr
    kind = "pixel_shuffle"
    title = "Pixel shuffle"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"a pixel shuffle expects (B, N, dim), got {tuple(x)}")
        return (x[0], x[1] / self.scale ** 2, x[2] * self.scale ** 2)

    def describe(self):
        return f"pixel shuffle {self.scale}×{self.scale}"
