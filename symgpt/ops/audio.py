"""Speech-encoder ops: a 1-D convolution over mel frames ("same" padding, a stride), the move of
its channels last, and rows of a fixed position table added to the frames (Whisper's encoder:
Radford et al. 2022, "Robust Speech Recognition via Large-Scale Weak Supervision", Sec. 2.2)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register
from .views import FreeView


@register
@dataclass(frozen=True)
class Conv1d(Op):
    """A 1-D convolution with an odd ``kernel``, padding (kernel - 1)/2 and a ``stride``:
    (B, c_in, n) -> (B, c_out, n/stride) (n a multiple of the stride); weight (c_out, c_in, kernel).

    Work as ``torch.utils.flop_counter`` counts a convolution: one multiply-add per weight entry
    per output position, B·(n/stride)·c_out·c_in·kernel (the bias add is elementwise). Backward:
    the same count for the input gradient (when the input needs one) and for the weight gradient.
    """

    c_in: sympy.Expr
    c_out: sympy.Expr
    kernel: sympy.Expr
    stride: sympy.Expr = sympy.Integer(1)
    bias: bool = True
    kind = "conv1d"
    title = "Conv1d"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[1] - self.c_in) != 0:
            raise SymgptError(f"conv1d expects (B, {self.c_in}, n), got {tuple(x)}")
        return (x[0], self.c_out, x[2] / self.stride)  # (B, c_in, n) -> (B, c_out, n/stride)

    def params(self, inputs):
        w = ParamSpec("weight", (self.c_out, self.c_in, self.kernel))
        return (w, ParamSpec("bias", (self.c_out,))) if self.bias else (w,)

    def _macs(self, out):
        return numel(out) * self.c_in * self.kernel

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
        return f"Conv1d {self.c_in}->{self.c_out}, kernel {self.kernel}, stride {self.stride}"


@register
@dataclass(frozen=True)
class ChannelsLast(FreeView):
    """(B, c, n) -> (B, n, c): the frames as a sequence (Whisper's ``permute(0, 2, 1)``, a view)."""

    kind = "channels_last"
    title = "Channels last"

    def shape(self, inputs):
        (x,) = inputs
        return (x[0], x[2], x[1])  # (B, d, n) -> (B, n, d)


@register
@dataclass(frozen=True)
class AddPositionRows(Op):
    """Add the first n rows of a (num, dim) position table to a sequence (B, n, dim), n <= num
    (Whisper's encoder: ``embed_positions``, an ``nn.Embedding`` of max_source_positions rows
    filled with sinusoids and frozen, ``requires_grad_(False)``). A parameter of the checkpoint,
    counted; it receives no gradient, so backward does no work for it."""

    num: sympy.Expr
    dim: sympy.Expr
    kind = "add_position_rows"
    title = "Add position rows"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[-1] - self.dim) != 0:
            raise SymgptError(f"position rows of width {self.dim} do not fit {tuple(x)}")
        return tuple(x)

    def params(self, inputs):
        return (ParamSpec("weight", (self.num, self.dim)),)

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"+ positions (rows of {self.num}×{self.dim}, frozen)"


# --- an audio encoder beside a text decoder: the encoder's positions pooled before the projector
@register
@dataclass(frozen=True)
class AvgPoolFrames(Op):
    """Average-pool a sequence in windows of ``kernel`` positions (stride ``kernel``):
    (B, n, dim) -> (B, n/kernel, dim), as Qwen2-Audio's encoder does with ``nn.AvgPool1d(2, 2)``
    between two permutes (views).

    No multiply-adds (``torch.utils.flop_counter`` counts none): one add per input element forward
    and one per input element for the input gradient, elementwise. Saved, when its input needs a
    gradient: the input it pools."""

    kernel: sympy.Expr
    kind = "avg_pool_frames"
    title = "Average pool (frames)"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"pooling frames expects (B, n, dim), got {tuple(x)}")
        return (x[0], x[1] / self.kernel, x[2])  # (B, n, d) -> (B, n/k, d)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(inputs[0])),)

    def backward(self, inputs, out, ctx):
        if ctx.needs_grad and ctx.needs_grad[0]:
            return (Work("elementwise", numel(inputs[0]), grad="input"),)
        return ()

    def saved(self, inputs, out, ctx):
        if ctx.needs_grad and ctx.needs_grad[0]:
            return (Saved("input", tuple(inputs[0])),)
        return ()

    def describe(self):
        return f"AvgPool1d {self.kernel}"


