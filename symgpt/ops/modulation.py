"""A time-conditioned scale of the residual stream: Voxtral Realtime's ``ada_rms_norm``
(transformers' ``VoxtralRealtimeTextAdaRmsNorm``, run in ``VoxtralRealtimeTextDecoderLayer.forward``
as ``hidden_states * (1 + self.ada_rms_norm(t_cond))`` after ``post_attention_layernorm``).

``t_cond`` is one row of ``dim`` numbers (``VoxtralRealtimeTimeEmbedding``: the cosines and sines of
the delay, a buffer's frequencies, no parameter), the same for every sequence and position of a
forward. The op's small MLP (linear1: dim -> rank, GELU, linear2: rank -> dim, no biases) runs on
that one row, once a layer a forward; the product scales each of the B·T rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class TimeModulation(Op):
    """x (..., dim) ⊙ (1 + linear2(GELU(linear1(t)))), t one row (dim,); owns ``linear1`` (rank, dim) and
    ``linear2`` (dim, rank).

    Forward: the two one-row matmuls (dim·rank multiply-adds each), the GELU (rank), 1 + (dim) and the
    product (one per element of x). Backward: x's gradient (one product per element); with trainable
    weights, the scale's gradient (a product and a sum per element of x), linear2's weight and input
    gradients and linear1's weight gradient (dim·rank each; t needs none) and the GELU's (rank)."""

    dim: sympy.Expr
    rank: sympy.Expr
    kind = "time_modulation"
    title = "Time modulation"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.dim) != 0:
            raise SymgptError(f"a time modulation of {self.dim} expects last dimension {self.dim}, got {x[-1]}")
        return tuple(x)  # (..., dim) -> (..., dim)

    def params(self, inputs):
        return (ParamSpec("linear1", (self.rank, self.dim)), ParamSpec("linear2", (self.dim, self.rank)))

    def forward(self, inputs, out):
        one_row = self.dim * self.rank
        return (Work("matmul", one_row, tag="dense"), Work("activation", self.rank),
                Work("matmul", one_row, tag="dense"), Work("elementwise", self.dim),
                Work("elementwise", numel(out)))

    def backward(self, inputs, out, ctx):
        needs = ctx.needs_grad or (True,)
        work = [Work("elementwise", numel(out), grad="input")] if needs[0] else []
        if ctx.trainable:
            one_row = self.dim * self.rank
            work += [Work("elementwise", 2 * numel(out), grad="weight"),
                     Work("matmul", one_row, tag="dense", grad="weight"),
                     Work("matmul", one_row, tag="dense", grad="weight"),
                     Work("activation", self.rank, grad="weight"),
                     Work("matmul", one_row, tag="dense", grad="weight")]
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        kept = [Saved("scale", (self.dim,))]  # 1 + MLP(t): x's gradient needs it
        if ctx.trainable:  # the scale's gradient needs x; the MLP's, its GELU's input and output
            kept += [Saved("input", tuple(x), shares="input0"), Saved("hidden", (self.rank,)),
                     Saved("hidden_act", (self.rank,))]
        return tuple(kept)

    def describe(self):
        return f"× (1 + MLP(t)) ({self.dim} -> {self.rank} -> {self.dim})"
