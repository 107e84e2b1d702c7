"""Mixture of attention heads (Zhang et al. 2022, "Mixture of Attention Heads"; JetMoE, Shen et al.
2024; transformers' ``JetMoeMoA``): each token's query comes from the k experts its router picks,
one slot of h_kv heads per expert. :class:`MoESlots` lays the k experts' outputs of each token side
by side, (B, T, k·w), as ``JetMoeMoA.map`` does with ``index_add`` into zeros."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class MoESlots(Op):
    """The k active experts' outputs of each token side by side: expert output (B, T, w) (one copy
    of the expert group; k copies run) and the router's top-k weights (B, T, k), which say which
    k run -> (B, T, k·w). Forward: the index_add into zeros (one sum per element). Backward: a
    gather of the gradient (no arithmetic); the top-k indices are kept."""

    kind = "moe_slots"
    title = "Experts' outputs side by side"
    arity = 2

    def shape(self, inputs):
        x, w = inputs
        if len(x) != len(w) or tuple(x[:-1]) != tuple(w[:-1]):
            raise SymgptError(f"expert slots expect (..., w) and weights (..., k), got {tuple(x)} and {tuple(w)}")
        return (*x[:-1], w[-1] * x[-1])  # (B, T, w), (B, T, k) -> (B, T, k·w)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        _, w = inputs
        return (Saved("indices", tuple(w), "int64"),)
