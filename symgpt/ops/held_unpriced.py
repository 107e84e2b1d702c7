"""Parameters held by a module whose every forward reads an input symgpt does not price.

IDEFICS (transformers' ``IdeficsModel``) runs its gated cross-attention layers over images in
every forward; PP-FormulaNet's and T5Gemma 2's decoders read their encoder's output in every
layer. Their parameters are exact, their forward is not modelled: :class:`HeldUnpriced` declares
such a module's parameters as :class:`~symgpt.ops.held.Held` does, and any rule of the forward
(work, backward, saved tensors) refuses with its one-line *reason*, a symbolic request included.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import SymgptError
from .base import register
from .held import Held


@register
@dataclass(frozen=True)
class HeldUnpriced(Held):
    """The parameters of ``op``, held; the forward that would run it is not modelled (``reason``)."""

    reason: str = "this module's forward is not modelled"
    kind = "held_unpriced"
    title = "held, forward not modelled"

    def forward(self, inputs, out):
        raise SymgptError(self.reason)

    def backward(self, inputs, out, ctx):
        raise SymgptError(self.reason)

    def saved(self, inputs, out, ctx):
        raise SymgptError(self.reason)

    def describe(self):
        return f"{self.op.describe()} (held, forward not modelled)"
