"""Regrouping a square grid of patch features into fewer, wider tokens: Idefics3's pixel shuffle
(``Idefics3Connector.pixel_shuffle``, Laurençon et al. 2024) and Pixtral's patch merger
(``Mistral3PatchMerger``: ``torch.nn.functional.unfold`` over m × m blocks); Pixtral's packing of
every image into one sequence and its 2-D rotary tables."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, Work, numel, register
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


@register
@dataclass(frozen=True)
class PackImages(FreeView):
    """(N, n, dim) -> (1, N·n, dim): every image's patches concatenated into one sequence, as
    Pixtral's vision model does (``PixtralVisionModel``: ``torch.cat`` of the flattened patch grids,
    then ``unsqueeze(0)``). A copy with no arithmetic."""

    kind = "pack_images"
    title = "Pack images"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"packing images expects (N, n, dim), got {tuple(x)}")
        return (sympy.Integer(1), x[0] * x[1], x[2])

    def describe(self):
        return "pack images into one sequence"


@register
@dataclass(frozen=True)
class AxialRotaryTable(Op):
    """Pixtral's 2-D rotary tables (``PixtralVisionRotaryEmbedding``): packed patches (1, n, dim)
    -> (2, n, d_head), the cos and sin of each patch's row and column angles (half of the
    frequencies each). Computed once per forward from the patch grid; no parameters, no gradient."""

    d_head: sympy.Expr
    kind = "axial_rotary_table"
    title = "Axial rotary tables"

    def shape(self, inputs):
        (x,) = inputs
        return (sympy.Integer(2), x[-2], self.d_head)  # (1, n, dim) -> (2, n, d_head): cos and sin

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)  # angles, then one cos or sin per entry

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return "Axial rotary tables (row, column)"
