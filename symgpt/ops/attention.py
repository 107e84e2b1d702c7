"""The attention core besides its matmuls: the causal mask and the softmax."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .base import Pointwise, Saved, register


@register
@dataclass(frozen=True)
class CausalMask(Pointwise):
    """Set scores above the diagonal to -inf: (B, h, T, T) -> (B, h, T, T)."""

    kind = "causal_mask"
    title = "Causal mask"

    def saved(self, inputs, out, ctx):
        if ctx.attention != "eager":
            return ()  # fused kernels apply the mask inside
        (s,) = inputs
        return (Saved("causal_mask", tuple(s[-2:]), "bool"),)  # the (T, T) boolean mask, broadcast


@register
@dataclass(frozen=True)
class Softmax(Pointwise):
    """Softmax over the last dimension."""

    kind = "softmax"
    title = "Softmax"
    work = "softmax"

    def saved(self, inputs, out, ctx):
        if ctx.attention == "eager":
            return (Saved("output", tuple(out), shares="output"),)  # the T x T probabilities
        # a fused kernel keeps one log-sum-exp per row instead of the probabilities
        return (Saved("logsumexp", tuple(out[:-1]), "fp32"),)


@register
@dataclass(frozen=True)
class Dropout(Pointwise):
    """Dropout with probability ``p`` (a rational); saves its mask when active."""

    p: sympy.Expr = sympy.Rational(1, 10)
    kind = "dropout"
    title = "Dropout"

    def saved(self, inputs, out, ctx):
        return (Saved("mask", tuple(out), "bool"),) if ctx.dropout else ()
