"""Embedding tables: token lookup and learned positions."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class Embedding(Op):
    """Token embedding: ids (..., ) -> (..., dim) from a (num, dim) table."""

    num: sympy.Expr
    dim: sympy.Expr
    kind = "embedding"
    title = "Embedding"

    def shape(self, inputs):
        (ids,) = inputs
        return (*ids, self.dim)  # (B, T) -> (B, T, d)

    def params(self, inputs):
        return (ParamSpec("weight", (self.num, self.dim)),)

    def forward(self, inputs, out):
        (ids,) = inputs
        # a gather: free, unless a convention counts the lookup as a one-hot matmul
        return (Work("matmul", numel(ids) * self.num * self.dim, tag="embedding"),)

    def backward(self, inputs, out, ctx: Context):
        (ids,) = inputs
        if not ctx.trainable:
            return ()
        return (Work("matmul", numel(ids) * self.num * self.dim, tag="embedding", grad="weight"),)

    def saved(self, inputs, out, ctx):
        (ids,) = inputs
        return (Saved("indices", ids, "int64", shares="input0"),) if ctx.trainable else ()

    def describe(self):
        return f"Embedding {self.num}×{self.dim}"


@register
@dataclass(frozen=True)
class PositionEmbedding(Op):
    """Learned absolute positions: ids (B, T) -> (T, dim), rows 0..T-1 of a (num, dim) table.

    ``offset`` shifts the rows used (OPT keeps 2 extra rows); the table has ``num + offset`` rows.
    ``ids`` says which position ids the lookup keeps for its gradient: ``range`` (the T positions,
    made per call: nanoGPT, BART), ``buffer`` (a slice of a registered buffer of all
    ``num + offset`` positions, which stays whole: transformers' BERT, DistilBERT) or ``batch``
    (one row of positions per sequence, (B, T): RoBERTa derives them from the token ids) or
    ``mask`` (transformers' OPT numbers positions from the attention mask, a cumulative sum per
    sequence: one row per sequence when run eagerly, ``implementation`` hf-eager; T otherwise).
    """

    num: sympy.Expr
    dim: sympy.Expr
    offset: int = 0
    ids: str = "range"
    kind = "position_embedding"
    title = "Position embedding"

    def __post_init__(self):
        if self.ids not in ("range", "buffer", "batch", "mask"):
            raise SymgptError(f"position ids are range, buffer, batch or mask, got {self.ids!r}")

    def shape(self, inputs):
        (ids,) = inputs
        return (ids[-1], self.dim)  # (B, T) -> (T, d): broadcast over the batch later

    def params(self, inputs):
        return (ParamSpec("weight", (self.num + self.offset, self.dim)),)

    def forward(self, inputs, out):
        return ()  # a slice of the table: no arithmetic in any convention

    def backward(self, inputs, out, ctx):
        return ()  # an index-add of the gradient rows: no multiply-adds

    def saved(self, inputs, out, ctx):
        (ids,) = inputs
        if not ctx.trainable:
            return ()
        kind = self.ids
        if kind == "mask":
            kind = "batch" if ctx.implementation == "hf-eager" else "range"
        shape = {"range": (ids[-1],), "buffer": (self.num + self.offset,), "batch": tuple(ids)}[kind]
        return (Saved("positions", shape, "int64"),)

    def describe(self):
        return f"Positions {self.num}×{self.dim}"
