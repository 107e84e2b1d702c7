"""Differential attention (Ye et al. 2024, "Differential Transformer", arXiv:2410.05258), as
transformers' ``DiffLlamaAttention`` computes it: two ordinary attention maps over the same
queries and keys, each reading one half of the value heads; their outputs side by side,
(B, T, h, 2·d_head), are cut into two halves of h/2 heads along the heads, and the second half is
taken λ times from the first, λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init, with the four learned
vectors λ_q1, λ_k1, λ_q2, λ_k2 of d_head each (:class:`DiffCombine`). :class:`HeadSlice` takes a
run of heads (one half of V's), a view.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register
from .views import FreeView

_LAMBDAS = ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")


@register
@dataclass(frozen=True)
class HeadSlice(FreeView):
    """Heads [start, start + count) of (B, heads, T, d_head): a view (``torch.chunk`` along heads)."""

    start: sympy.Expr
    count: sympy.Expr
    kind = "head_slice"
    title = "Slice heads"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) < 3:
            raise SymgptError(f"a head slice expects (..., heads, T, d_head), got {tuple(x)}")
        return (*x[:-3], self.count, x[-2], x[-1])  # (B, n, T, dh) -> (B, count, T, dh)

    def describe(self):
        return f"Heads [{self.start}:{self.start + self.count}]"


@register
@dataclass(frozen=True)
class DiffCombine(Op):
    """Z1, Z2 (B, h, T, d_head), the outputs of the two attention calls -> (B, h/2, T, 2·d_head):
    ``[Z1, Z2]`` side by side, its first h/2 heads minus λ times its last h/2 heads; owns the four
    λ vectors (d_head each).

    Forward: the two dot products λ_q·λ_k (2·d_head products and as many sums, 4·d_head elements)
    and, per output element, λ times the second half and the difference (2 elements). Backward:
    the second half's gradient, −λ·g (one per element); the λ vectors' gradients need
    Σ g·second half (2 per element: product and sum) and the dot products' gradients (4·d_head).
    Saved: the second half (for λ's gradient) and the vectors (for their own gradients, each
    the other's factor)."""

    d_head: sympy.Expr
    kind = "diff_combine"
    title = "Differential combination"
    arity = 2

    def shape(self, inputs):
        a, b = inputs
        if len(a) != 4 or tuple(a) != tuple(b) or sympy.expand(a[-1] - self.d_head) != 0:
            raise SymgptError(f"differential attention expects two outputs (B, h, T, {self.d_head}), "
                              f"got {tuple(a)} and {tuple(b)}")
        return (a[0], a[1] / 2, a[2], 2 * a[3])  # (B, h, T, dh) x 2 -> (B, h/2, T, 2dh)

    def params(self, inputs):
        return tuple(ParamSpec(n, (self.d_head,)) for n in _LAMBDAS)

    def forward(self, inputs, out):
        return (Work("elementwise", 4 * self.d_head), Work("elementwise", 2 * numel(out)))

    def backward(self, inputs, out, ctx):
        needs = ctx.needs_grad or (True, True)
        work = []
        if any(needs):
            work.append(Work("elementwise", numel(out), grad="input"))
        if ctx.trainable:
            work += [Work("elementwise", 2 * numel(out), grad="weight"),
                     Work("elementwise", 4 * self.d_head, grad="weight")]
        return tuple(work)

    def saved(self, inputs, out, ctx):
        kept = []
        if ctx.trainable:
            kept.append(Saved("second_half", tuple(out)))
            kept += [Saved(n, (self.d_head,)) for n in _LAMBDAS]
        return tuple(kept)

    def describe(self):
        return f"Z1 − λ·Z2 (λ from 4 vectors of {self.d_head})"
