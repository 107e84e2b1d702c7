"""Attention sinks: a softmax over each row of scores and one learned logit per head (OpenAI's
gpt-oss model card, 2025; transformers' ``GptOssAttention.sinks``). The sink takes part in the
normalisation and is dropped afterwards, so a row's probabilities may sum to less than 1.

transformers' eager code (``eager_attention_forward`` of gpt_oss) concatenates the sinks to the
scores as one more column, subtracts each row's maximum, takes the softmax over T_k + 1 entries
and slices the last column off; the values matmul reads that slice, a view of the probabilities.
GraniteSWA's applies the same sink as a scale of the output rows (:class:`SinkScale`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class SinkSoftmax(Op):
    """softmax([S, s_h])[..., :-1] over the last dimension, with a learned sink logit s_h per head:
    scores (B, h, T_q, T_k) -> probabilities (B, h, T_q, T_k); owns ``sinks`` (h,)."""

    heads: sympy.Expr
    kind = "sink_softmax"
    title = "Softmax with sinks"

    def shape(self, inputs):
        (s,) = inputs
        if len(s) < 3 or sympy.expand(s[-3] - self.heads) != 0:
            raise SymgptError(f"attention sinks expect scores (..., {self.heads}, T_q, T_k), got {tuple(s)}")
        return tuple(s)  # (B, h, T_q, T_k) -> (B, h, T_q, T_k)

    def params(self, inputs):
        return (ParamSpec("sinks", (self.heads,)),)

    @staticmethod
    def _rows(out):
        return numel(out[:-1])  # B·h·T_q rows

    def forward(self, inputs, out):
        # the softmax runs over T_k + 1 entries per row (the sink is one more column)
        return (Work("softmax", self._rows(out) * (out[-1] + 1)),)

    def backward(self, inputs, out, ctx):
        work = [Work("softmax", self._rows(out) * (out[-1] + 1), grad="input")]
        if ctx.trainable:
            work.append(Work("elementwise", self._rows(out), grad="weight"))  # the sink column summed per head
        return tuple(work)

    def saved(self, inputs, out, ctx):
        if ctx.attention == "eager":
            # the (T_k + 1)-wide probabilities (the T_k of the output, which the values matmul
            # keeps as a view, and the sink column) and the row maxima's indices
            col = (*out[:-1], sympy.Integer(1))
            return (Saved("output", tuple(out), shares="output"), Saved("sink_column", col),
                    Saved("max_indices", col, "int64"))
        # a fused kernel keeps one log-sum-exp per row, the sink included
        return (Saved("logsumexp", tuple(out[:-1]), "fp32"),)

    def describe(self):
        return f"Softmax with {self.heads} sinks"


@register
@dataclass(frozen=True)
class SinkScale(Op):
    """Attention sinks as an output scale (transformers' GraniteSWA eager attention): each head's
    output row is multiplied by σ(logsumexp(S_row) - s_h), with a learned sink logit s_h per head,
    which is what a sink column in the softmax would leave to the values. Inputs: the masked
    scores S (B, h, T_q, T_k) and the attention output Z = softmax(S)·V (B, h, T_q, dv); output
    (B, h, T_q, dv); owns ``sinks`` (h,).

    Eager PyTorch keeps the scores (``logsumexp``'s input), the log-sum-exp and the sigmoid's
    result per row, and Z (the product's other factor); a fused kernel keeps the per-row
    statistics and Z."""

    heads: sympy.Expr
    kind = "sink_scale"
    title = "Sink scale σ(lse - sink)"
    arity = 2

    def shape(self, inputs):
        s, z = inputs
        if len(s) < 3 or sympy.expand(s[-3] - self.heads) != 0:
            raise SymgptError(f"a sink scale expects scores (..., {self.heads}, T_q, T_k), got {tuple(s)}")
        if len(z) != len(s) or any(sympy.expand(a - b) != 0 for a, b in zip(s[:-1], z[:-1])):
            raise SymgptError(f"a sink scale expects an output (..., {self.heads}, T_q, dv) of the scores' rows, "
                              f"got {tuple(z)}")
        return tuple(z)  # (B, h, T_q, dv)

    def params(self, inputs):
        return (ParamSpec("sinks", (self.heads,)),)

    def forward(self, inputs, out):
        s, z = inputs
        rows = numel(s[:-1])
        # logsumexp over each row; lse - sink; σ; the product with Z
        return (Work("softmax", numel(s)), Work("elementwise", rows), Work("activation", rows),
                Work("elementwise", numel(out)))

    def backward(self, inputs, out, ctx):
        s, z = inputs
        rows = numel(s[:-1])
        needs = ctx.needs_grad or (True, True)
        work = [Work("elementwise", numel(out), grad="input"),   # the scale's gradient (a reduction over dv)
                Work("activation", rows, grad="input")]
        if needs[0]:
            work.append(Work("softmax", numel(s), grad="input"))   # through logsumexp to the scores
        if needs[1]:
            work.append(Work("elementwise", numel(out), grad="input"))
        if ctx.trainable:
            work.append(Work("elementwise", rows, grad="weight"))  # the sink's gradient summed per head
        return tuple(work)

    def saved(self, inputs, out, ctx):
        s, z = inputs
        rows = tuple(s[:-1])
        kept = (Saved("sigmoid", rows), Saved("output_input", tuple(z), shares="input1"))
        if ctx.attention == "eager":
            return (Saved("scores", tuple(s), shares="input0"), Saved("logsumexp", rows)) + kept
        return (Saved("logsumexp", rows, "fp32"),) + kept

    def describe(self):
        return f"Sink scale ({self.heads} sinks)"
