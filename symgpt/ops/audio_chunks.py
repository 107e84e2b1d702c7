"""Ops of an audio encoder that reads its log-mel spectrogram in chunks and attends within windows
(Qwen3-ASR's encoder, transformers' ``Qwen3ASREncoder``): a strided, zero-padded 2-D convolution
over (mel bins, frames), fixed sinusoids added to a chunk's positions, and the rows of a sequence
split into windows and joined back."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register
from .views import FreeView


def strided(n, kernel, stride, padding):
    """The output length of a convolution over *n* positions: ⌊(n + 2·padding - kernel)/stride⌋ + 1."""
    return sympy.floor((n + 2 * padding - kernel) / stride) + 1


@register
@dataclass(frozen=True)
class Conv2dStrided(Op):
    """A 2-D convolution of a ``kernel`` × ``kernel`` filter, a ``stride`` and zero ``padding`` on
    both spatial axes (``nn.Conv2d(c_in, c_out, kernel, stride, padding)``): (B, c_in, H, W) ->
    (B, c_out, H', W'), H' = ⌊(H + 2p - k)/s⌋ + 1; weight (c_out, c_in, k, k).

    Work as ``torch.utils.flop_counter`` counts a convolution: one multiply-add per weight entry
    per output position, B·H'·W'·c_out·c_in·k² (the bias add is elementwise). Backward: the same
    count for the input gradient (when the input needs one) and for the weight gradient.
    """

    c_in: sympy.Expr
    c_out: sympy.Expr
    kernel: sympy.Expr
    stride: sympy.Expr
    padding: sympy.Expr
    bias: bool = True
    kind = "conv2d_strided"
    title = "Conv2d (strided)"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 4 or sympy.expand(x[1] - self.c_in) != 0:
            raise SymgptError(f"conv2d expects (B, {self.c_in}, H, W), got {tuple(x)}")
        k, s, p = self.kernel, self.stride, self.padding
        return (x[0], self.c_out, strided(x[2], k, s, p), strided(x[3], k, s, p))  # (B, C, H, W) -> (B, C', H', W')

    def params(self, inputs):
        w = ParamSpec("weight", (self.c_out, self.c_in, self.kernel, self.kernel))
        return (w, ParamSpec("bias", (self.c_out,))) if self.bias else (w,)

    def _macs(self, out):
        return numel(out) * self.c_in * self.kernel ** 2

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
        return (Saved("input", tuple(x), shares="input0"),) if ctx.trainable else ()

    def describe(self):
        return f"Conv2d {self.c_in}->{self.c_out}, {self.kernel}×{self.kernel} stride {self.stride} pad {self.padding}"


@register
@dataclass(frozen=True)
class AddSinusoidRows(Op):
    """Add the first n rows of a fixed sinusoid table (a buffer, not a parameter) to (B, n, dim):
    one addition per element, no gradient for the table."""

    dim: sympy.Expr
    kind = "add_sinusoid_rows"
    title = "Add sinusoids"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[-1] - self.dim) != 0:
            raise SymgptError(f"sinusoid rows of width {self.dim} do not fit {tuple(x)}")
        return tuple(x)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"+ sinusoids ×{self.dim} (a buffer)"


@register
@dataclass(frozen=True)
class Rows(FreeView):
    """Rows [start, start + size) of a sequence (..., n, dim) -> (..., size, dim): a view."""

    start: sympy.Expr
    size: sympy.Expr
    kind = "rows"
    title = "Rows"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-2], self.size, x[-1])  # (..., n, d) -> (..., size, d)

    def describe(self):
        return f"Rows [{self.start}:{self.start + self.size}]"


@register
@dataclass(frozen=True)
class ConcatRows(Op):
    """x0 (..., a, dim), x1 (..., b, dim), ... -> (..., a + b + ..., dim): sequences joined (a copy,
    no arithmetic; the gradient is sliced back)."""

    kind = "concat_rows"
    title = "Concatenate rows"
    arity = None

    def shape(self, inputs):
        if len(inputs) < 2:
            raise SymgptError("concat_rows needs at least two inputs")
        for x in inputs[1:]:
            if len(x) != len(inputs[0]) or any(sympy.expand(a - b) != 0 for a, b in
                                               zip((*x[:-2], x[-1]), (*inputs[0][:-2], inputs[0][-1]))):
                raise SymgptError(f"concat_rows: {tuple(inputs[0])} and {tuple(x)} differ outside their rows")
        return (*inputs[0][:-2], sympy.Add(*[x[-2] for x in inputs]), inputs[0][-1])

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return ()

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()
