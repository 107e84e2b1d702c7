"""Llama 3.2 Vision with images (the flag ``vision_run``; transformers' ``MllamaModel.forward``
with ``pixel_values``): the tiled vision encoder, the projector and the gated cross-attention
layers, run.

Per image, transformers' ``pixel_values`` of shape (B, N_img, max_num_tiles, C_img, S_img, S_img)
runs every tile slot (a tile the image does not fill is zeros, masked in attention but computed):

- patches: a P×P convolution without bias per tile, (S_img/P_patch)² patches, the pre-tile
  aspect-ratio embedding added (a table lookup, a tanh gate: elementwise), a class token: n =
  (S_img/P_patch)² + 1 rows per tile, the gated position and tile-position tables added
  (elementwise), a LayerNorm;
- each tile padded with zero rows to a multiple of 8, n + p rows (p = (8 − n mod 8) mod 8; the
  flag ``patch_pad``: 7 at 448 px and patch 14, 1032 rows); the tiles joined into one sequence of
  tiles·(n + p) rows; the attention mask built as an outer product of a (tiles·(n + p), 1) mask
  (a batched matmul of inner size 1, counted by ``FlopCounterMode``);
- L_v local layers (LayerNorm, attention of h_v heads without biases over the whole sequence,
  LayerNorm, GELU MLP with biases), a LayerNorm, the post-tile aspect-ratio embedding added
  (elementwise), the global layers (the same, each branch times a tanh gate: elementwise);
- the padding dropped, the final features concatenated with the outputs of
  len(intermediate_layers_indices) local layers (vision_output_dim = (1 + that)·d_v), and the
  projector Linear(vision_output_dim, d) with bias: N_img·tiles·n image positions of width d.

Each cross-attention layer (``MllamaCrossAttentionDecoderLayer``) runs over the T text positions:
an RMSNorm, queries from the text and keys and values from the image positions (per-head
RMSNorms on queries and keys, grouped-query heads, no mask work counted), the output projection,
a tanh-gated residual, an RMSNorm, the SwiGLU MLP, a tanh-gated residual. The cross-attention
layers are drawn before the self-attention stack (in the model they sit at
``cross_attention_layers``): the sums are the same. Their keys and values over the image
positions are computed once per request and cached; a decode step runs the query, the attention
over the cached image positions, the output projection and the MLP of each.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff, d_ff_v, d_v, h, h_kv, h_v
from ...graph import roles as R
from .attention import AttentionSpec, Norms, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn

#: the node paths under which the vision encoder and projector live (run once per request)
PREFIXES = ("vision_model/", "multi_modal_projector")

#: rows of one tile before padding: the patches and the class token
ROWS = (S_img / P_patch) ** 2 + 1


def image_positions(flags):
    """The image positions each cross-attention layer reads per image: tiles·((S_img/P_patch)² + 1)."""
    return sympy.Integer(flags["max_tiles"]) * ROWS


def _param(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=label)


def _vision_layer(g, x, gated):
    a = g.op("input_layernorm", ops.LayerNorm(d_v), x, role=R.ATTENTION_NORM, label="LayerNorm")
    o = attention(g, a, AttentionSpec(
        d_v, h_v, dh=d_v / h_v, module="self_attn", causal=False,
        names={"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj", "o": "self_attn/o_proj"},
        projections=Projections(bias=False)))
    x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + gate·attn_out" if gated
             else "X + attn_out")
    f = g.op("post_attention_layernorm", ops.LayerNorm(d_v), x, role=R.FFN_NORM, label="LayerNorm")
    f = ffn(g, f, FFNSpec(d_v, d_ff_v, activation("gelu"), bias=True,
                          names={"up": "mlp/fc1", "act": "mlp/activation_fn", "down": "mlp/fc2"}))
    if gated:
        for n in ("gate_attn", "gate_ffn"):
            _param(g, n, ops.ChannelScale(sympy.Integer(1)), (B, 1), f"{n} (a scalar tanh gate: elementwise)")
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + gate·ffn_out" if gated
                else "X + ffn_out")


def _tables(g, v, tiles, ratios):
    """The tile and position tables: lookups by aspect-ratio id and gated adds (elementwise)."""
    p = f"{v}/gated_positional_embedding"
    _param(g, f"{p}/gate", ops.ChannelScale(sympy.Integer(1)), (B, 1), "position gate (a scalar)")
    _param(g, f"{p}/tile_embedding", ops.Embedding(ratios + 1, tiles * ROWS * d_v), (B,),
           "tile position table (a lookup, a gated add)")
    for t in ("pre_tile_positional_embedding", "post_tile_positional_embedding"):
        _param(g, f"{v}/{t}/embedding", ops.Embedding(ratios + 1, tiles * d_v), (B,), f"{t} (a lookup, a gated add)")
        _param(g, f"{v}/{t}/gate", ops.ChannelScale(sympy.Integer(1)), (B, 1), f"{t} gate (a scalar)")


def vision_tower(g, flags):
    """``MllamaVisionModel`` and the projector over B·N_img images of ``max_tiles`` tiles:
    the image positions (B, N_img·tiles·n, d) the cross-attention layers read."""
    tiles, ratios = sympy.Integer(flags["max_tiles"]), sympy.Integer(flags["aspect_ratios"])
    pad, extra = sympy.Integer(flags["patch_pad"]), sympy.Integer(flags["intermediate_layers"] or 0)
    out = sympy.Integer(flags["vision_output_dim"])
    rows = ROWS + pad
    v = "vision_model"
    g.require("integer", rows / 8, "each tile's (S_img/P_patch)² + 1 rows and patch_pad must make a multiple of 8 "
              "(MllamaVisionModel pads to one)", id="tile_rows_padded_to_8")
    g.require("le", out - (1 + extra) * d_v, "vision_output_dim must be (1 + len(intermediate_layers_indices))"
              "·hidden_size for an image to run", id="vision_output_dim_is_features")
    g.require("le", (1 + extra) * d_v - out, "vision_output_dim must be (1 + len(intermediate_layers_indices))"
              "·hidden_size for an image to run", id="vision_output_dim_is_features_below")
    px = g.input("pixel_values", (B * N_img * tiles, C_img, S_img, S_img), dtype="act",
                 label="pixels (every tile slot)", role=R.PIXELS)
    x = g.op(f"{v}/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=False), px, role=R.PATCH_EMBEDDING,
             label="patches (conv P×P, stride P)")                                   # (B·N·tiles, d_v, S/P, S/P)
    x = g.op(f"{v}/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN, label="patch sequence")
    _tables(g, v, tiles, ratios)
    x = g.op(f"{v}/class_embedding", ops.ClassToken(d_v), x, role=R.CLASS_TOKEN, label="[CLS] + patches")
    x = g.op(f"{v}/gated_positional_embedding/embedding", ops.AddPositions(ROWS, d_v), x,
             role=R.POSITION_EMBEDDING, label="+ gated positions")                     # (B·N·tiles, n, d_v)
    x = g.op(f"{v}/layernorm_pre", ops.LayerNorm(d_v), x, role=R.EMBEDDING_NORM, label="pre-LN")
    x = g.op(f"{v}/pad", ops.PadRows(pad), x, role=R.PATCH_FLATTEN, label="padded to a multiple of 8")
    x = g.op(f"{v}/tiles", ops.Regroup(B * N_img, d_v), x, role=R.PATCH_FLATTEN,
             label="tiles joined")                                                     # (B·N, tiles·(n+p), d_v)
    x = g.op(f"{v}/attention_mask", ops.TileMask(), x, role=R.MASK, label="tile mask (outer product)")
    with g.repeat(f"{v}/transformer/layers", L_v, label="vision layer", carry=x, role=R.STACK, length=tiles * rows):
        x = _vision_layer(g, x, gated=False)
    x = g.op(f"{v}/layernorm_post", ops.LayerNorm(d_v), x, role=R.VISION_NORM, label="post-LN")
    with g.repeat(f"{v}/global_transformer/layers", sympy.Integer(flags["global_layers"]),
                  label="gated global vision layer", carry=x, role=R.STACK, length=tiles * rows):
        x = _vision_layer(g, x, gated=True)
    x = g.op(f"{v}/untile", ops.Regroup(B * N_img * tiles, d_v), x, role=R.VISION_SELECT, label="tiles apart")
    x = g.op(f"{v}/unpad", ops.PadRows(-pad), x, role=R.VISION_SELECT, label="padding dropped")
    x = g.op(f"{v}/features", ops.ExtraFeatures(extra), x, role=R.VISION_SELECT,
             label="final + intermediate layers' features")                            # (B·N·tiles, n, out)
    width = (1 + extra) * d_v  # = vision_output_dim (required above)
    x = g.op(f"{v}/images", ops.Regroup(B, width), x, role=R.VISION_SELECT, label="image positions")
    return g.op("multi_modal_projector", ops.Linear(width, d), x, role=R.VISION_PROJECTOR,
                label="projection")                                                    # (B, N·tiles·n, d)


def cross_layer(g, x, memory, dh):
    """One ``MllamaCrossAttentionDecoderLayer`` over the text positions *x* and the image positions."""
    a = g.op("input_layernorm", ops.RMSNorm(d), x, role=R.CROSS_NORM, label="RMSNorm_cross")
    o = attention(g, a, AttentionSpec(
        d, h, dh=dh, kv_heads=h_kv, module="cross_attn", causal=False,
        names={"q": "cross_attn/q_proj", "k": "cross_attn/k_proj", "v": "cross_attn/v_proj", "o": "cross_attn/o_proj"},
        norms=Norms(qk="head", norm=ops.RMSNorm)), memory=memory)
    for n in ("cross_attn_attn_gate", "cross_attn_mlp_gate"):
        _param(g, n, ops.ChannelScale(sympy.Integer(1)), (B, T, 1), f"{n} (a scalar tanh gate: elementwise)")
    x = g.op("cross_attn_add", ops.Add(), x, o, role=R.CROSS_RESIDUAL, label="X + gate·cross_out")
    f = g.op("post_attention_layernorm", ops.RMSNorm(d), x, role=R.FFN_NORM, label="RMSNorm")
    f = ffn(g, f, FFNSpec(d, d_ff, activation("silu"), gated=True,
                          names={"gate": "mlp/gate_proj", "up": "mlp/up_proj", "act": "mlp/act_fn",
                                 "mul": "mlp/mul", "down": "mlp/down_proj"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + gate·ffn_out")


def with_images(g, x, flags, dh):
    """The vision tower, the projector and the cross-attention layers run over N_img images."""
    memory = vision_tower(g, flags)
    g.require("integer", N_img, "with vision_run the images run: N_img must be at least 1 (without images "
              "transformers skips the cross-attention layers: leave vision_run unset)", id="images_run")
    g.require("le", N_img - T, "T must count the N_img <|image|> tokens", id="image_tokens_within_sequence")
    with g.repeat("cross_blocks", sympy.Integer(flags["cross_layers"]), label="gated cross-attention layer",
                  carry=x, role=R.STACK):
        x = cross_layer(g, x, memory, dh)
    return x
