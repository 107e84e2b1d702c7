"""Llama 4 (Meta 2025; transformers' ``Llama4ForConditionalGeneration``): Llama 4's text decoder
(``blocks/decoder.py`` with the llama4_text flags) and, beside it, the vision encoder
(``Llama4VisionModel``) and the projector (``Llama4MultiModalProjector``).

Per image (one tile of S_img × S_img pixels: transformers' ``pixel_values`` of shape
(images·tiles, C_img, S_img, S_img); the processor cuts an image into tiles of that side and
adds a global tile, each tile being one image here):

- patches: an unfold of P_patch × P_patch blocks and a linear map without bias (counted as the
  equivalent convolution: the same weight and the same multiply-adds), n = (S_img/P_patch)²;
- a class token appended and a learned table of n + 1 positions added, a LayerNorm;
- L_v layers: LayerNorm, bidirectional attention of h_v heads with biases whose queries and keys
  are rotated by a 2-D rotary table (the patch's column and row; elementwise, no parameters), a
  LayerNorm and a GELU MLP of width d_ff_v with biases;
- a LayerNorm, the class token dropped, a pixel shuffle of ratio 1/s (each s × s block of patches
  one position of s²·d_v), the adapter MLP (``Llama4VisionMLP2``: Linear(s²·d_v, p_in), GELU,
  Linear(p_out, p_out), GELU, no biases) and the projector Linear(vision_output_dim, d) without bias.

Tokens per image the decoder sees: t = (S_img/P_patch)² / s² (Llama 4 Scout: 336/14 = 24 patches a
side, s = 2: 144 tokens). The decoder's T counts the N_img·t image positions.

A config whose widths do not chain (s²·d_v = intermediate_size, p_in = p_out = vision_output_dim,
as every published Llama 4 has them) cannot run an image: the adapter and projector are then held
(``ops.Held``) and N_img must be 0.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .vlm import with_encoder

#: the node paths under which the vision encoder and projector live
PREFIXES = ("vision_model/", "multi_modal_projector/", "merge_image_tokens")

#: patches per tile
PATCHES = (S_img / P_patch) ** 2


def tokens_per_image(flags):
    """The image tokens the decoder sees per tile: (S_img/P_patch)² / s²."""
    return PATCHES / sympy.Integer(flags["shuffle"]) ** 2


def _layer(g, x, table):
    a = g.op("input_layernorm", ops.LayerNorm(d_v), x, role=R.ATTENTION_NORM, label="LayerNorm")
    o = attention(g, a, AttentionSpec(
        d_v, h_v, dh=d_v / h_v, module="self_attn", causal=False, rotary_interleave=True,
        names={"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj", "o": "self_attn/o_proj"},
        projections=Projections(bias=True, out_bias=True)), rotary=table)
    x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    f = g.op("post_attention_layernorm", ops.LayerNorm(d_v), x, role=R.FFN_NORM, label="LayerNorm")
    f = ffn(g, f, FFNSpec(d_v, d_ff_v, activation("gelu"), bias=True,
                          names={"up": "mlp/fc1", "act": "mlp/activation_fn", "down": "mlp/fc2"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def vision_encoder(g):
    """``Llama4VisionModel`` up to its last LayerNorm, over B·N_img tiles: (B·N_img, n + 1, d_v)."""
    n = PATCHES
    v = "vision_model"
    px = g.input("pixel_values", (B * N_img, C_img, S_img, S_img), dtype="act", label="pixels", role=R.PIXELS)
    x = g.op(f"{v}/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=False), px, role=R.PATCH_EMBEDDING,
             label="patches (unfold P×P, linear)")                                          # (B·N, d_v, S/P, S/P)
    x = g.op(f"{v}/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN, label="patch sequence")  # (B·N, n, d_v)
    x = g.op(f"{v}/class_embedding", ops.ClassToken(d_v), x, role=R.CLASS_TOKEN, label="patches + [CLS]")
    x = g.op(f"{v}/positional_embedding_vlm", ops.AddPositions(n + 1, d_v), x, role=R.POSITION_EMBEDDING,
             label="+ positions")                                                          # (B·N, n+1, d_v)
    x = g.op(f"{v}/layernorm_pre", ops.LayerNorm(d_v), x, role=R.EMBEDDING_NORM, label="pre-LN")
    pos = g.op(f"{v}/rotary_positions", ops.PatchPositions(), x, role=R.ROTARY_TABLE, label="patch positions")
    table = g.op(f"{v}/rotary_embedding", ops.RotaryTable(d_v / h_v), pos, role=R.ROTARY_TABLE,
                 label="2-D cos, sin")                                                      # (2, n+1, d_v/h_v)
    with g.repeat(f"{v}/model/layers", L_v, label="vision layer", carry=x, role=R.STACK, length=n + 1):
        x = _layer(g, x, table)
    return g.op(f"{v}/layernorm_post", ops.LayerNorm(d_v), x, role=R.VISION_NORM, label="post-LN")


def _held(g, path, op, shape):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{path.split('/')[-1]} (not run)")


def _vision(g, x, flags):
    s = sympy.Integer(flags["shuffle"])
    p_in, p_out = sympy.Integer(flags["adapter_in"]), sympy.Integer(flags["adapter_out"])
    out = sympy.Integer(flags["vision_output_dim"])
    y = vision_encoder(g)
    a = "vision_model/vision_adapter/mlp"
    g.require("integer", S_img / (P_patch * s), "the patch grid's side S_img/P_patch must be a multiple of the "
              "pixel shuffle's side", id="patches_divide_image")
    if not flags["vision_runs"]:
        _held(g, f"{a}/fc1", ops.Linear(d_ff_v, p_in, bias=False), (B, d_ff_v))
        _held(g, f"{a}/fc2", ops.Linear(p_out, p_out, bias=False), (B, p_out))
        _held(g, "multi_modal_projector/linear_1", ops.Linear(out, d, bias=False), (B, out))
        g.require("le", N_img, "this Llama 4 config cannot read an image (its vision adapter's widths do not "
                  "chain): N_img must be 0", id="images_not_modelled")
        return x
    y = g.op("vision_model/select", ops.DropTokens(1), y, role=R.VISION_SELECT,
             label="patches ([CLS] dropped)")                                               # (B·N, n, d_v)
    y = g.op("vision_model/vision_adapter/pixel_shuffle", ops.PixelShuffle(s), y, role=R.VISION_SELECT,
             label="pixel shuffle")                                                         # (B·N, t, s²·d_v)
    y = g.op(f"{a}/fc1", ops.Linear(s * s * d_v, p_in, bias=False), y, role=R.VISION_PROJECTOR, label="adapter fc1")
    y = g.op(f"{a}/act1", activation("gelu"), y, role=R.VISION_ACT, label="GELU")
    y = g.op(f"{a}/fc2", ops.Linear(p_out, p_out, bias=False), y, role=R.VISION_PROJECTOR, label="adapter fc2")
    y = g.op(f"{a}/act2", activation("gelu"), y, role=R.VISION_ACT, label="GELU")
    y = g.op("multi_modal_projector/linear_1", ops.Linear(out, d, bias=False), y, role=R.VISION_PROJECTOR,
             label="projection")                                                            # (B·N, t, d)
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, y, role=R.IMAGE_MERGE, label="merge image features")


def build(flags, bound, name="llama4", labels=None):
    """Llama 4's text decoder with its vision encoder and projector beside it."""
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)
