"""Ops of a Conformer encoder and a windowed Q-Former (Granite Speech; Gulati et al. 2020,
"Conformer: Convolution-augmented Transformer for Speech Recognition"): a depthwise 1-D
convolution, a batch norm over channels, Shaw et al.'s (2018) relative-position scores, and a
batch of one broadcast to many (a learned query read against every window)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register
from .views import FreeView


@register
@dataclass(frozen=True)
class DepthwiseConv1d(Op):
    """A depthwise 1-D convolution (``nn.Conv1d(c, c, k, groups=c, bias=False)`` after a padding that
    keeps the length): (B, c, n) -> (B, c, n); weight (c, 1, k). Work as ``torch.utils.flop_counter``
    counts it: B·c·n·k multiply-adds; backward the same for the input and for the weight gradient."""

    channels: sympy.Expr
    kernel: sympy.Expr
    kind = "depthwise_conv1d"
    title = "Depthwise Conv1d"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[1] - self.channels) != 0:
            raise SymgptError(f"a depthwise conv1d expects (B, {self.channels}, n), got {tuple(x)}")
        return tuple(x)

    def params(self, inputs):
        return (ParamSpec("weight", (self.channels, sympy.Integer(1), self.kernel)),)

    def forward(self, inputs, out):
        return (Work("matmul", numel(out) * self.kernel, tag="dense"),)

    def backward(self, inputs, out, ctx: Context):
        work = []
        if ctx.needs_grad and ctx.needs_grad[0]:
            work.append(Work("matmul", numel(out) * self.kernel, tag="dense", grad="input"))
        if ctx.trainable:
            work.append(Work("matmul", numel(out) * self.kernel, tag="dense", grad="weight"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        return (Saved("input", tuple(x), shares="input0"),) if ctx.trainable else ()


@register
@dataclass(frozen=True)
class BatchNorm1d(Op):
    """``nn.BatchNorm1d(c)`` over (B, c, n): weight and bias of c (its running mean and variance
    are buffers, not parameters); a normalisation per element, as a LayerNorm is counted."""

    channels: sympy.Expr
    kind = "batchnorm1d"
    title = "BatchNorm1d"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[1] - self.channels) != 0:
            raise SymgptError(f"batch norm expects (B, {self.channels}, n), got {tuple(x)}")
        return tuple(x)

    def params(self, inputs):
        return (ParamSpec("weight", (self.channels,)), ParamSpec("bias", (self.channels,)))

    def forward(self, inputs, out):
        return (Work("norm", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("norm", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        stats = (sympy.Min(1, x[0]), self.channels)  # one per channel (none where the batch is empty)
        return (Saved("input", tuple(x), shares="input0"), Saved("mean", stats, "fp32"), Saved("invstd", stats, "fp32"))


@register
@dataclass(frozen=True)
class RelPositionScores(Op):
    """Shaw et al.'s relative-position scores: queries (b, h, c, dh) against a (..., c, c, dh) table
    of the embedded distances (a leading 1, or 0 where nothing runs),
    ``einsum("bhcd,crd->bhcr")``: (b, h, c, c), b·h·c·c·dh multiply-adds
    (``torch.utils.flop_counter`` counts the einsum's batched matmul so); backward the same for
    each input's gradient."""

    kind = "rel_position_scores"
    title = "Relative-position scores"
    arity = 2

    def shape(self, inputs):
        q, rel = inputs
        if len(q) != 4 or len(rel) < 3 or sympy.expand(q[-1] - rel[-1]) != 0:
            raise SymgptError(f"relative-position scores expect (b, h, c, dh) and (c, c, dh), got {q}, {rel}")
        return (*q[:-1], rel[-2])  # (b, h, c, dh), (.., c, r, dh) -> (b, h, c, r)

    def params(self, inputs):
        return ()

    def _macs(self, inputs, out):
        return numel(out) * inputs[0][-1]

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(inputs, out), tag="attention_scores"),)

    def backward(self, inputs, out, ctx: Context):
        needs = ctx.needs_grad or (True, True)
        return tuple(Work("matmul", self._macs(inputs, out), tag="attention_scores", grad="input")
                     for need in needs if need)

    def saved(self, inputs, out, ctx):
        q, rel = inputs
        return (Saved("a", tuple(q), shares="input0"), Saved("b", tuple(rel), shares="input1"))


@register
@dataclass(frozen=True)
class ExpandBatch(FreeView):
    """(b, ...) -> (n, ...), b one (or none): a batch of one broadcast to n (``expand``, a view; a
    matmul against a batch of n reads it so)."""

    n: sympy.Expr
    kind = "expand_batch"
    title = "Expand batch"

    def shape(self, inputs):
        (x,) = inputs
        return (self.n, *x[1:])  # (1, ...) -> (n, ...)
