"""Lightning attention (Qin et al. 2024, "Lightning Attention-2"; MiniMax 2025, "MiniMax-01: Scaling
Foundation Models with Lightning Attention"), the linear-attention mixer of MiniMax-Text-01's
linear layers (transformers' ``MiniMaxLightningAttention``): per head, a state S (d_h x d_h)
decayed by a fixed rate per head and updated by kᵀ·v, read by q; no softmax. Its projections are
ordinary Linear ops.

Convention for the recurrence (what counts as a FLOP): the *blocked* algorithm as transformers'
PyTorch path computes it without a cache or with an empty one (a prefill), blocks of C positions
(``block_size``, 256 by default), the last block shorter (not padded): with n = floor(T/C) whole
blocks and r = T - n·C positions left, Σ c_i² = n·C² + r² over the blocks. Per head:

* within each block, the scores Q·Kᵀ (c_i²·d_h) and their decayed product with V (c_i²·d_h);
* per block, the read of the carried state by the decayed queries (c_i·d_h²) and the state's
  update by the decayed keys and the values (c_i·d_h²);

so a count here equals ``torch.utils.flop_counter.FlopCounterMode`` on that path. The decays
(precomputed buffers, not parameters), their products, the sum of both outputs and the state's
decay are elementwise work.

Inference (``derive.step``, ``derive.recurrent``): the op declares ``recurrent_state``; its state
(``carried``) is the H x d_h x d_h matrix per layer and sequence at the model's dtype (transformers'
``MiniMaxCache.linear_cache`` keeps the tensor the algorithm computes in the values' dtype),
constant in T. A decode step (``decode``) runs transformers' sequential path for each new token:
kᵀ·v (an outer product, d_h² multiply-adds) and q·S (d_h²) are matmuls FlopCounterMode counts; the
state's decay and the sum are elementwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Op, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class LightningAttention(Op):
    """Lightning attention over a sequence: inputs q, k and v (B, T, H·d_h) (after the projection's
    activation); output (B, T, H·d_h). H = ``heads``, d_h = ``head_dim``, C = ``block``. No
    parameters (the per-head decay rates are buffers). Forward matmul work (tag ``scan``):
    B·H·(2·d_h·(n·C² + r²) + 2·T·d_h²), n = floor(T/C), r = T - n·C. Backward: twice each, less
    the products autograd skips (``backward``). Saved
    (autograd of that path, read from the algorithm, not measured): q, k, v, the decayed scores of
    each block (B, H, n·C² + r²) and the state entering each block (B, H, ceiling(T/C), d_h, d_h)."""

    heads: sympy.Expr
    head_dim: sympy.Expr
    block: sympy.Expr
    arity = 3
    kind = "lightning_attention"
    title = "Lightning attention"
    flops_note: ClassVar[str] = ("lightning attention: the blocked algorithm of transformers' PyTorch path "
                                 "(MiniMaxLightningAttention without a cache), blocks of block_size positions, the "
                                 "last one shorter (not padded); the scores within each block, their product with "
                                 "the values and the per-block state reads and updates as matmul work; the decays "
                                 "elementwise")
    recurrent_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("lightning attention at a decode step: transformers' sequential path, the state "
                                  "(d_h × d_h per head, at the model's dtype) decayed, updated by kᵀ·v and read by "
                                  "q: two matmuls of d_h² multiply-adds per head and token (counted by "
                                  "FlopCounterMode), the decay and the sum elementwise")

    def shape(self, inputs):
        width = self.heads * self.head_dim
        for x, what in zip(inputs, "qkv"):
            if sympy.expand(x[-1] - width) != 0:
                raise SymgptError(f"lightning attention {what} expects last dimension {width}, got {x[-1]}")
        return tuple(inputs[2])

    def params(self, inputs):
        return ()  # the decay rates, precomputed per head and layer, are buffers

    def _sizes(self, out):
        t, c = out[-2], self.block
        n = sympy.floor(t / c)
        r = t - c * n
        return numel(tuple(out[:-2])), t, n * c ** 2 + r ** 2, sympy.ceiling(t / c)

    def _macs(self, out):
        b, t, squares, _ = self._sizes(out)
        h, dh = self.heads, self.head_dim
        return b * h * (2 * dh * squares + 2 * t * dh ** 2)

    def _elementwise(self, out):
        b, t, squares, blocks = self._sizes(out)
        h, dh = self.heads, self.head_dim
        # scores × diagonal decay; q × query decay, k × key decay, the sum of both outputs;
        # the state's decay and update per block, and each block's decay exp(-rate·c)
        return b * h * (squares + 3 * t * dh + blocks * (2 * dh ** 2 + 1))

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(out), tag="scan"), Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        """The autograd of that path: twice each product, except that the first block reads a
        state of zeros (no gradient for it: c_1·d_h² multiply-adds fewer) and the last block's
        state update is not used without a cache (not differentiated: 2·c_n·d_h² fewer), c_1 and
        c_n the first and last blocks' lengths."""
        b, t, _, blocks = self._sizes(out)
        h, dh = self.heads, self.head_dim
        first, last = sympy.Min(t, self.block), t - self.block * (blocks - 1)
        unused = b * h * dh ** 2 * (first + 2 * last)
        return (Work("matmul", 2 * self._macs(out) - unused, tag="scan", grad="input"),
                Work("elementwise", 2 * self._elementwise(out), grad="input"))

    def saved(self, inputs, out, ctx):
        q, k, v = inputs
        b, _, squares, blocks = self._sizes(out)
        lead = tuple(out[:-2])
        h, dh = self.heads, self.head_dim
        return (Saved("q", tuple(q), shares="input0"), Saved("k", tuple(k), shares="input1"),
                Saved("v", tuple(v), shares="input2"), Saved("block_scores", (*lead, h, squares)),
                Saved("block_states", (*lead, h, blocks, dh, dh)))

    def carried(self, inputs):
        """The state per layer: (B, H, d_h, d_h) at the model's dtype."""
        v = inputs[2]
        return (("linear_state", (*v[:-2], self.heads, self.head_dim, self.head_dim), None),)

    def decode(self, inputs, out):
        """Each new token (transformers' sequential path): kᵀ·v and q·S, d_h² multiply-adds each
        per head (matmuls); the state's decay and the sum (2·d_h² per head) and the decay rate's
        exponential (one per head, per step) elementwise."""
        n = numel(tuple(out[:-1]))                      # B·q
        h, dh = self.heads, self.head_dim
        b = numel(tuple(out[:-2]))
        return (Work("matmul", 2 * n * h * dh ** 2, tag="scan"),
                Work("elementwise", 2 * n * h * dh ** 2 + b * h))

    def describe(self):
        return f"Lightning attention {self.heads} heads × {self.head_dim}, blocks of {self.block}"
