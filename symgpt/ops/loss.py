"""The training loss: cross-entropy of the logits against the next tokens."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class CrossEntropy(Op):
    """Mean cross-entropy over all positions: logits (B, T, V) -> a scalar.

    Targets are the inputs shifted by one; they are data, not part of the graph's arithmetic.
    """

    kind = "cross_entropy"
    title = "Cross-entropy"

    def shape(self, inputs):
        return ()  # a scalar

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        (z,) = inputs
        return (Work("loss", numel(z)),)  # log-softmax over V, then a gather

    def backward(self, inputs, out, ctx):
        (z,) = inputs
        return (Work("loss", numel(z), grad="input"),)

    def saved(self, inputs, out, ctx):
        (z,) = inputs
        return (
            Saved("log_probs", tuple(z)),  # log-softmax output (B, T, V)
            Saved("targets", tuple(z[:-1]), "int64"),
            Saved("total_weight", ()),  # nll_loss keeps the sum of weights, a scalar
        )
