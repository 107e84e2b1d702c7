"""Qwen2.5-VL (Qwen Team 2025; transformers' ``Qwen2_5_VLForConditionalGeneration``): a Qwen2
decoder (multimodal rotary: the same matmuls over token ids) with a vision tower beside it
(``Qwen2_5_VisionTransformerPretrainedModel``).

Counted: every parameter, and the forward over token ids (no image or video): the vision tower
does not run, its parameters are declared held (``ops.Held``). The tower's parameters: a
Conv3d patch embedding without bias (C_img·t_p·P_patch²·d_v, t_p the temporal patch size), L_v
blocks (two RMSNorms of d_v, a fused QKV projection and an output projection with biases, a gated
SiLU MLP of width d_ff_v with biases) and the patch merger (an RMSNorm of d_v, then
Linear(m²·d_v, m²·d_v) and Linear(m²·d_v, d_out) with biases, m the spatial merge size).

Qwen2-VL's tower (``Qwen2VisionTransformerPretrainedModel``, flag qwen2_vision) differs in its
norms, LayerNorms with biases (norm1, norm2, the merger's ln_q), and its MLP, fc1 and fc2 with
biases (no gate), d_ff_v = int(embed_dim·mlp_ratio).
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, d_ff_v, d_v
from ...graph import roles as R
from .decoder import build as decoder_build


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _tower(g, x, flags):
    tp, m = sympy.Integer(flags["temporal_patch"]), sympy.Integer(flags["merge_size"])
    out = sympy.Integer(flags["vision_out_dim"])
    v = "visual"
    v1 = bool(flags.get("qwen2_vision"))  # Qwen2-VL's tower
    norm = ops.LayerNorm if v1 else ops.RMSNorm
    # the Conv3d's weight: C_img·t_p·P² inputs per output channel, as a linear map of a flattened patch
    _held(g, f"{v}/patch_embed/proj", ops.Linear(C_img * tp * P_patch ** 2, d_v, bias=False),
          (B, C_img * tp * P_patch ** 2), "patches (Conv3d t_p×P×P, no bias)")
    with g.repeat(f"{v}/blocks", L_v, label="vision block (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("norm1", "norm2"):
            _held(g, n, norm(d_v), (B, d_v), n)
        _held(g, "attn/qkv", ops.Linear(d_v, 3 * d_v), (B, d_v), "attention qkv")
        _held(g, "attn/proj", ops.Linear(d_v, d_v), (B, d_v), "attention proj")
        if v1:
            _held(g, "mlp/fc1", ops.Linear(d_v, d_ff_v), (B, d_v), "mlp fc1")
            _held(g, "mlp/fc2", ops.Linear(d_ff_v, d_v), (B, d_ff_v), "mlp fc2")
        else:
            for n in ("gate_proj", "up_proj"):
                _held(g, f"mlp/{n}", ops.Linear(d_v, d_ff_v), (B, d_v), f"mlp {n}")
            _held(g, "mlp/down_proj", ops.Linear(d_ff_v, d_v), (B, d_ff_v), "mlp down_proj")
    _held(g, f"{v}/merger/ln_q", norm(d_v), (B, d_v), "merger LayerNorm" if v1 else "merger RMSNorm")
    _held(g, f"{v}/merger/mlp/0", ops.Linear(m * m * d_v, m * m * d_v), (B, m * m * d_v), "merger linear 1")
    _held(g, f"{v}/merger/mlp/2", ops.Linear(m * m * d_v, out), (B, m * m * d_v), "merger linear 2")
    g.require("le", N_img, f"the cost of an image is not modelled yet for {'Qwen2-VL' if v1 else 'Qwen2.5-VL'}: N_img must be 0 (the forward "
              "over token ids)", id="images_not_modelled")
    return x


def build(flags, bound, name="qwen2_5_vl", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))
