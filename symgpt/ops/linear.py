"""Linear layers (x @ W + b) and batched matmuls of two activations."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Context, Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class Linear(Op):
    """x (..., n_in) @ W (n_in, n_out) [+ b (n_out,)] -> (..., n_out).

    ``tag`` says what the layer is for (``dense`` or ``lm_head`` or ``router``), so that
    conventions may leave the LM head out. Weights are shown as (n_in, n_out), the
    mathematical x @ W orientation.
    """

    n_in: sympy.Expr
    n_out: sympy.Expr
    bias: bool = True
    tag: str = "dense"
    kind = "linear"
    title = "Linear"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.n_in) != 0:
            raise SymgptError(f"linear layer expects last dimension {self.n_in}, got {x[-1]}")
        return (*x[:-1], self.n_out)  # (..., n_in) -> (..., n_out)

    def params(self, inputs):
        w = ParamSpec("weight", (self.n_in, self.n_out))
        return (w, ParamSpec("bias", (self.n_out,))) if self.bias else (w,)

    def _macs(self, inputs):
        (x,) = inputs
        return numel(x[:-1]) * self.n_in * self.n_out

    def forward(self, inputs, out):
        work = [Work("matmul", self._macs(inputs), tag=self.tag)]
        if self.bias:
            work.append(Work("elementwise", numel(out)))  # the bias add
        return tuple(work)

    def backward(self, inputs, out, ctx: Context):
        work = []
        if ctx.needs_grad and ctx.needs_grad[0]:
            work.append(Work("matmul", self._macs(inputs), tag=self.tag, grad="input"))
        if ctx.trainable:
            work.append(Work("matmul", self._macs(inputs), tag=self.tag, grad="weight"))
            if self.bias:
                work.append(Work("elementwise", numel(out), grad="weight"))  # sum over rows
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        # the weight gradient needs the input (the input gradient needs W, a parameter)
        return (Saved("input", x, shares="input0"),) if ctx.trainable else ()

    def describe(self):
        return f"Linear {self.n_in}->{self.n_out}" + ("" if self.bias else " (no bias)")


@register
@dataclass(frozen=True)
class Matmul(Op):
    """Batched matmul of two activations: a (..., m, n) @ b (..., n, p) -> (..., m, p).

    ``transpose_b`` multiplies by b's transpose (Q @ K^T); ``tag`` is ``attention_scores`` or
    ``attention_values``; ``causal`` marks work a causal kernel could halve. ``group`` > 1
    broadcasts b over groups of a's heads (grouped-query attention: b has heads/group heads).

    ``window`` (sliding-window attention, e.g. the symbol ``W``): each query meets at most
    ``window`` keys, so the key dimension (the columns of Q Kᵀ, the inner dimension of A V)
    is counted as ``Min(keys, window)``. Shapes stay (..., T, T): eager implementations
    materialise the full score matrix and mask it; the work is what a windowed kernel does.
    """

    tag: str
    transpose_b: bool = False
    causal: bool = False
    window: sympy.Expr | None = None
    kind = "matmul"
    title = "MatMul"
    arity = 2

    def _dims(self, inputs):
        a, b = inputs
        bm = (*b[:-2], b[-1], b[-2]) if self.transpose_b else tuple(b)
        if sympy.expand(a[-1] - bm[-2]) != 0:
            raise SymgptError(f"matmul inner dimensions differ: {a[-1]} vs {bm[-2]}")
        return a, bm

    def shape(self, inputs):
        a, bm = self._dims(inputs)
        return (*a[:-1], bm[-1])  # (..., m, n) @ (..., n, p) -> (..., m, p)

    def params(self, inputs):
        return ()

    def _macs(self, a, bm):
        if self.window is None:
            return numel(a) * bm[-1]
        if self.tag == "attention_values":  # A (.., T, keys) @ V (.., keys, dh)
            return numel(a[:-1]) * sympy.Min(a[-1], self.window) * bm[-1]
        return numel(a) * sympy.Min(bm[-1], self.window)  # Q (.., T, dh) @ K^T (.., dh, keys)

    def forward(self, inputs, out):
        a, bm = self._dims(inputs)
        return (Work("matmul", self._macs(a, bm), tag=self.tag, causal=self.causal),)

    def backward(self, inputs, out, ctx: Context):
        a, bm = self._dims(inputs)
        macs = self._macs(a, bm)
        needs = ctx.needs_grad or (True, True)
        work = [Work("matmul", macs, tag=self.tag, causal=self.causal, grad="input") for need in needs if need]
        if ctx.attention == "flash" and self.tag == "attention_scores" and any(needs):
            # a fused kernel keeps no scores: its backward recomputes Q·Kᵀ first
            work.append(Work("matmul", macs, tag=self.tag, causal=self.causal, grad="input"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        a, b = inputs
        needs = ctx.needs_grad or (True, True)
        if ctx.attention == "flash" and self.tag == "attention_values":
            # a fused kernel keeps V and its output O (for rowsum(dO * O)), not the probabilities
            return (Saved("b", b, shares="input1"), Saved("output", tuple(out), shares="output"))
        kept = []
        if needs[1]:
            kept.append(Saved("a", a, shares="input0"))  # grad of b needs a
        if needs[0]:
            kept.append(Saved("b", b, shares="input1"))  # grad of a needs b
        return tuple(kept)

    def describe(self):
        text = "MatMul (A Bᵀ)" if self.transpose_b else "MatMul (A B)"
        return text if self.window is None else f"{text}, window {self.window}"
