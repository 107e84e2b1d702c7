"""LFM2-VL (Liquid AI 2025; transformers' ``Lfm2VlForConditionalGeneration``): a SigLIP2 NaFlex
vision tower (``Siglip2VisionModel``) and a pixel-unshuffle MLP projector, held, beside LFM2's
decoder (``blocks/kinds.py``). Images are not modelled (native-resolution patch sequences with
interpolated positions); the parameters are counted.

The tower: a linear patch embedding (C_img·P_patch² -> d_v, bias), a learned table of num_patches
positions, L_v SigLIP layers (two LayerNorms, Q/K/V/out projections and an fc1/fc2 MLP with
biases), a post LayerNorm and, with vision_use_head, SigLIP's attention-pooling head. The
projector: a LayerNorm of s²·d_v (projector_use_layernorm), ``linear_1`` (s²·d_v -> P_h) and
``linear_2`` (P_h -> d), biases with projector_bias.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, d, d_ff_v, d_v
from ...graph import roles as R
from .kinds import build as kinds_build


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _tower(g, x, flags):
    v, p = "vision_tower", "multi_modal_projector"
    n, s, hidden = (sympy.Integer(flags[k]) for k in ("vision_patches", "pixel_shuffle", "projector_dim"))
    bias = bool(flags["projector_bias"])
    _held(g, f"{v}/embeddings/patch_embedding", ops.Linear(C_img * P_patch ** 2, d_v, bias=True),
          (B, C_img * P_patch ** 2), "patches (linear)")
    _held(g, f"{v}/embeddings/position_embedding", ops.AddPositions(n, d_v), (B, n, d_v), "positions")
    with g.repeat(f"{v}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for name in ("layer_norm1", "layer_norm2"):
            _held(g, name, ops.LayerNorm(d_v), (B, d_v), name)
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _held(g, f"self_attn/{name}", ops.Linear(d_v, d_v, bias=True), (B, d_v), name)
        _held(g, "mlp/fc1", ops.Linear(d_v, d_ff_v, bias=True), (B, d_v), "fc1")
        _held(g, "mlp/fc2", ops.Linear(d_ff_v, d_v, bias=True), (B, d_ff_v), "fc2")
    _held(g, f"{v}/post_layernorm", ops.LayerNorm(d_v), (B, d_v), "post-LN")
    if flags["vision_head"]:
        h = f"{v}/head"
        _held(g, f"{h}/probe", ops.ClassToken(d_v), (B, sympy.Integer(0), d_v), "probe")
        _held(g, f"{h}/attention/in_proj", ops.Linear(d_v, 3 * d_v, bias=True), (B, d_v), "in_proj")
        _held(g, f"{h}/attention/out_proj", ops.Linear(d_v, d_v, bias=True), (B, d_v), "out_proj")
        _held(g, f"{h}/layernorm", ops.LayerNorm(d_v), (B, d_v), "LayerNorm")
        _held(g, f"{h}/mlp/fc1", ops.Linear(d_v, d_ff_v, bias=True), (B, d_v), "fc1")
        _held(g, f"{h}/mlp/fc2", ops.Linear(d_ff_v, d_v, bias=True), (B, d_ff_v), "fc2")
    if flags["projector_norm"]:
        _held(g, f"{p}/layer_norm", ops.LayerNorm(s * s * d_v), (B, s * s * d_v), "LayerNorm")
    _held(g, f"{p}/linear_1", ops.Linear(s * s * d_v, hidden, bias=bias), (B, s * s * d_v), "linear 1")
    _held(g, f"{p}/linear_2", ops.Linear(hidden, d, bias=bias), (B, hidden), "linear 2")
    g.require("le", N_img, "images are not modelled for LFM2-VL (native-resolution patch sequences): N_img must be 0",
              id="images_not_modelled")
    return x


def build(flags, bound, name="lfm2_vl", labels=None):
    return kinds_build(flags, bound, name=name, vision=partial(_tower, flags=flags))
