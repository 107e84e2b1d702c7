"""Free ops: slices, head splits and merges. They move no data arithmetic and own nothing."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, Saved, register


class FreeView(Op):
    """A view: no parameters, no arithmetic, nothing saved (the base of the reshaping ops)."""

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return ()  # a view: no arithmetic

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()


@register
@dataclass(frozen=True)
class Slice(FreeView):
    """Columns [start, start + size) of the last dimension (splitting a fused QKV output).

    ``index`` is the length of the index list an implementation takes the columns with
    (transformers' Falcon: ``fused_qkv[..., [-2], :]``, 1; 0: a plain slice).
    Run eagerly (``implementation`` hf-eager), indexing with a list keeps the list as an int64
    tensor for the backward scatter; the result is a copy, not a view.
    """

    start: sympy.Expr
    size: sympy.Expr
    index: sympy.Expr = 0
    kind = "slice"
    title = "Split"

    def saved(self, inputs, out, ctx):
        if self.index and ctx.implementation == "hf-eager":
            return (Saved("index", (self.index,), "int64"),)
        return ()

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-1], self.size)  # (..., n) -> (..., size)

    def describe(self):
        return f"Split [{self.start}:{self.start + self.size}]"


@register
@dataclass(frozen=True)
class SplitHeads(FreeView):
    """(B, T, heads*d_head) -> (B, heads, T, d_head): view and transpose."""

    heads: sympy.Expr
    d_head: sympy.Expr
    kind = "split_heads"
    title = "Split heads"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.heads * self.d_head) != 0:
            raise SymgptError(f"cannot split {x[-1]} into {self.heads} heads of {self.d_head}")
        return (*x[:-2], self.heads, x[-2], self.d_head)  # (B, T, h*dh) -> (B, h, T, dh)


@register
@dataclass(frozen=True)
class MergeHeads(FreeView):
    """(B, heads, T, d_head) -> (B, T, heads*d_head): transpose and view."""

    kind = "merge_heads"
    title = "Merge heads"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-3], x[-2], x[-3] * x[-1])  # (B, h, T, dh) -> (B, T, h*dh)


@register
@dataclass(frozen=True)
class RepeatKV(FreeView):
    """Grouped-query attention: repeat each key/value head ``groups`` times (a broadcast view)."""

    groups: sympy.Expr
    kind = "repeat_kv"
    title = "Repeat KV heads"

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-3], x[-3] * self.groups, x[-2], x[-1])  # (B, h_kv, T, dh) -> (B, h, T, dh)


@register
@dataclass(frozen=True)
class FirstToken(FreeView):
    """(B, T, d) -> (B, d): the first position (BERT's [CLS], ViT's class token), a view.

    A tensor saved from this view keeps its whole source alive: ``view_of_input`` tells memory
    derivations that its storage is the input's."""

    kind = "first_token"
    title = "First token"
    view_of_input = True

    def shape(self, inputs):
        (x,) = inputs
        return (*x[:-2], x[-1])  # (B, T, d) -> (B, d)
