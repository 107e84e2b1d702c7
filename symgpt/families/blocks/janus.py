"""Janus (``JanusForConditionalGeneration``) with its understanding path priced per image: the
LLaMA decoder, and, where the aligner's width is the decoder's (``janus_run``), the vision tower
and aligner run on N_img images of S_img × S_img pixels. The image tokenizer (VQ-VAE) and the
generation modules never run in this forward and stay held (``blocks/held_towers.py``).

The tower (``JanusVisionModel``): a P×P patch Conv2d with bias, a learned position table of
(S_img/P)² rows (the processor resizes every image to image_size; positions are not
interpolated), L_v layers of LayerNorm, attention (q/k/v with attention_bias, projection_layer
with a bias), LayerNorm and an fc1/GELU/fc2 MLP, each on a residual, and post_layernorm. The
aligner (``JanusVisionAlignerMLP``): fc1 (d_v -> w), then depth - 1 times the activation and a
Linear(w, w). Every patch is an image token: t = (S_img/P)² tokens per image, counted in T.
A configuration whose aligner width differs from the decoder's, or with Q/K norms (whose
LayerNorm of d_v transformers applies to head-wide vectors), keeps the tower held.
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .held_towers import build as held_build, janus_generation
from .vlm import with_encoder

PATCHES = (S_img / P_patch) ** 2
PREFIXES = ("vision_model/", "aligner/", "merge_image_tokens")


def _layer(g, x, flags, act):
    a = g.op("layer_norm1", ops.LayerNorm(d_v), x, role=R.ATTENTION_NORM, label="LayerNorm_1")
    o = attention(g, a, AttentionSpec(
        d_v, h_v, dh=d_v / h_v, module="self_attn", causal=False,
        names={"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj",
               "o": "self_attn/projection_layer"},
        projections=Projections(bias=bool(flags["janus_qkv_bias"]), out_bias=True)))
    x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    f = g.op("layer_norm2", ops.LayerNorm(d_v), x, role=R.FFN_NORM, label="LayerNorm_2")
    f = ffn(g, f, FFNSpec(d_v, d_ff_v, act, bias=True,
                          names={"up": "mlp/fc1", "act": "mlp/activation_fn", "down": "mlp/fc2"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def _vision(g, x, flags):
    act = activation(flags["janus_activation"])
    px = g.input("pixel_values", (B * N_img, C_img, S_img, S_img), dtype="act", label="pixels", role=R.PIXELS)
    v = g.op("vision_model/embeddings/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=True), px,
             role=R.PATCH_EMBEDDING, label="patches (conv P×P, stride P)")                   # (B·N, d_v, S/P, S/P)
    v = g.op("vision_model/embeddings/flatten", ops.FlattenPatches(), v, role=R.PATCH_FLATTEN,
             label="patch sequence")                                                          # (B·N, n, d_v)
    v = g.op("vision_model/embeddings/position_embedding", ops.AddPositions(PATCHES, d_v), v,
             role=R.POSITION_EMBEDDING, label="+ positions")
    with g.repeat("vision_model/encoder/layers", L_v, label="vision layer", carry=v, role=R.STACK, length=PATCHES):
        v = _layer(g, v, flags, act)
    v = g.op("vision_model/post_layernorm", ops.LayerNorm(d_v), v, role=R.VISION_NORM, label="post-LN")
    v = g.op("aligner/fc1", ops.Linear(d_v, d, bias=True), v, role=R.VISION_PROJECTOR, label="aligner fc1")
    for i in range(int(flags["janus_aligner_depth"]) - 1):
        v = g.op(f"aligner/act/{i}", activation(flags["janus_activation"]), v, role=R.VISION_ACT, label="act")
        v = g.op(f"aligner/hidden_layers/{i}", ops.Linear(d, d, bias=True), v, role=R.VISION_PROJECTOR,
                 label=f"aligner linear {i + 1}")                                           # (B·N, n, d)
    janus_generation(g, flags)
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * PATCHES - T, "T must count the N_img images' tokens (N_img·(S_img/P_patch)² positions)",
              id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, v, role=R.IMAGE_MERGE,
                label="merge image features")                                               # (B, T, d)


def build(flags, bound, name, text):
    """Janus: the tower priced per image where ``janus_run`` (module docstring), else held."""
    if not flags["janus_run"]:
        return held_build(flags, bound, name, text, kind="janus")
    return with_encoder(flags, bound, name, None, partial(_vision, flags=flags), PREFIXES)

