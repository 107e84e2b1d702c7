"""The gated delta rule (Yang, Kautz & Hatamizadeh 2024, "Gated Delta Networks: Improving Mamba2
with Delta Rule"), the linear-attention mixer of Qwen3-Next's Gated DeltaNet layers
(transformers' ``Qwen3NextGatedDeltaNet``); its projections are ordinary Linear ops and its short
causal convolution is ``ops.ssm.CausalConv1d``.

Convention for the recurrence (what counts as a FLOP): the *chunked* algorithm as transformers'
PyTorch path computes it (``torch_chunk_gated_delta_rule``, the path it runs without the
flash-linear-attention kernels), chunk length C (64 in that code), so a count here equals
``torch.utils.flop_counter.FlopCounterMode`` on that path. The sequence is padded to
c = ceiling(T/C) whole chunks; the query/key heads are repeated to the H value heads first, so
every term is per value head:

* within each chunk, the two C x C products K_β·Kᵀ and Q·Kᵀ (C²·d_k each);
* per chunk, the scan over chunks: the read of the carried state by the decayed keys and by the
  queries (C·d_k·d_v each), the intra-chunk attention times the corrected values (C²·d_v) and the
  state update Kᵀ·V_new (C·d_k·d_v);
* the two unit-triangular solves of the UT transform (``torch.linalg.solve_triangular``,
  C·(C - 1)/2·(d_k + d_v) multiply-adds per chunk and head) are work FlopCounterMode does not
  count: they are listed as elementwise work, with the decays, exponentials, L2 norms of q and k,
  β = sigmoid(b) and g = -exp(A_log)·softplus(a + dt_bias).

Inference (``derive.step``, ``derive.recurrent``): the op declares ``recurrent_state``; its state
(``carried``) is the H x d_k x d_v matrix per layer and sequence, in fp32 whatever the model's
dtype (transformers' cache holds it as ``recurrent_states``, cast to float32 by the PyTorch path,
beside the convolution's conv state at the model's dtype), constant in T. A decode step
(``decode``) runs transformers' ``torch_recurrent_gated_delta_rule`` for one token: the state's
decay, its read by k, the rank-one update and its read by q are elementwise products and sums
(3·d_k·d_v multiply-adds per value head and the decay's d_k·d_v), which FlopCounterMode does not
count: they are elementwise work here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class GatedDeltaRule(Op):
    """The gated delta rule over a sequence: inputs q and k (B, T, H_k·d_k), v (B, T, H·d_v), a and b
    (B, T, H) (the decay's and β's projections, before softplus and sigmoid); output (B, T, H·d_v).
    H = ``v_heads`` (a multiple of ``k_heads``), C = ``chunk``. Parameters dt_bias and A_log, (H,)
    each. Forward matmul work (tag ``scan``), c = ceiling(T/C) chunks:
    B·H·c·(2·C²·d_k + C²·d_v + 3·C·d_k·d_v). Backward: twice each. Saved (transformers' PyTorch
    path, read from the algorithm, not measured): q, k, v, a and b, and the chunk states
    (B, H, c + 1, d_k, d_v) in fp32."""

    k_heads: sympy.Expr
    v_heads: sympy.Expr
    k_dim: sympy.Expr
    v_dim: sympy.Expr
    chunk: sympy.Expr
    arity = 5
    kind = "gated_delta_rule"
    title = "Gated delta rule"
    flops_note: ClassVar[str] = ("gated delta rule: the chunked algorithm of transformers' PyTorch path "
                                 "(torch_chunk_gated_delta_rule), the sequence padded to ceiling(T/C) whole chunks; "
                                 "its C x C products within a chunk and its per-chunk state reads and updates as "
                                 "matmul work; the two triangular solves of the UT transform (not counted by "
                                 "FlopCounterMode), decays and exponentials elementwise")
    recurrent_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("gated delta rule at a decode step: transformers' torch_recurrent_gated_delta_rule, "
                                  "the state (d_k × d_v per value head) decayed, read by k, updated and read by q "
                                  "with elementwise products and sums (not counted by FlopCounterMode): elementwise "
                                  "work, 0 matmul FLOPs")

    def shape(self, inputs):
        q, k, v, a, b = inputs
        for x, size, what in ((q, self.k_heads * self.k_dim, "q"), (k, self.k_heads * self.k_dim, "k"),
                              (v, self.v_heads * self.v_dim, "v"), (a, self.v_heads, "a"), (b, self.v_heads, "b")):
            if sympy.expand(x[-1] - size) != 0:
                raise SymgptError(f"gated delta rule {what} expects last dimension {size}, got {x[-1]}")
        return tuple(v)  # (B, T, H·d_v)

    def params(self, inputs):
        return (ParamSpec("dt_bias", (self.v_heads,)), ParamSpec("A_log", (self.v_heads,)))

    def chunks(self, out) -> sympy.Expr:
        return sympy.ceiling(out[-2] / self.chunk)

    def _sizes(self, out):
        return numel(tuple(out[:-2])), self.chunks(out), self.chunk, self.v_heads, self.k_dim, self.v_dim

    def _macs(self, out):
        b, c, q, h, dk, dv = self._sizes(out)
        return b * h * c * (2 * q ** 2 * dk + q ** 2 * dv + 3 * q * dk * dv)

    def _elementwise(self, out):
        b, c, q, h, dk, dv = self._sizes(out)
        t = out[-2]
        solves = b * h * c * q * (q - 1) / 2 * (dk + dv)
        gates = 5 * b * t * h                                   # g = -exp(A_log)·softplus(a + dt_bias), sigmoid(b)
        norms = 7 * b * t * h * dk                              # L2 norms of q and k, q's scaling
        chunked = (b * h * c * q * (dk + dv)                    # k·β, v·β
                   + 4 * b * h * c * q ** 2                     # pairwise decays, their exp, two masked products
                   + 3 * b * h * c * q * dk                     # decayed k·β, decayed q and k
                   + 2 * b * h * c * q * dv                     # v_new, the sum of both outputs
                   + 2 * b * h * c * dk * dv)                   # the state's decay and update
        return solves + gates + norms + chunked

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(out), tag="scan"), Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        return (Work("matmul", 2 * self._macs(out), tag="scan", grad="input"),
                Work("elementwise", 2 * self._elementwise(out), grad="input"))

    def saved(self, inputs, out, ctx):
        q, k, v, a, b = inputs
        _, c, _, h, dk, dv = self._sizes(out)
        return (Saved("q", tuple(q), shares="input0"), Saved("k", tuple(k), shares="input1"),
                Saved("v", tuple(v), shares="input2"), Saved("a", tuple(a), shares="input3"),
                Saved("b", tuple(b), shares="input4"),
                Saved("chunk_states", (*out[:-2], h, c + 1, dk, dv), "fp32"))

    def carried(self, inputs):
        """The recurrent state per layer: (B, H, d_k, d_v)."""
        v = inputs[2]
        return (("recurrent_state", (*v[:-2], self.v_heads, self.k_dim, self.v_dim), "fp32"),)

    def decode(self, inputs, out):
        """One decode step (q = 1), all elementwise: per value head the decay (d_k·d_v + 1), the
        read by k, the update and the read by q (2·d_k·d_v each), the correction (2·d_v); the gates
        (5·H) and the norms of q and k (7·H·d_k) as in the chunked form."""
        n = numel(tuple(out[:-1]))                      # B·q
        h, dk, dv = self.v_heads, self.k_dim, self.v_dim
        return (Work("elementwise", n * h * (7 * dk * dv + 2 * dv + 1) + 5 * n * h + 7 * n * h * dk),)

    def describe(self):
        return (f"Gated delta rule {self.v_heads} value heads × {self.v_dim} ({self.k_heads} key heads × "
                f"{self.k_dim}), chunks of {self.chunk}")
