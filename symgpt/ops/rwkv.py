"""RWKV's recurrent ops (Peng et al. 2023, "RWKV: Reinventing RNNs for the Transformer Era"; RWKV-4
as transformers' ``RwkvForCausalLM`` implements it): the token shift that mixes each position with
the previous one, and the WKV recurrence of the time-mix block.

Convention for the recurrence (what counts as a FLOP of the WKV): the arithmetic of transformers'
PyTorch path, ``rwkv_linear_attention_cpu``, the *sequential* loop it runs without the CUDA kernel:
one numerically stabilised step per position and channel (a running maximum, two exponentials for
the output and two for the state update). The WKV has no matmul: FlopCounterMode counts none of it,
and every operation of it is elementwise work (25 per position and channel, counted from that loop),
priced 0 by the default convention as FlopCounterMode does. The inference state (per layer and
sequence: the last input of each token shift and the WKV's numerator, denominator and running
maximum) is not a KV cache: both ops say so with ``recurrent_state`` and give their state
(``carried``) and one decode step's work (``decode``), as transformers' ``RwkvModel`` keeps them
after a prefill: five tensors of (B, hidden_size, L) -- the channel-mix's and the time-mix's last
inputs at the model's dtype, the WKV's numerator, denominator and running maximum in fp32.
transformers sizes the WKV's three at hidden_size; here they are at the WKV's width
(attention_hidden_size), the same for every released RWKV-4 (transformers' cached decoding fails
when the two differ).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


def _check_last(x, size, what) -> None:
    if sympy.expand(x[-1] - size) != 0:
        raise SymgptError(f"{what} expects last dimension {size}, got {x[-1]}")


@register
@dataclass(frozen=True)
class TokenShiftMix(Op):
    """RWKV's token shift and mix: x·μ + shift(x)·(1 - μ), shift(x) the sequence moved one position
    later with a zero first row (``nn.ZeroPad2d((0, 0, 1, -1))``); (B, T, C) -> (B, T, C); the
    parameter μ (1, 1, C) is named ``param`` (transformers' ``time_mix_key``, ...).

    Elementwise work: 1 - μ once (C) and three per element (two products and their sum); the shift
    is a copy. Backward: the same count for the input gradient and for μ's. Saved (transformers'
    module, hf-eager): its input, the shifted copy (B, T, C) and 1 - μ (C); fused: its input."""

    channels: sympy.Expr
    param: str = "time_mix"
    kind = "token_shift_mix"
    title = "Token shift"
    #: a decode step keeps the last input of the shift (transformers' state[0] and state[1])
    recurrent_state: ClassVar[bool] = True
    #: the state is the op's input's last position: the ops of this kind that read one input (the
    #: time-mix's key, value and receptance shifts) share one state (``derive.recurrent``)
    shared_state: ClassVar[bool] = True
    decode_note: ClassVar[str] = ("token shift at a decode step: the previous token's input is read from the state "
                                  "(transformers' RwkvModel state[0] and state[1], one per block and mix), "
                                  "elementwise work")

    def shape(self, inputs):
        (x,) = inputs
        _check_last(x, self.channels, "token shift")
        return tuple(x)  # (B, T, C) -> (B, T, C)

    def params(self, inputs):
        return (ParamSpec(self.param, (sympy.Integer(1), sympy.Integer(1), self.channels)),)

    def forward(self, inputs, out):
        return (Work("elementwise", 3 * numel(out) + self.channels),)

    def backward(self, inputs, out, ctx):
        work = []
        if ctx.needs_grad and ctx.needs_grad[0]:
            work.append(Work("elementwise", 3 * numel(out), grad="input"))
        if ctx.trainable:
            work.append(Work("elementwise", 3 * numel(out) + self.channels, grad="weight"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        kept = (Saved("input", tuple(x), shares="input0"),)
        if ctx.implementation == "hf-eager":
            kept += (Saved("shifted", tuple(x)), Saved("one_minus_mix", (self.channels,)))
        return kept

    def carried(self, inputs):
        """The shift's state per layer: (B, C), the last input (at the model's dtype)."""
        (x,) = inputs
        return (("shift_state", (*x[:-2], self.channels), None),)

    def decode(self, inputs, out):
        """One decode step: the mix of the new input with the cached one, as the forward at q = 1."""
        return self.forward(inputs, out)

    def describe(self):
        return f"Token shift and mix, {self.channels} channels"


@register
@dataclass(frozen=True)
class WKV(Op):
    """RWKV-4's WKV recurrence (transformers' ``rwkv_linear_attention_cpu``): inputs the keys and
    values (B, T, A); output (B, T, A), A = ``channels``. Parameters ``time_decay`` w and
    ``time_first`` u, (A,) each. Per channel, with a = Σ e^{-(t-1-i)·e^w + k_i}·v_i and
    b = Σ e^{-(t-1-i)·e^w + k_i} over the earlier positions i,
    wkv_t = (a + e^{u + k_t}·v_t) / (b + e^{u + k_t}), computed with a running maximum.

    Matmul work: none. Elementwise work, counted from that loop: 25·B·T·A (per position and
    channel: the output's maximum, two exponentials, numerator, denominator and their quotient;
    the state's maximum, two exponentials and the updated numerator and denominator), -e^w once
    (2·A) and the running maximum's initial value (B·A). Backward (a convention, not measured):
    twice the elementwise work. Saved: hf-eager (the autograd of that loop, measured): the keys
    and values and 11 fp32 tensors of (B, A) per position, with e^w (A) in fp32; fused (the CUDA
    kernel's ``ctx.save_for_backward``, read from transformers' ``RwkvLinearAttention``, not
    measured): the keys, values and output, with -e^w (A) in fp32."""

    channels: sympy.Expr
    arity = 2
    kind = "wkv"
    title = "WKV"
    flops_note: ClassVar[str] = ("RWKV WKV: the sequential loop of transformers' PyTorch path "
                                 "(rwkv_linear_attention_cpu), one stabilised step per position and channel; "
                                 "it has no matmul, its 25 operations per position and channel are elementwise")
    recurrent_state: ClassVar[bool] = True
    state_note: ClassVar[str] = ("RWKV state (transformers' RwkvModel state, five tensors per block): the two "
                                 "token shifts' last inputs at the KV-cache width, the WKV's numerator, denominator "
                                 "and running maximum in fp32")
    decode_note: ClassVar[str] = ("WKV at a decode step: one step of rwkv_linear_attention_cpu from the cached "
                                  "numerator, denominator and running maximum (fp32), 25 elementwise operations per "
                                  "channel, no matmul")

    def shape(self, inputs):
        k, v = inputs
        _check_last(k, self.channels, "WKV keys")
        _check_last(v, self.channels, "WKV values")
        return tuple(v)  # (B, T, A) -> (B, T, A)

    def params(self, inputs):
        return (ParamSpec("time_decay", (self.channels,)), ParamSpec("time_first", (self.channels,)))

    def _elementwise(self, out):
        per_seq = numel(tuple(out[:-2])) * self.channels
        return 25 * numel(out) + 2 * self.channels + per_seq

    def forward(self, inputs, out):
        return (Work("elementwise", self._elementwise(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", 2 * self._elementwise(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        k, v = inputs
        kept = (Saved("key", tuple(k), shares="input0"), Saved("value", tuple(v), shares="input1"))
        if ctx.implementation == "hf-eager":
            return kept + (Saved("steps", (*out[:-1], 11 * self.channels), "fp32"),
                           Saved("exp_time_decay", (self.channels,), "fp32"))
        return kept + (Saved("output", tuple(out), shares="output"), Saved("time_decay", (self.channels,), "fp32"))

    def carried(self, inputs):
        """The WKV's state per layer: numerator, denominator and running maximum, (B, A) each, fp32."""
        k = inputs[0]
        return tuple((name, (*k[:-2], self.channels), "fp32") for name in ("numerator", "denominator", "maximum"))

    def decode(self, inputs, out):
        """One decode step (q new positions from the cached state): 25 elementwise operations per
        position and channel and -e^w once (2·A); the running maximum is read, not initialised."""
        return (Work("elementwise", 25 * numel(out) + 2 * self.channels),)

    def describe(self):
        return f"WKV recurrence, {self.channels} channels (sequential)"
