"""Activations beyond GELU and SiLU (which live in ``elementwise``): ReLU (OPT), the squared ReLU
(Primer, Persimmon), the sigmoid (routers and gates), the softplus (attention output gates),
Gemma 2's soft-capping and xIELU (Apertus), whose two one-element parameters are learned."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .base import ParamSpec, Saved, Work, numel, register
from .elementwise import Unary


class _KeepsOutput(Unary):
    """An activation whose PyTorch backward keeps its result (relu, sigmoid, tanh: the gradient
    is a function of the output), stored as the output itself."""

    def saved(self, inputs, out, ctx):
        return (Saved("output", tuple(out), shares="output"),)


@register
@dataclass(frozen=True)
class ReLU(_KeepsOutput):
    kind = "relu"
    title = "ReLU"


@register
@dataclass(frozen=True)
class ReLU2(Unary):
    """The squared ReLU, relu(x)² (So et al. 2021, "Primer"; transformers'
    ``ReLUSquaredActivation``): two PyTorch ops, ``relu`` then ``square``. relu keeps its result
    for its gradient and square keeps its input, which is that same tensor: one tensor of the
    output's shape is saved, neither the input nor the output."""

    kind = "relu2"
    title = "ReLU²"

    def forward(self, inputs, out):
        n = numel(out)
        return (Work("activation", n), Work("elementwise", n))  # relu, square

    def backward(self, inputs, out, ctx):
        n = numel(out)
        return (Work("elementwise", n, grad="input"), Work("activation", n, grad="input"))

    def saved(self, inputs, out, ctx):
        return (Saved("relu_output", tuple(out)),)


@register
@dataclass(frozen=True)
class Sigmoid(_KeepsOutput):
    """σ(x) = 1 / (1 + e^{-x}): DeepSeek-V3's router scores, Qwen2-MoE's shared-expert gate."""

    kind = "sigmoid"
    title = "Sigmoid"


@register
@dataclass(frozen=True)
class Softplus(Unary):
    """softplus(x) = log(1 + e^x) (``torch.nn.functional.softplus``: the output gate of
    transformers' LagunaAttention). Its backward (``softplus_backward``) reads the input, which
    is what it keeps."""

    kind = "softplus"
    title = "Softplus"


@register
@dataclass(frozen=True)
class SoftCap(Unary):
    """Soft-capping c·tanh(x / c) (Gemma 2's attention scores and logits): three PyTorch ops,
    of which only the tanh saves anything (its result, for 1 - tanh²); the division and the
    product by the constant c keep nothing."""

    cap: sympy.Expr = sympy.Integer(50)
    kind = "softcap"
    title = "Soft-cap"

    def forward(self, inputs, out):
        n = numel(out)
        return (Work("elementwise", n), Work("activation", n), Work("elementwise", n))  # /c, tanh, ·c

    def backward(self, inputs, out, ctx):
        n = numel(out)
        return (Work("elementwise", n, grad="input"), Work("activation", n, grad="input"),
                Work("elementwise", n, grad="input"))

    def saved(self, inputs, out, ctx):
        return (Saved("tanh", tuple(out)),)  # tanh(x/c): a tensor of its own (the output is c times it)

    def describe(self):
        return f"Soft-cap {self.cap}·tanh(x/{self.cap})"


@register
@dataclass(frozen=True)
class Tanh(_KeepsOutput):
    """tanh (BERT's pooler); PyTorch keeps its result for the gradient 1 - tanh²."""

    kind = "tanh"
    title = "Tanh"


@register
@dataclass(frozen=True)
class XIELU(Unary):
    """xIELU (Huang & Schlag 2024, "Deriving Activation Functions Using Integration",
    arXiv:2411.13010; transformers' ``XIELUActivation``, Apertus): with two learned one-element
    parameters ``alpha_p``, ``alpha_n`` and the constants β = 0.5, ε = -1e-6,
    x > 0: α_p·x² + β·x, else (expm1(min(x, ε)) - x)·α_n + β·x, where α_p = softplus(alpha_p) and
    α_n = β + softplus(alpha_n).

    Work per element, both branches evaluated as transformers' Python version does: one
    ``expm1`` (activation) and eight elementwise products and sums (α_p·x, ·x, β·x, +; min, - x,
    ·α_n, + β·x, which computes β·x again); the comparison and the select are not arithmetic.
    Backward: the same per element for the input's gradient, and two reductions over the
    elements for the two parameters' gradients. Saved: a fused kernel keeps the input; the
    Python version, run eagerly (``implementation`` hf-eager), keeps the input, α_p·x, expm1(·)
    and expm1(·) - x (each of the output's shape), the mask x > 0 (bool), softplus of each
    parameter and the two constants (one element each)."""

    kind = "xielu"
    title = "xIELU"

    def params(self, inputs):
        one = (sympy.Integer(1),)
        return (ParamSpec("alpha_p", one), ParamSpec("alpha_n", one))

    def forward(self, inputs, out):
        n = numel(out)
        return (Work("activation", n), Work("elementwise", 8 * n))

    def backward(self, inputs, out, ctx):
        n = numel(out)
        work = (Work("activation", n, grad="input"), Work("elementwise", 8 * n, grad="input"))
        if ctx.trainable:
            work += (Work("elementwise", 2 * n, grad="weight"),)
        return work

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        kept = (Saved("input", tuple(x), shares="input0"),)
        if ctx.implementation == "hf-eager":
            one = (sympy.Integer(1),)
            kept += (Saved("alpha_p_x", tuple(out)), Saved("expm1", tuple(out)), Saved("expm1_minus_x", tuple(out)),
                     Saved("positive", tuple(out), "bool"), Saved("softplus_alpha_p", one),
                     Saved("alpha_n_total", one), Saved("beta", ()), Saved("eps", ()))
        return kept
