"""Views of Llama 4's vision encoder (transformers' ``Llama4VisionModel``): the pixel shuffle that
regroups each r × r block of patches into one token of r²-times the width before the adapter MLP,
and the patch positions a 2-D rotary table is computed for."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import register
from .views import FreeView


@register
@dataclass(frozen=True)
class PixelShuffle(FreeView):
    """(B, n, c) -> (B, n/s², c·s²): transformers' ``pixel_shuffle(x, 1/s)`` (Llama 4), each s × s
    block of the √n × √n patch grid gathered into one position. Two permutes made contiguous
    (copies, no arithmetic); the adapter's first linear map then reads (and saves) the result."""

    side: sympy.Expr
    kind = "pixel_shuffle"
    title = "Pixel shuffle"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"a pixel shuffle expects (B, n, c), got {tuple(x)}")
        s2 = self.side ** 2
        return (x[0], x[1] / s2, x[2] * s2)  # (B, n, c) -> (B, n/s², c·s²)

    def describe(self):
        return f"Pixel shuffle {self.side}×{self.side}"


@register
@dataclass(frozen=True)
class PatchPositions(FreeView):
    """(B, n, d) -> (B, n): the positions of a patch sequence, what a rotary table is computed
    for (no data read)."""

    kind = "patch_positions"
    title = "Patch positions"

    def shape(self, inputs):
        (x,) = inputs
        return tuple(x[:-1])  # (B, n, d) -> (B, n)

    def describe(self):
        return "Patch positions"
