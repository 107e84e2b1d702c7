"""Kimi Delta Attention (Kimi Team 2025, "Kimi Linear: An Expressive, Efficient Attention
Architecture"), the linear-attention mixer of Kimi Linear's and Ling 3's (bailing_hybrid) KDA
layers (transformers' ``KimiLinearDeltaAttention``, ``BailingHybridDeltaAttention``): the gated
delta rule with a decay per channel (d_k values per head and position) instead of one per head.
Its projections are ordinary Linear ops and its short causal convolution is
``ops.ssm.CausalConv1d``.

Convention for the recurrence (what counts as a FLOP): the *chunked* algorithm as transformers'
PyTorch path computes it (``chunk_kimi_delta_attention``, the path it runs without the
flash-linear-attention kernels), chunk length C (64 in that code), so a count here equals
``torch.utils.flop_counter.FlopCounterMode`` on that path. The sequence is padded to
c = ceiling(T/C) whole chunks; per head:

* per chunk, the products of the C x C lower-triangular matrix A (after its forward substitution)
  with V·β (C²·d_v) and with K·β·exp(g) (C²·d_k);
* per chunk, the scan over chunks: the read of the carried state by the decayed queries and by
  the cumulative-decay keys (C·d_k·d_v each), the intra-chunk attention times the corrected values
  (C²·d_v) and the state update by the decayed keys (C·d_k·d_v);
* A itself and the intra-chunk attention are built as elementwise products summed over d_k
  (per-channel decays: C²·d_k each per chunk), and A's forward substitution is a loop of
  elementwise products: work FlopCounterMode does not count, listed as elementwise work, with
  the decays and their cumulative sums, the L2 norms of q and k and the forget gate.

Inference (``derive.step``, ``derive.recurrent``): the op declares ``recurrent_state``; its state
(``carried``) is the H x d_k x d_v matrix per layer and sequence, in fp32 whatever the model's
dtype (transformers' cache keeps ``recurrent_states`` as float32), beside the convolution's conv
state. A decode step (``decode``) runs transformers' ``recurrent_kimi_delta_attention`` for one
token: elementwise products and sums that FlopCounterMode does not count (elementwise work here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class KimiDeltaRule(Op):
    """Kimi delta attention over a sequence: inputs q, k (B, T, H·d_k), v (B, T, H·d_v), f
    (B, T, H·d_k: the forget gate's projection, before its bias and softplus or sigmoid) and b
    (B, T, H: β's projection, before its sigmoid); output (B, T, H·d_v). H = ``heads``,
    C = ``chunk``. Parameters A_log (H) and dt_bias (H·d_k). Forward matmul work (tag ``scan``),
    c = ceiling(T/C) chunks: B·H·c·(C²·(d_k + 2·d_v) + 3·C·d_k·d_v). Backward: twice each, less
    the products autograd skips (``backward``). Saved
    (read from the algorithm, not measured): q, k, v, f and b, and the chunk states
    (B, H, c + 1, d_k, d_v) in fp32."""

    heads: sympy.Expr
    k_dim: sympy.Expr
    v_dim: sympy.Expr
    chunk: sympy.Expr
    arity = 5
    kind = "kimi_delta_rule"
    title = "Kimi delta attention"
    flops_note: ClassVar[str] = ("Kimi delta attention: the chunked algorithm of transformers' PyTorch path "
                                 "(chunk_kimi_delta_attention), the sequence padded to ceiling(T/C) whole chunks; the "
                                 "products of the chunk matrices with the values and keys and the per-chunk state "
                                 "reads and updates as matmul work; the per-channel decayed scores (products "
                                 "summed over d_k), the forward substitution, decays and gates elementwise")
    recurrent_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("Kimi delta attention at a decode step: transformers' recurrent_kimi_delta_attention, "
                                  "the state (d_k × d_v per head, fp32) decayed per channel, read by k, updated and "
                                  "read by q with elementwise products and sums (not counted by FlopCounterMode): "
                                  "elementwise work, 0 matmul FLOPs")

    def shape(self, inputs):
        q, k, v, f, b = inputs
        hk, hv = self.heads * self.k_dim, self.heads * self.v_dim
        for x, size, what in ((q, hk, "q"), (k, hk, "k"), (v, hv, "v"), (f, hk, "f"), (b, self.heads, "b")):
            if sympy.expand(x[-1] - size) != 0:
                raise SymgptError(f"Kimi delta attention {what} expects last dimension {size}, got {x[-1]}")
        return tuple(v)

    def params(self, inputs):
        return (ParamSpec("A_log", (self.heads,)), ParamSpec("dt_bias", (self.heads * self.k_dim,)))

    def _sizes(self, out):
        return (numel(tuple(out[:-2])), sympy.ceiling(out[-2] / self.chunk), self.chunk, self.heads, self.k_dim,
                self.v_dim)

    def _macs(self, out):
        b, c, q, h, dk, dv = self._sizes(out)
        return b * h * c * (q ** 2 * (dk + 2 * dv) + 3 * q * dk * dv)

    def _elementwise(self, out):
        b, c, q, h, dk, dv = self._sizes(out)
        t = out[-2]
        gates = 6 * b * t * h * dk + 2 * b * t * h   # f + dt_bias, exp(A_log)·, softplus / sigmoid; sigmoid(b)
        norms = 7 * b * t * h * dk                   # L2 norms of q and k, q's scaling
        chunked = (b * h * c * q * (dk + dv)         # k·β, v·β
                   + 3 * b * h * c * q * q * dk      # decay mask (C²·d_k), A's and the intra scores' products
                   + b * h * c * (q - 1) * q * (2 * q - 1) / 3   # A's forward substitution (2·i² for row i)
                   + 4 * b * h * c * q * dk          # cumulative decay, exp(g), decayed q and k
                   + 2 * b * h * c * q * dv          # v_new, the sum of both outputs
                   + 2 * b * h * c * dk * dv)        # the state's decay and update
        return gates + norms + chunked

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(out), tag="scan"), Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        """The autograd of that path: twice each product, except that the first chunk reads a
        state of zeros twice (no gradient for it: 2·C·d_k·d_v multiply-adds fewer) and the last
        chunk's state update is not used without a cache (not differentiated: 2·C·d_k·d_v fewer)."""
        b, _, q, h, dk, dv = self._sizes(out)
        return (Work("matmul", 2 * self._macs(out) - 4 * b * h * q * dk * dv, tag="scan", grad="input"),
                Work("elementwise", 2 * self._elementwise(out), grad="input"))

    def saved(self, inputs, out, ctx):
        q, k, v, f, b = inputs
        _, c, _, h, dk, dv = self._sizes(out)
        return (Saved("q", tuple(q), shares="input0"), Saved("k", tuple(k), shares="input1"),
                Saved("v", tuple(v), shares="input2"), Saved("f", tuple(f), shares="input3"),
                Saved("b", tuple(b), shares="input4"),
                Saved("chunk_states", (*out[:-2], h, c + 1, dk, dv), "fp32"))

    def carried(self, inputs):
        """The recurrent state per layer: (B, H, d_k, d_v) in fp32."""
        v = inputs[2]
        return (("recurrent_state", (*v[:-2], self.heads, self.k_dim, self.v_dim), "fp32"),)

    def decode(self, inputs, out):
        """One decode step (q = 1), all elementwise: per head the per-channel decay (d_k·d_v and
        the exponential d_k), the read by k, the update and the read by q (2·d_k·d_v each), the
        correction (2·d_v); the gates and the norms of q and k as in the chunked form."""
        n = numel(tuple(out[:-1]))                      # B·q
        h, dk, dv = self.heads, self.k_dim, self.v_dim
        return (Work("elementwise", n * h * (7 * dk * dv + 2 * dv + dk) + n * h * (13 * dk + 2)),)

    def describe(self):
        return f"Kimi delta attention {self.heads} heads × {self.k_dim}/{self.v_dim}, chunks of {self.chunk}"
