"""The attention core besides its matmuls: the causal mask and the softmax."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .base import Op, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class CausalMask(Op):
    """Set scores above the diagonal to -inf: (B, h, T, T) -> (B, h, T, T)."""

    kind = "causal_mask"
    title = "Causal mask"

    def shape(self, inputs):
        (s,) = inputs
        return tuple(s)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)  # a masked fill

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        if ctx.attention != "eager":
            return ()  # fused kernels apply the mask inside
        (s,) = inputs
        return (Saved("causal_mask", tuple(s[-2:]), "bool"),)  # the (T, T) boolean mask, broadcast


@register
@dataclass(frozen=True)
class Softmax(Op):
    """Softmax over the last dimension."""

    kind = "softmax"
    title = "Softmax"

    def shape(self, inputs):
        (s,) = inputs
        return tuple(s)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("softmax", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("softmax", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        if ctx.attention == "eager":
            return (Saved("output", tuple(out), shares="output"),)  # the T x T probabilities
        # a fused kernel keeps one log-sum-exp per row instead of the probabilities
        return (Saved("logsumexp", tuple(out[:-1]), "fp32"),)


@register
@dataclass(frozen=True)
class Dropout(Op):
    """Dropout with probability ``p`` (a rational); saves its mask when active."""

    p: sympy.Expr = sympy.Rational(1, 10)
    kind = "dropout"
    title = "Dropout"

    def shape(self, inputs):
        (x,) = inputs
        return tuple(x)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        return (Saved("mask", tuple(out), "bool"),) if ctx.dropout else ()
