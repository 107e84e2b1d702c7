"""Parameters a module holds that the forward being counted does not run.

transformers' ``BartForCausalLM`` and its kin (``MBartForCausalLM``, ``MarianForCausalLM``,
``PegasusForCausalLM``, ...) build every decoder layer with its cross-attention
(``encoder_attn`` and ``encoder_attn_layer_norm``), but run it only when ``encoder_hidden_states``
are passed: as a causal LM on token ids alone it never runs. :class:`Held` declares such a
module's parameters -- those of the op it wraps, at the input shape that op would see -- and
nothing else: it reads no tensor, computes nothing, saves nothing, and no op reads its output.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape, register


@register
@dataclass(frozen=True)
class Held(Op):
    """The parameters of ``op`` (at the input ``shape`` it would see), held but not run."""

    op: Op
    shape_in: Shape
    kind = "held"
    title = "held, not run"
    arity = 0

    def shape(self, inputs):
        return ()  # nothing is computed: an empty output no op reads

    def params(self, inputs):
        return self.op.params((tuple(self.shape_in),))

    def forward(self, inputs, out):
        return ()  # not run

    def backward(self, inputs, out, ctx):
        return ()  # no gradient reaches parameters that take part in no computation

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"{self.op.describe()} (held, not run)"
