"""Mixture-of-experts plumbing: top-k routing and the weighted combination of expert outputs.

The router itself is a ``Linear(d, E, tag="router")`` followed by a softmax; the experts are an
ordinary FFN declared inside a group repeated ``E`` times with ``k`` active
(``Builder.repeat("ffn/experts", E, active=k)``): their parameters count E times, their compute
k times per token.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class TopK(Op):
    """Keep the ``k`` largest router probabilities per token and renormalise them:
    (B, T, E) -> (B, T, k) weights (the chosen expert indices are kept for backward)."""

    k: sympy.Expr
    #: the k weights are divided by their sum (Mixtral; Qwen-MoE and DeepSeek with norm_topk_prob)
    normalize: bool = True
    #: group-limited routing (DeepSeek): (groups, picks scored per group, groups kept); no
    #: parameters, so no count but what an eager router keeps: each group's best picks'
    #: indices, the kept groups' indices and the boolean mask of the experts outside them
    groups: tuple | None = None
    kind = "topk"
    title = "Top-k"

    def shape(self, inputs):
        (p,) = inputs
        return (*p[:-1], self.k)  # (B, T, E) -> (B, T, k)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        (p,) = inputs
        # a selection pass over the E probabilities, then a division per kept weight
        return (Work("elementwise", numel(p)), Work("elementwise", numel(out)))

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", numel(out), grad="input"),)  # scatter back into E slots

    def saved(self, inputs, out, ctx):
        if ctx.implementation == "hf-eager":
            # transformers gathers each expert's weights from the top-k values inside its loop
            # (kept there, see MoECombine); the top-k values themselves are not kept, but their
            # in-place division by their sum keeps the quotient and the sum
            kept = (Saved("indices", tuple(out), "int64"),)
            if self.groups:
                n, picks, keep = (sympy.Integer(v) for v in self.groups)
                kept += (Saved("group_picks", (*out[:-1], n, picks), "int64"),
                         Saved("group_indices", (*out[:-1], keep), "int64"),
                         Saved("expert_mask", tuple(inputs[0]), "bool"))
            if self.normalize:
                kept += (Saved("normalized", tuple(out)), Saved("sum", (*out[:-1], sympy.Integer(1))))
            return kept
        return (Saved("indices", tuple(out), "int64"), Saved("weights", tuple(out), shares="output"))

    def describe(self):
        return f"Top-{self.k}"


@register
@dataclass(frozen=True)
class ScoreBias(Op):
    """A learned bias per expert added to the router scores for the choice of the top k only
    (DeepSeek-V3's score-correction bias, AFMoE's ``expert_bias``, Laguna's
    ``e_score_correction_bias``, ERNIE 4.5's ``moe_statics.e_score_correction_bias`` when they are
    parameters): scores (..., E) -> biased scores
    (..., E); owns ``bias`` (E,). The weights are gathered from the unbiased scores, so no
    gradient passes through the sum and it keeps nothing (transformers creates the bias with
    ``requires_grad=False``)."""

    experts: sympy.Expr
    kind = "score_bias"
    title = "Score bias (choice)"

    def shape(self, inputs):
        (s,) = inputs
        return tuple(s)  # (..., E) -> (..., E)

    def params(self, inputs):
        return (ParamSpec("bias", (self.experts,)),)

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)  # the sum

    def backward(self, inputs, out, ctx):
        return ()  # the top-k weights are read from the scores, not from this sum

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"Score bias ({self.experts} experts, choice only)"


@register
@dataclass(frozen=True)
class MoECombine(Op):
    """Sum the k active experts' outputs weighted by the router: expert output (B, T, d) (one
    copy of the expert group; k copies run), weights (B, T, k) -> (B, T, d)."""

    kind = "moe_combine"
    title = "Weighted sum of experts"
    arity = 2

    def shape(self, inputs):
        x, w = inputs
        return tuple(x)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        x, w = inputs
        return (Work("elementwise", 2 * w[-1] * numel(out)),)  # k products and k sums per element

    def backward(self, inputs, out, ctx):
        x, w = inputs
        needs = ctx.needs_grad or (True, True)
        work = []
        if needs[0]:
            work.append(Work("elementwise", w[-1] * numel(out), grad="input"))
        if needs[1]:
            work.append(Work("elementwise", 2 * w[-1] * numel(out), grad="input"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        x, w = inputs
        needs = ctx.needs_grad or (True, True)
        k = w[-1]
        if ctx.implementation == "hf-eager":
            # transformers' eager expert loop, per (token, expert) pair: the pair's token and
            # slot indices (torch.where on the one-hot mask: one int64 storage of 2 per pair),
            # the gathered token (hidden_states[token_idx], which the expert's first linear keeps
            # instead of the shared input), the gathered weight and the expert's output (the
            # product of the two keeps both), and the weighted output index_add_ keeps
            return (Saved("token_slot", (sympy.Integer(2), k, *x[:-1]), "int64"), Saved("gathered_input", (k, *x)),
                    Saved("gathered_weight", (k, *x[:-1], sympy.Integer(1))), Saved("expert_output", (k, *x)),
                    Saved("weighted_output", (k, *x)))
        kept = []
        if needs[0]:
            kept.append(Saved("weights", tuple(w), shares="input1"))
        if needs[1]:
            kept.append(Saved("expert_outputs", (w[-1], *x)))  # the k outputs per token
        return tuple(kept)