# --- a speech LM's projector input: consecutive encoder positions stacked into one row (Voxtral)
@register
@dataclass(frozen=True)
class StackFrames(FreeView):
    """(B, n, dim) -> (B, n/k, k·dim): each k consecutive positions side by side in one row,
    transformers' Voxtral ``last_hidden_state.reshape(-1, intermediate_size)`` over a contiguous
    tensor (a view: no arithmetic, nothing saved)."""

    k: sympy.Expr
    kind = "stack_frames"
    title = "Stack frames"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"stacking frames expects (B, n, dim), got {tuple(x)}")
        return (x[0], x[1] / self.k, self.k * x[2])  # (B, n, d) -> (B, n/k, k·d)

    def describe(self):
        return f"Stack {self.k} frames"


# --- Pop2Piano's conditioner: a composer's embedding row in front of the features
@register
@dataclass(frozen=True)
class PrependRows(FreeView):
    """(B, k, dim), (B, n, dim) -> (B, k + n, dim): ``torch.cat([rows, x], dim=1)`` (a copy, no
    arithmetic; nothing saved: the gradient of a concatenation is a split)."""

    kind = "prepend_rows"
    title = "Prepend rows"
    arity = 2

    def shape(self, inputs):
        rows, x = inputs
        if len(rows) != 3 or len(x) != 3 or sympy.expand(rows[-1] - x[-1]) != 0:
            raise SymgptError(f"prepending rows {tuple(rows)} to {tuple(x)}: expects (B, k, dim) and (B, n, dim)")
        return (x[0], rows[1] + x[1], x[2])

    def describe(self):
        return "Prepend rows"


# --- Speech2Text's subsampler: a gated linear unit over the channels of a convolution's output
@register
@dataclass(frozen=True)
class GLU(Op):
    """``nn.functional.glu(x, dim=1)``: (B, 2c, n) -> (B, c, n), the first half of the channels times
    the sigmoid of the second (Dauphin et al. 2017). No multiply-adds (``torch.utils.flop_counter``
    counts none): a sigmoid and a product per output element forward, the input's gradient
    elementwise backward. Saved, when its input needs a gradient: the input (``glu_backward``
    reads it)."""

    kind = "glu"
    title = "GLU"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"a GLU over channels expects (B, 2c, n), got {tuple(x)}")
        return (x[0], x[1] / 2, x[2])  # (B, 2c, n) -> (B, c, n)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("activation", numel(out)), Work("elementwise", numel(out)))

    def backward(self, inputs, out, ctx):
        if ctx.needs_grad and ctx.needs_grad[0]:
            return (Work("elementwise", numel(inputs[0]), grad="input"),)
        return ()

    def saved(self, inputs, out, ctx):
        if ctx.needs_grad and ctx.needs_grad[0]:
            return (Saved("input", tuple(inputs[0])),)
        return ()

    def describe(self):
        return "GLU (channels)"


# --- Moonshine's stem over raw samples: unpadded convolutions and a one-group GroupNorm
@register
@dataclass(frozen=True)
class Conv1dValid(Conv1d):
    """A 1-D convolution without padding: (B, c_in, n) -> (B, c_out, (n - kernel)/stride + 1)
    (n - kernel a multiple of the stride); weight (c_out, c_in, kernel). Work, parameters and
    saved tensors as :class:`Conv1d`'s (one multiply-add per weight entry per output position)."""

    kind = "conv1d_valid"
    title = "Conv1d (no padding)"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[1] - self.c_in) != 0:
            raise SymgptError(f"conv1d expects (B, {self.c_in}, n), got {tuple(x)}")
        return (x[0], self.c_out, (x[2] - self.kernel) / self.stride + 1)

    def describe(self):
        return f"Conv1d {self.c_in}->{self.c_out}, kernel {self.kernel}, stride {self.stride}, no padding"


@register
@dataclass(frozen=True)
class GroupNorm1(Op):
    """``nn.GroupNorm(1, c)`` over (B, c, n): each sample normalised over all its c·n entries, then
    a scale and shift per channel (2·c parameters). Work as LayerNorm's (``norm``); saved: the
    input and one mean and rstd per sample."""

    channels: sympy.Expr
    kind = "groupnorm1"
    title = "GroupNorm (1 group)"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3 or sympy.expand(x[1] - self.channels) != 0:
            raise SymgptError(f"GroupNorm over {self.channels} channels expects (B, c, n), got {tuple(x)}")
        return tuple(x)

    def params(self, inputs):
        return (ParamSpec("weight", (self.channels,)), ParamSpec("bias", (self.channels,)))

    def forward(self, inputs, out):
        return (Work("norm", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("norm", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        stats = (x[0], sympy.Integer(1))
        return (Saved("input", tuple(x), shares="input0"), Saved("mean", stats, "fp32"), Saved("rstd", stats, "fp32"))

    def describe(self):
        return f"GroupNorm 1 group, {self.channels} channels"
