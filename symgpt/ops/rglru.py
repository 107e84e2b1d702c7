"""The Real-Gated Linear Recurrent Unit (De et al. 2024, "Griffin: Mixing Gated Linear Recurrences
with Local Attention for Efficient Language Models"), the recurrence of RecurrentGemma's recurrent
blocks (transformers' ``RecurrentGemmaRglru``).

Convention for the recurrence (what counts as a FLOP): the arithmetic of transformers' PyTorch
path, the *sequential* loop of ``RecurrentGemmaRglru._rnn_scan`` (one h_t = a_t·h_{t-1} + x_t per
position and channel). Its two block-diagonal gate projections (``torch.baddbmm``, one block of
width/heads per head) are matmul work; the gates' sigmoids, the decay a = exp(-8·r·softplus(Λ)),
the input normalisation sqrt(1 - a²) and the scan itself are elementwise work (18 per position and
channel, counted from that code; 16 for a single position), priced 0 by the default convention as FlopCounterMode does.

Inference: the state is not a KV cache. transformers keeps it on the modules, not in a Cache
object (``RecurrentGemmaRecurrentBlock.conv1d_state`` and ``RecurrentGemmaRglru.recurrent_states``):
per recurrent layer and sequence the RG-LRU's width-wide state in fp32 (``carried``) and the
convolution's last kernel - 1 inputs at the model's dtype (:class:`GriffinConv1d`, the block's
conv1d). A decode step (``decode``) runs the block's single-position branch: the convolution as a
product of the cached inputs and the new one with the kernel, summed (elementwise, no conv1d:
FlopCounterMode counts none of it), and one step of the scan from the cached state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register
from .ssm import CausalConv1d


@register
@dataclass(frozen=True)
class RGLRU(Op):
    """The RG-LRU over a sequence: (B, T, W) -> (B, T, W), W = ``width``, H = ``heads`` blocks of
    W/H. Parameters ``recurrent_param`` (W), ``input_gate_weight`` and ``recurrent_gate_weight``
    (H, W/H, W/H), ``input_gate_bias`` and ``recurrent_gate_bias`` (H, W/H).

    Forward matmul work (tag ``dense``): the two gates, 2·B·T·W·W/H multiply-adds. Elementwise
    work: 16·B·T·W (the gates' bias adds and sigmoids, the log-decay and its two exponentials,
    the gated input, sqrt(1 - a²) and the reset of the first position, the gate's reset), the
    scan's product and sum (2·B·T·W, none for T = 1: transformers returns the input then) and
    softplus(Λ) once (W). Backward: the gates' input and weight
    gradients (each as much matmul work as the forward) and twice the elementwise work (a
    convention, not measured). Saved (transformers' PyTorch path, measured with
    saved_tensors_hooks; no fused kernel ships with transformers, so both implementations keep
    these): the input, ten fp32 tensors of (B, T, W) (the gates, decays and each step's state; eight for
    T = 1),
    softplus(Λ) (W) in fp32 and two (B, T, 1) reset masks."""

    width: sympy.Expr
    heads: sympy.Expr
    kind = "rglru"
    title = "RG-LRU"
    flops_note: ClassVar[str] = ("RG-LRU: the sequential scan of transformers' PyTorch path "
                                 "(RecurrentGemmaRglru._rnn_scan), one h = a·h + x per position and channel as "
                                 "elementwise work; its two block-diagonal gate projections as matmul work")
    recurrent_state: ClassVar[bool] = True
    state_note: ClassVar[str] = ("RG-LRU state (held on transformers' modules, not a Cache): the recurrent state "
                                 "(lru_width per layer) in fp32 and the conv1d's last kernel - 1 inputs at the "
                                 "KV-cache width")
    decode_note: ClassVar[str] = ("RG-LRU at a decode step: one step a·h + x from the cached state (fp32, "
                                  "RecurrentGemmaRglru.recurrent_states), elementwise; its two gate projections "
                                  "as matmul work")

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.width) != 0:
            raise SymgptError(f"RG-LRU expects last dimension {self.width}, got {x[-1]}")
        return tuple(x)  # (B, T, W) -> (B, T, W)

    def params(self, inputs):
        block = self.width / self.heads
        out = [ParamSpec("recurrent_param", (self.width,))]
        for gate in ("input_gate", "recurrent_gate"):
            out += [ParamSpec(f"{gate}_weight", (self.heads, block, block)),
                    ParamSpec(f"{gate}_bias", (self.heads, block))]
        return tuple(out)

    def _macs(self, out):
        return 2 * numel(out) * self.width / self.heads

    @staticmethod
    def _loop(out):
        """1 when the scan's loop runs (T >= 2), 0 for a single position (transformers returns the
        input then, with no step)."""
        return sympy.Min(1, out[-2] - 1)

    def _elementwise(self, out):
        return (16 + 2 * self._loop(out)) * numel(out) + self.width

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(out), tag="dense"), Work("elementwise", self._elementwise(out)))

    def backward(self, inputs, out, ctx):
        work = []
        if ctx.needs_grad and ctx.needs_grad[0]:
            work.append(Work("matmul", self._macs(out), tag="dense", grad="input"))
        if ctx.trainable:
            work.append(Work("matmul", self._macs(out), tag="dense", grad="weight"))
        work.append(Work("elementwise", 2 * self._elementwise(out), grad="input"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        lead = tuple(out[:-1])
        return (Saved("input", tuple(x), shares="input0"), Saved("steps", (*lead, (8 + 2 * self._loop(out)) * self.width), "fp32"),
                Saved("softplus_param", (self.width,), "fp32"), Saved("reset", (*lead, sympy.Integer(2)), "bool"))

    def carried(self, inputs):
        """The RG-LRU's state per layer: (B, W) in fp32."""
        (x,) = inputs
        return (("recurrent_state", (*x[:-2], self.width), "fp32"),)

    def decode(self, inputs, out):
        """One decode step from the cached state: the gates (as the forward), the 16 elementwise
        operations per channel of a single position and the step a·h + x (2), softplus(Λ) once."""
        return (Work("matmul", self._macs(out), tag="dense"), Work("elementwise", 18 * numel(out) + self.width))

    def describe(self):
        return f"RG-LRU {self.width} channels, {self.heads} gate blocks (sequential)"


