"""Elementwise ops: activations, products, sums and scalings."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Pointwise, Saved, Work, numel, register


def broadcast(a, b):
    """The broadcast shape of two shapes (right-aligned, as in PyTorch)."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a = (sympy.Integer(1),) * (n - len(a)) + a
    b = (sympy.Integer(1),) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1 or sympy.expand(x - y) == 0:
            out.append(x)
        else:
            raise SymgptError(f"shapes do not broadcast: {a} and {b}")
    return tuple(out)


class Unary(Pointwise):
    """An activation applied elementwise; saves its input."""

    work = "activation"

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        return (Saved("input", tuple(x), shares="input0"),)


@register
@dataclass(frozen=True)
class GELU(Unary):
    """GELU; ``composite``: written as PyTorch ops, as transformers' ``gelu_new`` (GPT-2, Phi-2)
    does: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). A fused kernel keeps x; the composite,
    run eagerly (``implementation`` hf-eager), keeps what each of its ops saves: x (for x³),
    tanh(·) (for its own gradient), 0.5·x and 1 + tanh(·) (the two factors of the product)."""

    approximate: str = "tanh"
    composite: bool = False
    kind = "gelu"
    title = "GELU"

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        kept = (Saved("input", tuple(x), shares="input0"),)
        if self.composite and ctx.implementation == "hf-eager":
            kept += (Saved("tanh", tuple(x)), Saved("half_x", tuple(x)), Saved("one_plus_tanh", tuple(x)))
        return kept


@register
@dataclass(frozen=True)
class SiLU(Unary):
    kind = "silu"
    title = "SiLU"


@register
@dataclass(frozen=True)
class Add(Op):
    """Elementwise sum with broadcasting (residual connections, embeddings)."""

    kind = "add"
    title = "Add"
    arity = 2

    def shape(self, inputs):
        return broadcast(*inputs)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return ()  # the gradient passes through unchanged (a broadcast input is summed; not counted)

    def saved(self, inputs, out, ctx):
        return ()


@register
@dataclass(frozen=True)
class Mul(Op):
    """Elementwise product of two activations (the gate of a gated FFN)."""

    kind = "mul"
    title = "Multiply"
    arity = 2

    def shape(self, inputs):
        return broadcast(*inputs)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        needs = ctx.needs_grad or (True, True)
        return tuple(Work("elementwise", numel(out), grad="input") for n in needs if n)

    def saved(self, inputs, out, ctx):
        a, b = inputs
        needs = ctx.needs_grad or (True, True)
        kept = []
        if needs[0]:
            kept.append(Saved("b", tuple(b), shares="input1"))
        if needs[1]:
            kept.append(Saved("a", tuple(a), shares="input0"))
        return tuple(kept)


@register
@dataclass(frozen=True)
class Scale(Pointwise):
    """Multiply by a constant (attention's 1/sqrt(d_head), Gemma's sqrt(d) embedding scale)."""

    factor: sympy.Expr
    #: the factor is a 0-dim tensor (Gemma's embedding normalizer), which the product keeps
    tensor: bool = False
    kind = "scale"
    title = "Scale"

    def saved(self, inputs, out, ctx):
        if self.tensor and ctx.implementation == "hf-eager":
            return (Saved("factor", ()),)  # x * tensor(c) keeps c (for x's gradient)
        return ()  # a constant factor needs nothing saved

    def describe(self):
        return f"Scale × {self.factor}"


@register
@dataclass(frozen=True)
class HeadBias(Op):
    """A learned bias per head added to a per-head tensor (B, h, T, n), broadcast over its last
    two dimensions (transformers' BeamAttention ``gate_bias``: one logit per head added to the
    output gate); owns ``bias`` (h,). Its gradient passes through; the bias's is a sum per head;
    it keeps nothing."""

    heads: sympy.Expr
    kind = "head_bias"
    title = "Bias per head"

    def shape(self, inputs):
        (x,) = inputs
        if len(x) < 3 or sympy.expand(x[-3] - self.heads) != 0:
            raise SymgptError(f"a bias per head expects (..., {self.heads}, T, n), got {tuple(x)}")
        return tuple(x)  # (B, h, T, n) -> (B, h, T, n)

    def params(self, inputs):
        return (ParamSpec("bias", (self.heads,)),)

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", numel(out), grad="weight"),) if ctx.trainable else ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"Bias per head ({self.heads})"
