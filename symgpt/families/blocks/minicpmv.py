"""MiniCPM-V 4.6 / 4.7 and MiniCPM-OCR (OpenBMB; transformers' ``MiniCPMV4_6ForConditionalGeneration``,
``MiniCPMV4_7ForConditionalGeneration``, ``MiniCPMOcrForConditionalGeneration``): a Qwen3.5 text decoder
(``blocks/decoder.py`` with the qwen3_5 flags) with a SigLIP-style vision tower and two mergers beside it.

Counted: every parameter, and the forward over token ids (no image): the tower and mergers do not
run, their parameters are declared held (``ops.Held``). The tower (``MiniCPMV4_6VisionModel``): a
P×P patch convolution with bias, a table of (S_img/P_patch)² positions, L_v SigLIP layers, a
post-LayerNorm and the window-attention merger (``MiniCPMV4_6ViTWindowAttentionMerger``: attention
with biases, a LayerNorm, then over w = k_h·k_w patches a LayerNorm of w·d_v, Linear(w·d_v,
w·d_ff_v) and Linear(w·d_ff_v, d_v) with biases); the merger (``MiniCPMV4_6Merger``): m - 1 blocks
of LayerNorm(4·d_v), Linear(4·d_v, 4·d_v), Linear(4·d_v, d_v) and a last one ending in
Linear(4·d_v, d), all with biases.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, d, d_ff_v, d_v
from ...graph import roles as R
from .decoder import build as decoder_build


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _attention(g, p):
    for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
        _held(g, f"{p}/{n}", ops.Linear(d_v, d_v), (B, d_v), f"attention {n}")


def _tower(g, x, flags):
    w, m = sympy.Integer(flags["merge_window"]), flags["merger_times"]
    v = "vision_tower"
    _held(g, f"{v}/embeddings/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=True),
          (B, C_img, S_img, S_img), "patches (conv P×P, stride P)")
    _held(g, f"{v}/embeddings/position_embedding", ops.Embedding((S_img / P_patch) ** 2, d_v), (B,), "position table")
    with g.repeat(f"{v}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), (B, d_v), n)
        _attention(g, "self_attn")
        _held(g, "mlp/fc1", ops.Linear(d_v, d_ff_v), (B, d_v), "mlp fc1")
        _held(g, "mlp/fc2", ops.Linear(d_ff_v, d_v), (B, d_ff_v), "mlp fc2")
    _held(g, f"{v}/post_layernorm", ops.LayerNorm(d_v), (B, d_v), "post-LN")
    wm = f"{v}/vit_merger"
    _attention(g, f"{wm}/self_attn")
    _held(g, f"{wm}/layer_norm1", ops.LayerNorm(d_v), (B, d_v), "window merger LayerNorm")
    _held(g, f"{wm}/pre_norm", ops.LayerNorm(w * d_v), (B, w * d_v), "window merger pre-norm")
    _held(g, f"{wm}/linear_1", ops.Linear(w * d_v, w * d_ff_v), (B, w * d_v), "window merger linear 1")
    _held(g, f"{wm}/linear_2", ops.Linear(w * d_ff_v, d_v), (B, w * d_ff_v), "window merger linear 2")
    for i in range(m):
        p, out = f"merger/mlp/{i}", (d if i == m - 1 else d_v)
        _held(g, f"{p}/pre_norm", ops.LayerNorm(4 * d_v), (B, 4 * d_v), "merger pre-norm")
        _held(g, f"{p}/linear_1", ops.Linear(4 * d_v, 4 * d_v), (B, 4 * d_v), "merger linear 1")
        _held(g, f"{p}/linear_2", ops.Linear(4 * d_v, out), (B, 4 * d_v), "merger linear 2")
    g.require("le", N_img, "the cost of an image is not modelled for MiniCPM-V (variable-resolution slices "
              "through two mergers): N_img must be 0 (the forward over token ids)", id="images_not_modelled")
    return x


def build(flags, bound, name="minicpmv", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))
