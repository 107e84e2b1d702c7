"""LFM3-VL (Liquid AI; transformers' ``Lfm3VlForConditionalGeneration``): the LFM3-VL vision
tower (``Lfm3VlVisionModel``) and an MLP projector, held, beside LFM3's decoder
(``blocks/kinds.py``). Images are not modelled (native-resolution patch grids); the parameters
are counted.

The tower: a linear patch embedding (C_img·t_p·P_patch² -> d_v, no bias), an RMSNorm
``embedding_norm``, then L_v layers, each with two RMSNorms (operator_norm, ffn_norm) and a SwiGLU
MLP (w1, w3: d_v -> d_ff_v; w2 back; no biases), and either a gated short convolution
(``Lfm3VlVisionShortConv``: in_proj d_v -> 3·d_v, a depthwise k × k Conv2d, out_proj; no biases)
or grouped-query attention (q_proj d_v -> d_v, k_proj and v_proj d_v -> h_kv,v·d_v/h_v, out_proj,
per-head RMSNorms q_norm and k_norm; no biases). The projector: a LayerNorm of d_v, ``linear_1``
(m²·d_v -> P_h) and ``linear_2`` (P_h -> d), biases with projector_bias.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, L_v, N_img, P_patch, d, d_ff_v, d_v, h_v
from ...graph import roles as R
from .kinds import build as kinds_build


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias=False):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, path.rsplit("/", 1)[-1])


def _common(g):
    for name in ("operator_norm", "ffn_norm"):
        _held(g, name, ops.RMSNorm(d_v), d_v, name)
    for name in ("w1", "w3"):
        _linear(g, f"feed_forward/{name}", d_v, d_ff_v)
    _linear(g, "feed_forward/w2", d_ff_v, d_v)


def _tower(g, x, flags):
    v, p = "vision_tower", "multi_modal_projector"
    conv, k, kv, tp, m, hidden = (sympy.Integer(flags[key]) for key in (
        "vision_conv_layers", "vision_conv_kernel", "vision_kv_heads", "vision_temporal_patch", "pixel_shuffle",
        "projector_dim"))
    head = d_v / h_v
    g.require("integer", head, "d_v must be divisible by h_v", id="vision_heads_divide_width")
    g.require("le", conv - L_v, "the vision conv layers (vision_conv_layers) must not exceed L_v",
              id="vision_conv_within_layers")
    _linear(g, f"{v}/patch_embed", C_img * tp * P_patch ** 2, d_v)
    _held(g, f"{v}/embedding_norm", ops.RMSNorm(d_v), d_v, "embedding_norm")
    if conv:
        with g.repeat(f"{v}/conv_layers", conv, label="vision conv layer (held)", role=R.STACK,
                      length=sympy.Integer(1)):
            _linear(g, "conv/in_proj", d_v, 3 * d_v)
            _held(g, "conv/spatial_conv", ops.Linear(k * k, d_v, bias=False), k * k, "depthwise Conv2d k×k")
            _linear(g, "conv/out_proj", d_v, d_v)
            _common(g)
    with g.repeat(f"{v}/attention_layers", L_v - conv, label="vision attention layer (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        _linear(g, "self_attn/q_proj", d_v, d_v)
        for name in ("k_proj", "v_proj"):
            _linear(g, f"self_attn/{name}", d_v, kv * head)
        _linear(g, "self_attn/out_proj", d_v, d_v)
        for name in ("q_norm", "k_norm"):
            _held(g, f"self_attn/{name}", ops.RMSNorm(head), head, name)
        _common(g)
    bias = bool(flags["projector_bias"])
    _held(g, f"{p}/layer_norm", ops.LayerNorm(d_v), d_v, "LayerNorm")
    _linear(g, f"{p}/linear_1", m * m * d_v, hidden, bias)
    _linear(g, f"{p}/linear_2", hidden, d, bias)
    g.require("le", N_img, "images are not modelled for LFM3-VL (native-resolution patch grids): N_img must be 0",
              id="images_not_modelled")
    return x


def build(flags, bound, name="lfm3_vl", labels=None):
    for key in ("vision_conv_kernel", "vision_kv_heads", "vision_temporal_patch", "pixel_shuffle", "projector_dim"):
        if not isinstance(flags[key], int) or isinstance(flags[key], bool) or flags[key] < 1:
            raise SymgptError(f"flag {key} must be a positive integer, got {flags[key]!r}")
    if not isinstance(flags["vision_conv_layers"], int) or flags["vision_conv_layers"] < 0:
        raise SymgptError(f"flag vision_conv_layers must be a whole number, got {flags['vision_conv_layers']!r}")
    return kinds_build(flags, bound, name=name, vision=partial(_tower, flags=flags))
