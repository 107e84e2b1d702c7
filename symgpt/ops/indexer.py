"""The lightning indexer of DeepSeek Sparse Attention (DeepSeek-AI 2025, "DeepSeek-V3.2-Exp";
transformers' ``DeepseekV32Indexer``): per query, an index score for every key,

    I[b, s, t] = Σ_j w[b, s, j] · ReLU(q[b, s, j, :] · k[b, t, :] / √D)

over the indexer's H heads of D (``index_n_heads``, ``index_head_dim``), then the top-k keys
(``index_topk``), which alone the attention may read. Three ops of their own besides ordinary
linears, norms and a matmul:

* :class:`HeadWeightedSum` -- Σ_j w[j] · S[j] over the heads: scores (B, H, T, T_k) and weights
  (B, T, H) -> (B, T, T_k), a batched matmul ``[B, T, 1, H] @ [B, T, H, T_k]`` in transformers;
* :class:`TopKIndices` -- the indices of the k largest index scores per query (``topk(...).indices``):
  (B, T, T_k) -> (B, T, k), integers;
* :class:`IndexMask` -- the attention scores with every key outside a query's top-k masked:
  scores (B, h, T, T_k) and indices (B, T, k) -> the scores' shape. transformers' eager path
  scatters the indices into a (B, 1, T, T_k) boolean and fills the attention mask with it: the
  attention still computes every query's T_k scores (the *dense-masked* convention).

transformers runs the indexer under ``torch.no_grad``: its ops are declared with
``Builder.op(..., no_grad=True)`` (no backward, nothing saved). The rules here are each op's own,
as if a gradient were wanted, so that an op stays correct wherever it is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class HeadWeightedSum(Op):
    """Σ_j w[b, s, j] · S[b, j, s, t]: scores (B, H, T, T_k), weights (B, T, H) -> (B, T, T_k);
    one multiply-add per score (a batched matmul of (1, H) by (H, T_k) per query)."""

    kind = "head_weighted_sum"
    title = "Weighted sum over heads"
    arity = 2

    def _check(self, inputs):
        s, w = inputs
        if len(s) < 3 or sympy.expand(s[-3] - w[-1]) != 0 or sympy.expand(s[-2] - w[-2]) != 0:
            raise SymgptError(f"head weights {w} do not match the scores {s}")
        return s, w

    def shape(self, inputs):
        s, w = self._check(inputs)
        return (*s[:-3], s[-2], s[-1])  # (B, H, T, T_k) -> (B, T, T_k)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        s, w = self._check(inputs)
        return (Work("matmul", numel(s), tag="attention_scores"),)

    def backward(self, inputs, out, ctx):
        s, w = self._check(inputs)
        needs = ctx.needs_grad or (True, True)
        # dS = w ⊗ dI (one product per score); dw = Σ_t S · dI (one multiply-add per score)
        return tuple(Work("matmul", numel(s), tag="attention_scores", grad="input") for need in needs if need)

    def saved(self, inputs, out, ctx):
        needs = ctx.needs_grad or (True, True)
        kept = []
        if needs[0]:
            kept.append(Saved("weights", tuple(inputs[1]), shares="input1"))  # dS needs w
        if needs[1]:
            kept.append(Saved("scores", tuple(inputs[0]), shares="input0"))   # dw needs S
        return tuple(kept)


@register
@dataclass(frozen=True)
class TopKIndices(Op):
    """The indices of the ``k`` largest entries of the last dimension: (..., n) -> (..., k),
    integers (``torch.topk(...).indices``); ``k`` may be ``Min(index_topk, T)``."""

    k: sympy.Expr
    kind = "topk_indices"
    title = "Top-k indices"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-1], self.k)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        (x,) = inputs
        return (Work("elementwise", numel(x)),)  # a selection pass over the n entries

    def backward(self, inputs, out, ctx):
        return ()  # integer indices: no gradient flows back through them

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"Top-{self.k} indices"


@register
@dataclass(frozen=True)
class IndexMask(Op):
    """Mask the scores (B, h, T, T_k) outside each query's selected keys, given the indices
    (B, T, k): one mask of (B, 1, T, T_k) made from the indices and added to the scores (one
    element of work per mask entry). The mask is a constant: the gradient passes through the
    addition unchanged and nothing is kept for it."""

    kind = "index_mask"
    title = "Top-k key mask"
    arity = 2

    def shape(self, inputs):
        s, idx = inputs
        if len(s) < 3 or sympy.expand(s[-2] - idx[-2]) != 0:
            raise SymgptError(f"indices {idx} do not match the scores {s}")
        return tuple(s)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        s, idx = inputs
        return (Work("elementwise", numel(s[:-3]) * s[-2] * s[-1]),)

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()
