"""The mLSTM, xLSTM's matrix-memory cell (Beck et al. 2024, "xLSTM: Extended Long Short-Term
Memory"; the xLSTM 7B form of Beck et al. 2025, "xLSTM 7B: A Recurrent LLM for Fast and Efficient
Inference"), as transformers' ``xLSTMForCausalLM`` runs it without the external ``xlstm`` kernels:
``wrap_chunkwise_arbitrary_sequence_length`` (the default ``mode`` "inference").

Convention for the recurrence (what counts as a FLOP): that code's arithmetic, so a count here
equals ``torch.utils.flop_counter.FlopCounterMode`` on it. The first n = floor(T/Q) whole chunks of
Q = ``chunk`` positions go through the *chunkwise* kernel (``mlstm_chunkwise_native_autograd``:
per chunk the state update Kᵀ·V, the intra-chunk Q·Kᵀ and its product with V, the read of the
carried state C and normaliser n by the queries); the r = T - n·Q positions left go through the
*sequential* step kernel (``mlstm_recurrent_step_native``: per step the outer product k·vᵀ, the
reads q·C and q·n). Those products are matmul work (tag ``scan``). The gates (log-sigmoid
forget gate, exponential input gate, running maxima) and the decays, state updates and
normalisations are elementwise work: the output elements of each pointwise operation of that
code; its reductions and scans (max, sum, cumsum over a chunk) are not counted.

Inference: the state (``carried``; per layer and sequence C (heads x d_qk x d_v), n (heads x d_qk)
and m (heads x 1)) is not a KV cache: it is what transformers' ``xLSTMCache`` holds (its
``rnn_state``), at the model's dtype (the cache is made at the embeddings' dtype), constant in T.
``xLSTMCache`` sizes d_qk and d_v from the config's qk_dim and v_dim, rounded up to multiples of
64, the layer from int(hidden_size·factor): they agree for every released xLSTM (transformers'
cached decoding fails when they do not); here they are the layer's. A decode step
(``decode``) of q new tokens runs the same code from the cached state: its forward at T = q.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Op, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class MLSTM(Op):
    """The mLSTM over a sequence: inputs q and k (B, T, H·d_qk), v (B, T, H·d_v), the input and
    forget gates' pre-activations (B, T, H); output (B, T, H·d_v). H = ``heads``, d_qk =
    ``qk_dim``/H, d_v = ``v_dim``/H, Q = ``chunk``; n = floor(T/Q), r = T - n·Q. No parameters.

    Forward matmul work (tag ``scan``), s = B·H: chunkwise s·n·(2·Q·d_qk·d_v + Q²·(d_qk + d_v) +
    Q·d_qk); step by step s·r·(2·d_qk·d_v + d_qk). Elementwise work: chunkwise
    s·n·(6·Q² + Q·(15 + 3·d_qk + 2·d_v) + 2·d_qk·d_v + 2·d_qk + 5); step by step
    s·r·(3·d_qk·d_v + 4·d_qk + d_v + 13). Backward (a convention, not measured): twice each.
    Saved (read from the algorithm, not measured): q, k, v and the gates, with the carried states
    (B, H, n + 1, d_qk, d_v) in fp32."""

    heads: sympy.Expr
    qk_dim: sympy.Expr
    v_dim: sympy.Expr
    chunk: sympy.Expr
    arity = 5
    kind = "mlstm"
    title = "mLSTM"
    flops_note: ClassVar[str] = ("mLSTM: transformers' PyTorch path (wrap_chunkwise_arbitrary_sequence_length), the "
                                 "first floor(T/Q_chunk) whole chunks chunkwise, the positions left step by step; "
                                 "its state updates, intra-chunk products and state reads as matmul work; gates, "
                                 "decays and normalisations elementwise (reductions and cumulative sums not counted)")
    recurrent_state: ClassVar[bool] = True
    state_note: ClassVar[str] = ("mLSTM state (transformers' xLSTMCache rnn_state): C (d_qk × d_v per head), "
                                 "n (d_qk per head) and m (1 per head) at the KV-cache width (the cache is made "
                                 "at the model's dtype)")
    decode_note: ClassVar[str] = ("mLSTM at a decode step: transformers' mlstm_recurrent_step_native from the cached "
                                  "C, n and m (xLSTMCache, at the model's dtype): the outer product k·vᵀ and the "
                                  "reads q·C and q·n as matmul work")

    def shape(self, inputs):
        q, k, v, i, f = inputs
        for x, size, what in ((q, self.qk_dim, "q"), (k, self.qk_dim, "k"), (v, self.v_dim, "v"),
                              (i, self.heads, "input gate"), (f, self.heads, "forget gate")):
            if sympy.expand(x[-1] - size) != 0:
                raise SymgptError(f"mLSTM {what} expects last dimension {size}, got {x[-1]}")
        return tuple(v)  # (B, T, H·d_v)

    def params(self, inputs):
        return ()

    def _sizes(self, out):
        t = out[-2]
        n = sympy.floor(t / self.chunk)
        s = numel(tuple(out[:-2])) * self.heads
        return s, n, t - n * self.chunk, self.chunk, self.qk_dim / self.heads, self.v_dim / self.heads

    def _macs(self, out):
        s, n, r, q, a, b = self._sizes(out)
        return s * n * (2 * q * a * b + q ** 2 * (a + b) + q * a) + s * r * (2 * a * b + a)

    def _elementwise(self, out):
        s, n, r, q, a, b = self._sizes(out)
        return (s * n * (6 * q ** 2 + q * (15 + 3 * a + 2 * b) + 2 * a * b + 2 * a + 5)
                + s * r * (3 * a * b + 4 * a + b + 13))

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(out), tag="scan"), Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        return (Work("matmul", 2 * self._macs(out), tag="scan", grad="input"),
                Work("elementwise", 2 * self._elementwise(out), grad="input"))

    def saved(self, inputs, out, ctx):
        q, k, v, i, f = inputs
        s, n, r, _, a, b = self._sizes(out)
        return (Saved("q", tuple(q), shares="input0"), Saved("k", tuple(k), shares="input1"),
                Saved("v", tuple(v), shares="input2"), Saved("igate", tuple(i), shares="input3"),
                Saved("fgate", tuple(f), shares="input4"),
                Saved("chunk_states", (*out[:-2], self.heads, n + 1, a, b), "fp32"))

    def carried(self, inputs):
        """The mLSTM state per layer: C (B, H, d_qk, d_v), n (B, H, d_qk), m (B, H, 1)."""
        lead = tuple(inputs[2][:-2])
        a, b = self.qk_dim / self.heads, self.v_dim / self.heads
        return (("C", (*lead, self.heads, a, b), None), ("n", (*lead, self.heads, a), None),
                ("m", (*lead, self.heads, sympy.Integer(1)), None))

    def decode(self, inputs, out):
        """One decode step (q new tokens): the forward at T = q from the cached state."""
        return self.forward(inputs, out)

    def describe(self):
        return f"mLSTM {self.heads} heads, d_qk·H {self.qk_dim}, d_v·H {self.v_dim}, chunks of {self.chunk}"
