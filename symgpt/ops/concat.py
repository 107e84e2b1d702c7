"""Concatenation along the last dimension, with broadcasting over the others.

Multi-latent attention (DeepSeek-V2/V3) assembles each head's query from a no-position part
and a rotary part, and each head's key from its up-projected part and one rotary key shared by
every head: ``cat([k_nope (B, h, T, a), k_rope (B, 1, T, b)]) -> (B, h, T, a + b)``. A copy,
no arithmetic; the backward pass slices the gradient (a view) and sums the broadcast part over
the heads (not counted, as no elementwise sum of a gradient is).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, register
from .elementwise import broadcast


@register
@dataclass(frozen=True)
class Concat(Op):
    """x0 (..., a), x1 (..., b), ... -> (..., a + b + ...), the leading dimensions broadcast."""

    kind = "concat"
    title = "Concatenate"
    arity = None

    def shape(self, inputs):
        if len(inputs) < 2:
            raise SymgptError("concat needs at least two inputs")
        lead = tuple(inputs[0][:-1])
        for x in inputs[1:]:
            if len(x) != len(inputs[0]):
                raise SymgptError(f"concat: inputs of different ranks {inputs[0]} and {x}")
            lead = broadcast(lead, x[:-1])
        return (*lead, sympy.Add(*[x[-1] for x in inputs]))  # (..., a), (..., b) -> (..., a + b)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return ()  # a copy: no arithmetic

    def backward(self, inputs, out, ctx):
        return ()  # slices of the gradient

    def saved(self, inputs, out, ctx):
        return ()  # cat keeps only the sizes of its inputs
