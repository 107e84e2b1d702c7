"""Views of Llama 4's vision encoder (transformers' ``Llama4VisionModel``): the patch positions a 2-D
rotary table is computed for. (Its pixel shuffle is ``ops.pixel_shuffle.PixelShuffle``.)"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import register
from .views import FreeView


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
