"""Vision Transformer ops: the patch embedding as a convolution, the class token, and a learned
position table added to the patch sequence (ViT, Dosovitskiy et al. 2021, Eq. 1)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register
from .views import FreeView


@register
@dataclass(frozen=True)
class Conv2d(Op):
    """A 2-D convolution with kernel = stride = ``kernel`` (non-overlapping patches):
    (B, c_in, S, S) -> (B, c_out, S/kernel, S/kernel); weight (c_out, c_in, kernel, kernel).

    Work as ``torch.utils.flop_counter`` counts a convolution: one multiply-add per weight entry
    per output position, B·(S/k)²·c_out·c_in·k² (the bias add is elementwise). Backward: the same
    count for the input gradient (when the input needs one) and for the weight gradient.
    """

    c_in: sympy.Expr
    c_out: sympy.Expr
    kernel: sympy.Expr
    bias: bool = True
    kind = "conv2d"
    title = "Conv2d"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 4 or sympy.expand(x[1] - self.c_in) != 0:
            raise SymgptError(f"conv2d expects (B, {self.c_in}, H, W), got {x}")
        return (x[0], self.c_out, x[2] / self.kernel, x[3] / self.kernel)  # (B, C, S, S) -> (B, d, S/P, S/P)

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
        return f"Conv2d {self.c_in}->{self.c_out}, {self.kernel}×{self.kernel} stride {self.kernel}"


@register
@dataclass(frozen=True)
class FlattenPatches(FreeView):
    """(B, d, n, n) -> (B, n², d): flatten the patch grid and move the channels last (a view)."""

    kind = "flatten_patches"
    title = "Flatten patches"

    def shape(self, inputs):
        (x,) = inputs
        return (x[0], x[2] * x[3], x[1])  # (B, d, n, n) -> (B, n^2, d)


@register
@dataclass(frozen=True)
class ClassToken(Op):
    """Prepend a learned class token: (B, N, dim) -> (B, N + 1, dim); parameter (1, 1, dim).

    The concatenation copies and computes nothing; the token's gradient sums the batch's
    B·dim gradient entries."""

    dim: sympy.Expr
    kind = "class_token"
    title = "Class token"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-2], x[-2] + 1, x[-1])  # (B, N, d) -> (B, N+1, d)

    def params(self, inputs):
        return (ParamSpec("weight", (sympy.Integer(1), sympy.Integer(1), self.dim)),)

    def forward(self, inputs, out):
        return ()

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", numel(out[:-2]) * out[-1], grad="weight"),) if ctx.trainable else ()

    def saved(self, inputs, out, ctx):
        return ()


@register
@dataclass(frozen=True)
class AddPositions(Op):
    """Add a learned (1, num, dim) position table to a sequence (B, num, dim) (ViT): no ids,
    every row used. Its gradient sums over the batch."""

    num: sympy.Expr
    dim: sympy.Expr
    kind = "add_positions"
    title = "Add positions"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-2] - self.num) != 0:
            raise SymgptError(f"a position table of {self.num} rows does not fit a sequence of {x[-2]}")
        return tuple(x)

    def params(self, inputs):
        return (ParamSpec("weight", (sympy.Integer(1), self.num, self.dim)),)

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", numel(out), grad="weight"),) if ctx.trainable else ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"+ positions {self.num}×{self.dim}"


# --- vision--language models: pooling the patch grid and placing image features among the tokens
@register
@dataclass(frozen=True)
class AvgPoolPatches(Op):
    """Average-pool a square grid of patch features in ``kernel`` × ``kernel`` windows (stride
    ``kernel``): (B, n², dim) -> (B, (n/kernel)², dim), as Gemma 3's multi-modal projector does with
    ``nn.AvgPool2d`` between a transpose/reshape to (B, dim, n, n) and a flatten back (views).

    No multiply-adds (``torch.utils.flop_counter`` counts none): one add per input element forward
    and one per input element for the input gradient, elementwise. Saved, when its input needs a
    gradient: the (B, dim, n, n) grid ``nn.AvgPool2d`` reads, a copy of the input in grid layout
    (the transpose and reshape before it copy)."""

    kernel: sympy.Expr
    kind = "avg_pool_patches"
    title = "Average pool (patches)"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) != 3:
            raise SymgptError(f"pooling patches expects (B, N, dim), got {tuple(x)}")
        return (x[0], x[1] / self.kernel ** 2, x[2])  # (B, n², d) -> (B, (n/k)², d)

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
            return (Saved("grid", tuple(inputs[0])),)
        return ()

    def describe(self):
        return f"AvgPool {self.kernel}×{self.kernel}"


@register
@dataclass(frozen=True)
class MergeImageTokens(FreeView):
    """Place image features (B·N_img, t, d) at the image-token positions of the embedded text
    (B, T, d) -> (B, T, d): transformers' ``inputs_embeds.masked_scatter(mask, image_features)``,
    a copy with no arithmetic. T already counts the N_img·t image-token positions.

    Saved: masked_scatter's backward reads the mask for either input's gradient (PyTorch's
    ``derivatives.yaml``), so when a gradient flows it keeps transformers' ``special_image_mask``:
    ``(input_ids == image_token_id).unsqueeze(-1).expand_as(inputs_embeds)``, B·T booleans of
    storage. Without images (N_img = 0) transformers does not merge: nothing is kept."""

    kind = "merge_image_tokens"
    title = "Merge image tokens"
    arity = 2

    def shape(self, inputs):
        x, feats = inputs
        if len(feats) != 3 or sympy.expand(feats[-1] - x[-1]) != 0:
            raise SymgptError(f"image features {tuple(feats)} do not match the token width of {tuple(x)}")
        return tuple(x)

    def saved(self, inputs, out, ctx):
        x, feats = inputs
        if not any(ctx.needs_grad or (True, True)):
            return ()
        present = sympy.Min(1, numel(feats))  # 1 with any image, 0 without (no merge is run)
        return (Saved("image_mask", (*x[:-2], x[-2] * present), dtype="bool"),)

    def describe(self):
        return "Merge image tokens"
