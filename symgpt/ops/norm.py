"""Normalisation layers: LayerNorm and RMSNorm."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class LayerNorm(Op):
    """LayerNorm over the last dimension: scale (and shift when ``bias``) of size ``dim``;
    ``affine=False``: no parameters at all (OLMo's ``OlmoLayerNorm``, ``F.layer_norm`` without
    weight or bias)."""

    dim: sympy.Expr
    bias: bool = True
    affine: bool = field(default=True, repr=False)  # (shown by ``describe``; the repr is LayerNorm's as before)
    kind = "layernorm"
    title = "LayerNorm"

    def shape(self, inputs):
        (x,) = inputs
        return tuple(x)  # (..., d) -> (..., d)

    def params(self, inputs):
        if not self.affine:
            return ()
        g = ParamSpec("weight", (self.dim,))
        return (g, ParamSpec("bias", (self.dim,))) if self.bias else (g,)

    def forward(self, inputs, out):
        return (Work("norm", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("norm", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        stats = (*x[:-1], sympy.Integer(1))
        return (
            Saved("input", x, shares="input0"),
            Saved("mean", stats, "fp32"),
            Saved("rstd", stats, "fp32"),
        )

    def describe(self):
        if not self.affine:
            return f"LayerNorm {self.dim} (no parameters)"
        return f"LayerNorm {self.dim}" + ("" if self.bias else " (no bias)")


@register
@dataclass(frozen=True)
class RMSNorm(Op):
    """RMSNorm over the last dimension: a scale of size ``dim``, no shift.

    ``offset`` is Gemma's (1 + w) parametrisation (same parameter count).
    """

    dim: sympy.Expr
    offset: bool = False
    affine: bool = field(default=True, repr=False)  # false: no scale at all (NanoChat's norms)
    #: statistics per group of dim/groups channels (Mamba-2's MambaRMSNormGated): one rstd each
    groups: sympy.Expr = field(default=sympy.Integer(1), repr=False)
    kind = "rmsnorm"
    title = "RMSNorm"

    def shape(self, inputs):
        (x,) = inputs
        return tuple(x)  # (..., d) -> (..., d)

    def params(self, inputs):
        return (ParamSpec("weight", (self.dim,)),) if self.affine else ()

    def forward(self, inputs, out):
        return (Work("norm", numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work("norm", numel(out), grad="input"),)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        stats = (*x[:-1], sympy.Integer(self.groups) if isinstance(self.groups, int) else self.groups)
        if not self.affine:  # no scale: nothing multiplies x·rstd afterwards
            return (Saved("input", x, shares="input0"), Saved("rstd", stats, "fp32"))
        # a fused kernel keeps x and rstd; an unfused one (PyTorch on CPU, HF's LlamaRMSNorm)
        # also keeps x·rstd for the scale's gradient: the convention decides (rms_normed_saved)
        kept = (Saved("input", x, shares="input0"), Saved("rstd", stats, "fp32"))
        if ctx.trainable:  # a frozen scale (fine-tuning) needs no x·rstd for a gradient
            kept += (Saved("normed", x),)
        if self.offset and ctx.implementation == "hf-eager":
            # Gemma's norms compute 1 + w afresh in fp32 and the product keeps it
            kept += (Saved("one_plus_weight", (self.dim,), "fp32"),)
        return kept

    def describe(self):
        grouped = "" if self.groups == 1 else f", {self.groups} groups"
        return f"RMSNorm {self.dim}" + grouped + ("" if self.affine else " (no parameters)")