@register
@dataclass(frozen=True)
class GriffinConv1d(CausalConv1d):
    """The depthwise causal convolution of a Griffin recurrent block (transformers'
    ``RecurrentGemmaRecurrentBlock.conv_1d``): the same layer and the same prefill as
    :class:`~symgpt.ops.ssm.CausalConv1d`; what differs is inference. Its state per layer and
    sequence is the last K - 1 inputs per channel, (B, C, K - 1), at the model's dtype
    (``conv1d_state``: the prompt's inputs cut, or zero-padded, to K - 1). A decode step
    concatenates them with the new input and sums their product with the kernel, plus the bias:
    B·C·K products, B·C·(K - 1) sums and B·C bias adds per new position, all elementwise (no
    conv1d runs, so FlopCounterMode counts none of it)."""

    kind = "griffin_conv1d"
    title = "Causal conv1d (Griffin)"
    decode_note: ClassVar[str] = ("Griffin conv1d at a decode step: RecurrentGemmaRecurrentBlock's product of the "
                                  "K - 1 cached inputs and the new one with the kernel, summed (elementwise, no "
                                  "conv1d); its conv state is the last K - 1 inputs per channel")

    def carried(self, inputs):
        """The conv state per layer: (B, C, K - 1), the last K - 1 inputs of every channel."""
        (x,) = inputs
        return (("conv_state", (*x[:-2], self.channels, self.kernel - 1), None),)

    def decode(self, inputs, out):
        """One decode step per new position: 2·K - 1 operations per channel (K products, K - 1
        sums) and the bias add, elementwise."""
        return (Work("elementwise", numel(out) * (2 * self.kernel - 1 + (1 if self.bias else 0))),)
