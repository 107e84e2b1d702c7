"""Audio codebook tokens embedded and summed into the text embeddings: Kyutai's speech-to-text
model (transformers' ``KyutaiSpeechToTextEmbeddings``) embeds, at each position, the text token and
one token of each of K audio codebooks from one table, offsetting codebook k's ids by
V + k·V_c, and sums the K + 1 rows.

Declared as the text embedding (the decoder's ``embedding/token``, V rows) and this op, which owns
the K·V_c + 1 further rows of the table (the last the audio padding row) and adds the K codebook
rows to the text row: K additions per element. Under a convention that counts a lookup as a one-hot
matmul, each lookup is counted against the rows declared with it (text ids against V, codebook ids
against K·V_c + 1), not against the whole table of V + K·V_c + 1 rows transformers gathers from.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class CodebookEmbeddings(Op):
    """x (B, T, dim), ids (B, T, K) -> x + Σ_k table[ids_k] (B, T, dim); owns ``weight`` (num, dim)."""

    num: sympy.Expr
    dim: sympy.Expr
    kind = "codebook_embeddings"
    title = "Codebook embeddings"
    arity = 2

    def shape(self, inputs):
        x, ids = inputs
        if len(x) != 3 or len(ids) != 3 or sympy.expand(x[-1] - self.dim) != 0:
            raise SymgptError(f"codebook embeddings expect x (B, T, {self.dim}) and ids (B, T, K), got {tuple(x)} "
                              f"and {tuple(ids)}")
        return tuple(x)  # (B, T, d), (B, T, K) -> (B, T, d)

    def params(self, inputs):
        return (ParamSpec("weight", (self.num, self.dim)),)

    def forward(self, inputs, out):
        _, ids = inputs
        # the gather (free unless a convention counts it as a one-hot matmul), then K sums per element
        return (Work("matmul", numel(ids) * self.num * self.dim, tag="embedding"),
                Work("elementwise", ids[-1] * numel(out)))

    def backward(self, inputs, out, ctx: Context):
        _, ids = inputs
        if not ctx.trainable:
            return ()  # x's gradient passes through unchanged
        return (Work("matmul", numel(ids) * self.num * self.dim, tag="embedding", grad="weight"),)

    def saved(self, inputs, out, ctx):
        _, ids = inputs
        return (Saved("indices", tuple(ids), "int64", shares="input1"),) if ctx.trainable else ()

    def describe(self):
        return f"+ Σ codebook embeddings {self.num}×{self.dim}"
