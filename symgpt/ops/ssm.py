"""State-space ops: the depthwise causal convolution of a Mamba mixer, Mamba-1's selective scan
(Gu & Dao 2023, "Mamba: Linear-Time Sequence Modeling with Selective State Spaces", Algorithm 2)
and Mamba-2's chunked state-space-duality scan (Dao & Gu 2024, "Transformers are SSMs", Section 6,
the "minimal SSD" listing).

Convention for the recurrence (what counts as a FLOP of a scan): the work is the arithmetic of
transformers' PyTorch path, the one it runs without the CUDA kernels (``MambaMixer.forward`` with
``mamba_selective_scan``'s sequential loop; ``Mamba2Mixer.forward`` with ``mamba2_chunk_scan``),
so a count here equals ``torch.utils.flop_counter.FlopCounterMode`` on that path:

* the selective scan is the *sequential* scan: one state update h_t = exp(Δ_t A) h_{t-1} + Δ_t B_t x_t
  per step (elementwise work) and one contraction y_t = C_t h_t per step and channel (a matmul of
  d_state multiply-adds, tagged ``scan``);
* the SSD scan is the *chunked* algorithm with chunk length Q: the sequence padded to
  ceiling(T/Q) whole chunks, the four einsums (C·Bᵀ within a chunk, its product with x, the chunk
  states, C times the carried states) and the inter-chunk recurrence over ceiling(T/Q) + 1 states,
  each a matmul tagged ``scan`` (the quadratic Q² terms are the intra-chunk "attention");
* the convolution is counted as PyTorch runs it: ``F.conv1d`` with padding K - 1 on both sides
  computes T + K - 1 output positions per channel (K - 1 of them are dropped).

Elementwise work (discretisation, exponentials, the state update, the D skip) is listed as such,
so a convention that prices elementwise work counts it; the default prices it 0, as
FlopCounterMode does.

Inference (``derive.step``, ``derive.recurrent``): each op here declares ``recurrent_state`` and two
more rules. ``carried(inputs)``: the tensors a generating model keeps per layer between decode steps,
constant in T, as transformers' cache (``LinearAttentionLayer``) holds them after a prefill: the
conv state (B, C, K) -- the last K inputs per channel, the whole kernel length (transformers pads a
shorter prompt to K), at the model's dtype, and the SSM state, Mamba-1's (B, d_inner, d_state),
Mamba-2's (B, H, P, N), in fp32 whatever the model's dtype (transformers' PyTorch path computes
the state update in float32 and caches that tensor; measured on a bf16 model). Each entry is
(name, shape, dtype): None for the cache's own width, "fp32" for 4 bytes. ``decode(inputs, out)``: the work of one decode step (one new token) as transformers'
PyTorch path runs it: ``causal_conv1d_update`` convolves the K cached inputs and the new one
(K + 1 positions, no padding: 2 outputs of K multiply-adds per channel, one kept);
``mamba_selective_state_update`` and ``mamba2_selective_state_update`` update the state
elementwise and contract it with C (d_state multiply-adds per channel: a matmul and a bmm).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register


def _check_last(x, size, what) -> None:
    if sympy.expand(x[-1] - size) != 0:
        raise SymgptError(f"{what} expects last dimension {size}, got {x[-1]}")


@register
@dataclass(frozen=True)
class CausalConv1d(Op):
    """A depthwise causal convolution over time: (B, T, C) -> (B, T, C); weight (C, 1, K), bias (C,).

    transformers' ``nn.Conv1d(C, C, K, groups=C, padding=K - 1)`` then ``[..., :T]``: PyTorch
    computes all T + K - 1 padded positions, K multiply-adds each, per channel, which is what
    FlopCounterMode counts: B·C·K·(T + K - 1) multiply-adds (tag ``dense``). Backward: the same
    count for the input gradient and for the weight gradient. Saved: its input."""

    channels: sympy.Expr
    kernel: sympy.Expr
    bias: bool = True
    kind = "causal_conv1d"
    title = "Causal conv1d"
    flops_note: ClassVar[str] = ("causal conv1d: counted as PyTorch runs it, padded by K - 1 on both sides, "
                                 "T + K - 1 output positions per channel (K - 1 dropped)")
    #: a decode step keeps the last K inputs per channel (transformers' conv state)
    recurrent_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("causal conv1d at a decode step: transformers' causal_conv1d_update convolves the "
                                  "K cached inputs and the new one, 2 outputs of K multiply-adds per channel (one "
                                  "kept); its conv state is the last K inputs per channel")

    def shape(self, inputs):
        (x,) = inputs
        _check_last(x, self.channels, "causal conv1d")
        return tuple(x)  # (B, T, C) -> (B, T, C)

    def params(self, inputs):
        w = ParamSpec("weight", (self.channels, sympy.Integer(1), self.kernel))
        return (w, ParamSpec("bias", (self.channels,))) if self.bias else (w,)

    def _macs(self, out):
        *lead, t, c = out
        return numel(tuple(lead)) * c * self.kernel * (t + self.kernel - 1)

    def forward(self, inputs, out):
        work = [Work("matmul", self._macs(out), tag="dense")]
        if self.bias:
            work.append(Work("elementwise", numel(out)))
        return tuple(work)

    def backward(self, inputs, out, ctx: Context):
        work = []
        if ctx.needs_grad and ctx.needs_grad[0]:
            work.append(Work("matmul", self._macs(out), tag="dense", grad="input"))
        if ctx.trainable:
            work.append(Work("matmul", self._macs(out), tag="dense", grad="weight"))
            if self.bias:
                work.append(Work("elementwise", numel(out), grad="weight"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        return (Saved("input", tuple(x), shares="input0"),)

    def carried(self, inputs):
        """The conv state per layer: (B, C, K), the last K inputs of every channel."""
        (x,) = inputs
        return (("conv_state", (*x[:-2], self.channels, self.kernel), None),)

    def decode(self, inputs, out):
        """One decode step (q = 1 new positions): the K cached inputs and the q new ones, K + q
        positions convolved without padding, q + 1 outputs of K multiply-adds per channel."""
        *lead, t, c = out
        work = [Work("matmul", numel(tuple(lead)) * c * self.kernel * (t + 1), tag="dense")]
        if self.bias:
            work.append(Work("elementwise", numel(tuple(lead)) * c * (t + 1)))
        return tuple(work)

    def describe(self):
        return f"Causal conv1d {self.channels} channels, kernel {self.kernel}"


@register
@dataclass(frozen=True)
class SelectiveScan(Op):
    """Mamba-1's selective scan (transformers' ``mamba_selective_scan``, sequential loop):
    inputs x (B, T, D), Δ before its softplus (B, T, D: dt_proj's output with its bias), B and C
    (B, T, N); output y (B, T, D) = the scan plus the D skip, D = ``inner``, N = ``state``.
    Parameters A_log (D, N) and D (D,).

    Work per step and channel: the state update h = exp(Δ·A)·h + Δ·B·x (elementwise, 6·N: Δ·A,
    exp, Δ·B, ·x, ·h, +) and the output y = C·h (a matmul of N multiply-adds, tag ``scan``), plus
    softplus(Δ) and the D skip (2) per element, and A = -exp(A_log) once (2·D·N). Backward (the
    autograd of that loop): twice the matmul work (the gradients of C and of h) and twice the
    elementwise work. Saved (transformers' loop, hf-eager): exp(Δ·A) and Δ·B (B, T, D, N) in fp32
    and each step's state (B, T, D, N) fp32, with x, Δ, B and C; fused (mamba-ssm's
    ``selective_scan_fn``, read from its source, not measured): its inputs x, Δ, B and C only
    (the kernel recomputes the states in backward)."""

    inner: sympy.Expr
    state: sympy.Expr
    arity = 4
    kind = "selective_scan"
    title = "Selective scan"
    flops_note: ClassVar[str] = ("selective scan: the sequential scan of transformers' PyTorch path, one C·h "
                                 "contraction of d_state multiply-adds per step and channel as matmul work; "
                                 "the state update exp(Δ·A)·h + Δ·B·x is elementwise work")
    recurrent_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("selective scan at a decode step: transformers' mamba_selective_state_update, "
                                  "the state h (d_inner × d_state) updated elementwise and contracted with C "
                                  "(a matmul of d_state multiply-adds per channel)")

    def shape(self, inputs):
        x, dt, b, c = inputs
        _check_last(x, self.inner, "selective scan x")
        _check_last(dt, self.inner, "selective scan Δ")
        _check_last(b, self.state, "selective scan B")
        _check_last(c, self.state, "selective scan C")
        return tuple(x)  # (B, T, D) -> (B, T, D)

    def params(self, inputs):
        return (ParamSpec("A_log", (self.inner, self.state)), ParamSpec("D", (self.inner,)))

    def _elementwise(self, out):
        return 6 * numel(out) * self.state + 3 * numel(out) + 2 * self.inner * self.state

    def forward(self, inputs, out):
        return (Work("matmul", numel(out) * self.state, tag="scan"),
                Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        return (Work("matmul", 2 * numel(out) * self.state, tag="scan", grad="input"),
                Work("elementwise", 2 * self._elementwise(out), grad="input"))

    def saved(self, inputs, out, ctx):
        x, dt, b, c = inputs
        kept = (Saved("x", tuple(x), shares="input0"), Saved("delta", tuple(dt), shares="input1"),
                Saved("B", tuple(b), shares="input2"), Saved("C", tuple(c), shares="input3"))
        if ctx.implementation == "hf-eager":
            big = (*x, self.state)
            kept += (Saved("exp_delta_A", big, "fp32"), Saved("delta_B", big, "fp32"),
                     Saved("states", big, "fp32"))
        return kept

    def carried(self, inputs):
        """The SSM state per layer: (B, d_inner, d_state)."""
        x = inputs[0]
        return (("ssm_state", (*x[:-2], self.inner, self.state), "fp32"),)

    def decode(self, inputs, out):
        """One decode step: the same work as one step of the sequential scan (its forward at T = 1)."""
        return self.forward(inputs, out)

    def describe(self):
        return f"Selective scan {self.inner} channels × state {self.state} (sequential)"


@register
@dataclass(frozen=True)
class SSDScan(Op):
    """Mamba-2's chunked scan (transformers' ``mamba2_chunk_scan``): inputs x (B, T, H·P),
    Δ before its bias and softplus (B, T, H), B and C (B, T, G·N); output y (B, T, H·P), the scan
    plus the D skip. H = ``heads``, P = ``head_dim``, N = ``state``, G = ``groups`` (B and C are
    shared by the H/G heads of a group), Q = ``chunk``. Parameters dt_bias, A_log and D, (H,) each.

    The sequence is padded to c = ceiling(T/Q) chunks of Q. Matmul work (tag ``scan``), the
    einsums of the listing: C·Bᵀ within each chunk B·c·Q²·H·N, its product with x B·c·Q²·H·P, the
    chunk states B·c·Q·H·P·N, the inter-chunk recurrence over c + 1 states B·(c + 1)²·H·P·N, and C
    times each chunk's start state B·c·Q·H·N·P. Elementwise work: the decay mask exp(segsum) and
    its product with C·Bᵀ (2·B·c·Q²·H), the decays of B and of the off-diagonal output
    (B·c·Q·H·(N + P)), the sum of both outputs (B·c·Q·H·P), discretisation and the D skip
    (3·B·T·H·P) and softplus(Δ + bias) with Δ·A (3·B·T·H). Backward: twice each. Saved (hf-eager
    and fused alike, read from the algorithm, not measured): x, Δ, B and C, and the chunk states
    (B, c + 1, H, P, N) in fp32."""

    heads: sympy.Expr
    head_dim: sympy.Expr
    state: sympy.Expr
    groups: sympy.Expr
    chunk: sympy.Expr
    arity = 4
    kind = "ssd_scan"
    title = "SSD scan"
    flops_note: ClassVar[str] = ("SSD scan: the chunked algorithm of transformers' PyTorch path, the sequence padded "
                                 "to ceiling(T/Q_chunk) whole chunks; its einsums (C·Bᵀ and its product with x "
                                 "within a chunk, the chunk states, the recurrence over the chunk states, C times "
                                 "the carried states) as matmul work; decays and exponentials elementwise")
    recurrent_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("SSD scan at a decode step: transformers' mamba2_selective_state_update, not the "
                                  "chunked scan: the state (H × P × N) updated elementwise and contracted with C "
                                  "(a bmm of N multiply-adds per head channel)")

    def shape(self, inputs):
        x, dt, b, c = inputs
        _check_last(x, self.heads * self.head_dim, "SSD scan x")
        _check_last(dt, self.heads, "SSD scan Δ")
        _check_last(b, self.groups * self.state, "SSD scan B")
        _check_last(c, self.groups * self.state, "SSD scan C")
        return tuple(x)  # (B, T, H·P) -> (B, T, H·P)

    def params(self, inputs):
        return tuple(ParamSpec(n, (self.heads,)) for n in ("dt_bias", "A_log", "D"))

    def chunks(self, out) -> sympy.Expr:
        return sympy.ceiling(out[-2] / self.chunk)

    def _sizes(self, out):
        batch = numel(tuple(out[:-2]))
        return batch, self.chunks(out), self.chunk, self.heads, self.head_dim, self.state

    def _macs(self, out):
        b, c, q, h, p, n = self._sizes(out)
        return b * c * q ** 2 * h * n + b * c * q ** 2 * h * p + 2 * b * c * q * h * p * n + b * (c + 1) ** 2 * h * p * n

    def _elementwise(self, out):
        b, c, q, h, p, n = self._sizes(out)
        t = out[-2]
        return 2 * b * c * q ** 2 * h + b * c * q * h * (n + 2 * p) + 3 * b * t * h * p + 3 * b * t * h

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(out), tag="scan"), Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        return (Work("matmul", 2 * self._macs(out), tag="scan", grad="input"),
                Work("elementwise", 2 * self._elementwise(out), grad="input"))

    def saved(self, inputs, out, ctx):
        x, dt, b, c = inputs
        b_, chunks, _, h, p, n = self._sizes(out)
        return (Saved("x", tuple(x), shares="input0"), Saved("delta", tuple(dt), shares="input1"),
                Saved("B", tuple(b), shares="input2"), Saved("C", tuple(c), shares="input3"),
                Saved("chunk_states", (*out[:-2], chunks + 1, h, p, n), "fp32"))

    def carried(self, inputs):
        """The SSM state per layer: (B, H, P, N)."""
        x = inputs[0]
        return (("ssm_state", (*x[:-2], self.heads, self.head_dim, self.state), "fp32"),)

    def decode(self, inputs, out):
        """One decode step (q = 1): the state update, B·H·P·N elementwise for each of the decay,
        Δ·B·x and their sum, Δ·B (B·H·N), exp(Δ·A) and softplus(Δ + bias) (3·B·H), the D skip
        (2·B·H·P); the output C·h, a bmm of B·H·P·N multiply-adds (tag ``scan``)."""
        n = numel(tuple(out[:-1]))                      # B·q
        h, p, s_ = self.heads, self.head_dim, self.state
        return (Work("matmul", n * h * p * s_, tag="scan"),
                Work("elementwise", 3 * n * h * p * s_ + n * h * s_ + 3 * n * h + 2 * n * h * p))

    def describe(self):
        return (f"SSD scan {self.heads} heads × {self.head_dim}, state {self.state}, {self.groups} groups, "
                f"chunks of {self.chunk}")
