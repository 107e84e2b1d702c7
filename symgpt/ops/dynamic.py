"""Learned per-channel vectors and Doge's dynamic mask. Learned scalings of Doge (SmallDoge,
transformers' DogeForCausalLM): a learned per-channel
scale of the residual stream (:class:`ChannelScale`, ``input_residual`` and
``post_attention_residual``: ``w ⊙ residual + branch``) and dynamic-mask attention's mask
(:class:`DynamicMask`: ``exp(A · softplus(dt))`` per key/value head and key, added to every query's
scores of that head's group; ``DogeAttention.prepare_dynamic_mask``). Past ``keep_window_size``
keys the mask keeps the top ``keep_window_size`` of each row (a top-k, no matmul); the scores are
still computed over every key.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class ChannelScale(Op):
    """x (..., dim) ⊙ w (dim,): a learned scale per channel; owns ``weight`` (dim,)."""

    dim: sympy.Expr
    kind = "channel_scale"
    title = "Learned scale"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.dim) != 0:
            raise SymgptError(f"a channel scale of {self.dim} expects last dimension {self.dim}, got {x[-1]}")
        return tuple(x)  # (..., dim) -> (..., dim)

    def params(self, inputs):
        return (ParamSpec("weight", (self.dim,)),)

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        needs = ctx.needs_grad or (True,)
        work = [Work("elementwise", numel(out), grad="input")] if needs[0] else []
        if ctx.trainable:  # x ⊙ g, summed over the leading dimensions
            work.append(Work("elementwise", 2 * numel(out), grad="weight"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        kept = [Saved("input", tuple(x), shares="input0")] if ctx.trainable else []
        return tuple(kept)

    def describe(self):
        return f"× w ({self.dim})"


@register
@dataclass(frozen=True)
class ChannelBias(Op):
    """x (..., dim) + b (dim,): a learned bias added on its own (JetMoE's ``JetMoeMoE.bias`` and
    ``JetMoeMoA.bias`` after the experts' weighted sum); owns ``bias`` (dim,)."""

    dim: sympy.Expr
    kind = "channel_bias"
    title = "Learned bias"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.dim) != 0:
            raise SymgptError(f"a bias of {self.dim} expects last dimension {self.dim}, got {x[-1]}")
        return tuple(x)  # (..., dim) -> (..., dim)

    def params(self, inputs):
        return (ParamSpec("bias", (self.dim,)),)

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        # the input's gradient passes through; the bias's is the gradient summed over the leading dimensions
        return (Work("elementwise", numel(out), grad="weight"),) if ctx.trainable else ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"+ b ({self.dim})"


@register
@dataclass(frozen=True)
class DynamicMask(Op):
    """Scores S (B, h, T_q, T_k) and dt (B, T_k, h_kv) -> S + exp(A · softplus(dt)), the mask of key/value
    head j added to the scores of its h/h_kv query heads; owns ``A`` (h_kv,).

    Forward: softplus, × A and exp on each of the B·T_k·h_kv values of dt (3 elements each), and the
    sum with the scores (one per score). Backward: the three steps' gradients on dt, and A's
    (a product and a sum per value)."""

    kv_heads: sympy.Expr
    kind = "dynamic_mask"
    title = "Dynamic mask"
    arity = 2

    def shape(self, inputs):
        s, dt = inputs
        if len(s) == 4 and len(dt) == 3 and sympy.expand(dt[-2] - s[-1]) != 0:
            # at a decode step DogeAttention runs dt_proj over every cached value, not the new ones only
            raise SymgptError("dynamic-mask attention over a KV cache (dt_proj of every cached value at each "
                              "step) is not modelled")
        if len(s) != 4 or len(dt) != 3 or sympy.expand(dt[-1] - self.kv_heads) != 0:
            raise SymgptError(f"a dynamic mask expects scores (B, h, T_q, T_k) and dt (B, T_k, {self.kv_heads}), "
                              f"got {tuple(s)} and {tuple(dt)}")
        return tuple(s)  # (B, h, T_q, T_k) -> (B, h, T_q, T_k)

    def params(self, inputs):
        return (ParamSpec("A", (self.kv_heads,)),)

    def forward(self, inputs, out):
        _, dt = inputs
        return (Work("elementwise", 3 * numel(dt)), Work("elementwise", numel(out)))

    def backward(self, inputs, out, ctx):
        _, dt = inputs
        work = [Work("elementwise", 3 * numel(dt), grad="input")]
        if ctx.trainable:
            work.append(Work("elementwise", 2 * numel(dt), grad="weight"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        _, dt = inputs
        # softplus keeps dt, the product keeps softplus(dt) (for A's gradient), exp its output
        return (Saved("dt", tuple(dt), shares="input1"), Saved("softplus", tuple(dt)), Saved("exp", tuple(dt)))

    def describe(self):
        return f"S + exp(A·softplus(dt)) ({self.kv_heads} heads)"
