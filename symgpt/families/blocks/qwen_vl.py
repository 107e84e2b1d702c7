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
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .decoder import build as decoder_build
from .ffn import FFNSpec, ffn


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _tower(g, x, flags):
    if flags.get("vision_run"):
        return _run(g, x, flags)
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


def tokens_per_image(flags):
    """Qwen2.5-VL's image tokens: (S_img/P_patch)² patches merged m × m."""
    return (S_img / P_patch) ** 2 / sympy.Integer(flags["merge_size"]) ** 2


def _block(g, x):
    a = g.op("norm1", ops.RMSNorm(d_v), x, role=R.ATTENTION_NORM, label="RMSNorm 1")
    o = attention(g, a, AttentionSpec(d_v, h_v, dh=d_v / h_v, module="attn", causal=False,
                                      projections=Projections(fused=True, bias=True, out_bias=True)))
    x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn")
    f = g.op("norm2", ops.RMSNorm(d_v), x, role=R.FFN_NORM, label="RMSNorm 2")
    f = ffn(g, f, FFNSpec(d_v, d_ff_v, ops.SiLU(), bias=True, gated=True,
                          names={"gate": "mlp/gate_proj", "up": "mlp/up_proj", "act": "mlp/act_fn",
                                 "down": "mlp/down_proj"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + mlp")


def _run(g, x, flags):
    """Qwen2.5-VL's tower over N_img square images of S_img × S_img pixels per sequence (module
    docstring): windowed blocks, then the full-attention blocks, then the 2×2 merger."""
    tp, m = sympy.Integer(flags["temporal_patch"]), sympy.Integer(flags["merge_size"])
    win, full = sympy.Integer(flags["window_size"]), sympy.Integer(flags["full_layers_v"] or 0)
    side = S_img / P_patch                     # patches a side
    n, n_win = side ** 2, (win / P_patch) ** 2  # patches per image, per window
    imgs = B * N_img
    g.require("integer", S_img / (P_patch * m), "the image side S_img must be a multiple of P_patch·merge_size "
              "(the processor resizes to one)", id="patches_divide_image")
    g.require("integer", S_img / win, f"the image side S_img must be a multiple of the attention window "
              f"({win} pixels: window_size) for every window to be full", id="windows_divide_image")
    g.require("integer", win / (P_patch * m), "window_size must be a multiple of P_patch·merge_size",
              id="patches_divide_window")
    g.require("le", (sympy.Integer(flags["vision_out_dim"]) - d) ** 2, "the merger's output width "
              "(out_hidden_size) must be the decoder's width d", id="merger_width_is_d")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens "
              "((S_img/P_patch)²/merge_size² positions each)", id="image_tokens_within_sequence")
    px = g.input("pixel_values", (imgs * n, C_img * tp * P_patch ** 2), dtype="act", label="patches",
                 role=R.PIXELS)                                                   # (B·N·n, C·t_p·P²)
    v = g.op("visual/patch_embed/proj", ops.Linear(C_img * tp * P_patch ** 2, d_v, bias=False), px,
             role=R.PATCH_EMBEDDING, label="patches (Conv3d t_p×P×P)")            # (B·N·n, d_v)
    v = g.op("visual/windows", ops.Regroup(imgs * n / n_win, d_v), v, role=R.PATCH_FLATTEN,
             label="windows of patches")                                          # (B·N·n/n_w, n_w, d_v)
    with g.repeat("visual/blocks", L_v - full, label="vision block (window)", carry=v, role=R.STACK,
                  length=n_win):
        v = _block(g, v)
    v = g.op("visual/images", ops.Regroup(imgs, d_v), v, role=R.PATCH_FLATTEN, label="whole images")
    with g.repeat("visual/full_blocks", full, label="vision block (full)", carry=v, role=R.STACK, length=n):
        v = _block(g, v)                                                       # (B·N, n, d_v)
    v = g.op("visual/merger/ln_q", ops.RMSNorm(d_v), v, role=R.VISION_NORM, label="merger RMSNorm")
    v = g.op("visual/merger/group", ops.Regroup(imgs, m * m * d_v), v, role=R.VISION_SELECT,
             label="m×m patches")                                                 # (B·N, n/m², m²·d_v)
    v = g.op("visual/merger/mlp/0", ops.Linear(m * m * d_v, m * m * d_v), v, role=R.VISION_PROJECTOR,
             label="merger linear 1")
    v = g.op("visual/merger/mlp/1", ops.GELU(approximate="none"), v, role=R.VISION_ACT, label="GELU")
    v = g.op("visual/merger/mlp/2", ops.Linear(m * m * d_v, d), v, role=R.VISION_PROJECTOR,
             label="merger linear 2")                                             # (B·N, t, d)
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, v, role=R.IMAGE_MERGE,
                label="merge image features")                                     # (B, T, d)


def build(flags, bound, name="qwen2_5_vl", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))
