"""Activations beyond GELU and SiLU (which live in ``elementwise``): ReLU (OPT)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Saved, register
from .elementwise import _Unary


@register
@dataclass(frozen=True)
class ReLU(_Unary):
    kind = "relu"
    title = "ReLU"

    def saved(self, inputs, out, ctx):
        return (Saved("output", tuple(out), shares="output"),)  # PyTorch's relu keeps its result


@register
@dataclass(frozen=True)
class Tanh(_Unary):
    """tanh (BERT's pooler); PyTorch keeps its result for the gradient 1 - tanh²."""

    kind = "tanh"
    title = "Tanh"

    def saved(self, inputs, out, ctx):
        return (Saved("output", tuple(out), shares="output"),)
