"""The tiled vision encoder of Llama 3.2 Vision (transformers' ``MllamaVisionModel``): each tile's
patch sequence padded with zero rows to a multiple of 8 and the padding dropped after the encoder
(:class:`PadRows`), the aspect-ratio attention mask built as an outer product
(:class:`TileMask`), and the final features concatenated with intermediate layers' outputs
(:class:`ExtraFeatures`)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, Work, register
from .views import FreeView


@register
@dataclass(frozen=True)
class PadRows(FreeView):
    """(..., n, dim) -> (..., n + count, dim): ``count`` zero rows appended (``F.pad``; a negative
    ``count`` drops that many trailing rows, the slice ``[:, :, :-pad]``). A copy: no arithmetic."""

    count: sympy.Expr
    kind = "pad_rows"
    title = "Pad rows"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) < 2:
            raise SymgptError(f"padding rows expects (..., n, dim), got {tuple(x)}")
        return (*x[:-2], x[-2] + self.count, x[-1])  # (..., n, dim) -> (..., n + count, dim)

    def describe(self):
        return f"Pad with {self.count} rows" if not (self.count.is_number and self.count < 0) \
            else f"Drop the last {-self.count} rows"


@register
@dataclass(frozen=True)
class TileMask(Op):
    """The attention mask of the tiled sequence (B', L, dim), passed through unchanged:
    transformers' ``_prepare_aspect_ratio_attention_mask`` builds it as ``m @ m.transpose(-1, -2)``
    of a (B', L, 1) float mask, a batched matmul of inner size 1: B'·L² multiply-adds (counted by
    ``torch.utils.flop_counter``). No parameters, nothing for backward (the mask needs no gradient)."""

    kind = "tile_mask"
    title = "Tile mask"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"a tile mask expects (B, L, dim), got {tuple(x)}")
        return tuple(x)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        (x,) = inputs
        return (Work("matmul", x[0] * x[1] ** 2, tag="dense"),)  # (B', L, 1) @ (B', 1, L)

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return "Tile mask (L×1 · 1×L)"


@register
@dataclass(frozen=True)
class ExtraFeatures(FreeView):
    """(..., dim) -> (..., (1 + count)·dim): the final features concatenated with ``count``
    intermediate layers' outputs of the same positions (``torch.stack`` and ``torch.cat``: copies,
    no arithmetic)."""

    count: sympy.Expr
    kind = "extra_features"
    title = "Concatenate layer features"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-1], (1 + self.count) * x[-1])  # (..., dim) -> (..., (1 + count)·dim)

    def describe(self):
        return f"Concatenate {self.count} intermediate layers' features"

