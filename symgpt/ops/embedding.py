"""Embedding tables: token lookup and learned positions."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

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
    """

    num: sympy.Expr
    dim: sympy.Expr
    offset: int = 0
    kind = "position_embedding"
    title = "Position embedding"

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
        if self.offset and ctx.implementation == "hf-eager":
            # transformers' OPT numbers positions from the attention mask (a cumulative sum per
            # sequence): one row of position ids per sequence, which the lookup keeps
            return (Saved("positions", tuple(ids), "int64"),)
        return (Saved("positions", (ids[-1],), "int64"),)

    def describe(self):
        return f"Positions {self.num}×{self.dim}"
