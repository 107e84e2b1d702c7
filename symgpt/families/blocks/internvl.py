"""InternVL (Chen et al. 2024, InternVL 2.5 / 3; transformers' ``InternVLForConditionalGeneration``)
and Qianfan-OCR (``QianfanOCRForConditionalGeneration``, the same modules): InternViT
(``InternVLVisionModel``) and a pixel-shuffle MLP projector beside a text decoder.

InternViT: a Conv2d patch embedding with bias, a class token and learned positions over n + 1
tokens, then L_v layers of a norm (LayerNorm or RMSNorm: norm_type), attention (Q/K/V biases as
attention_bias; an RMSNorm over all heads of Q and of K with use_qk_norm; an output projection with
bias), a learned per-channel scale λ₁ on the attention's output before its residual add, a norm, an
MLP fc1 -> act -> fc2 with biases and λ₂; a final LayerNorm unless use_mean_pooling.

The projector (``InternVLModel.get_image_features``): the class token dropped, the (S_img/P_patch)²
patch grid pixel-shuffled s × s (s = 1/downsample_ratio) into tokens of s²·d_v features, then a
LayerNorm of s²·d_v, ``linear_1`` (s²·d_v -> d), the activation and ``linear_2`` (d -> d), with
biases. Tokens per image: t = (S_img/P_patch)² / s².
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v, L_v
from ...graph import roles as R
from .attention import AttentionSpec, Norms, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .vlm import PATCHES, VISION_PREFIXES, with_encoder


def tokens_per_image(flags):
    return PATCHES / sympy.Integer(flags["pixel_shuffle"]) ** 2


def intern_vit(g, flags, prefix="vision_tower"):
    """``InternVLVisionModel`` over B·N_img images: (B·N_img, n + 1, d_v)."""
    act = activation(flags["vision_activation"])
    norm = ops.RMSNorm if flags["vision_norm"] == "rms_norm" else ops.LayerNorm
    n = PATCHES + 1
    e = f"{prefix}/embeddings"
    px = g.input("pixel_values", (B * N_img, C_img, S_img, S_img), dtype="act", label="pixels",
                 role=R.PIXELS)                                                               # (B·N, C, S, S)
    x = g.op(f"{e}/patch_embeddings/projection", ops.Conv2d(C_img, d_v, P_patch, bias=True), px,
             role=R.PATCH_EMBEDDING, label="patches (conv P×P, stride P)")                   # (B·N, d_v, S/P, S/P)
    x = g.op(f"{e}/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN, label="patch sequence")
    x = g.op(f"{e}/cls_token", ops.ClassToken(d_v), x, role=R.CLASS_TOKEN, label="[CLS] + patches")
    if flags["vision_mask_token"]:  # InternVLVisionEmbeddings.mask_token: used only with bool_masked_pos
        g.op(f"{e}/mask_token", ops.Held(ops.ClassToken(d_v), (B, PATCHES, d_v)), role=R.HELD_EMBEDDING,
             label="mask token (not run)")
    if flags["vision_positions"]:
        x = g.op(f"{e}/position_embeddings", ops.AddPositions(n, d_v), x, role=R.POSITION_EMBEDDING,
                 label="+ positions")                                                         # (B·N, n+1, d_v)
    qk = Norms(qk="full", norm=ops.RMSNorm) if flags["vision_qk_norm"] else Norms()
    with g.repeat(f"{prefix}/encoder/layer", L_v, label="vision layer", carry=x, role=R.STACK, length=n):
        a = g.op("layernorm_before", norm(d_v), x, role=R.ATTENTION_NORM, label="norm")
        o = attention(g, a, AttentionSpec(
            d_v, h_v, dh=d_v / h_v, module="attention", causal=False,
            names={"q": "attention/q_proj", "k": "attention/k_proj", "v": "attention/v_proj",
                   "o": "attention/projection_layer", "q_norm": "attention/q_norm", "k_norm": "attention/k_norm"},
            projections=Projections(bias=bool(flags["vision_qkv_bias"]), out_bias=True), norms=qk))
        o = g.op("lambda_1", ops.ChannelScale(d_v), o, role=R.RESIDUAL_SCALE, label="λ₁ ⊙ attn_out")
        x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + λ₁ attn_out")
        f = g.op("layernorm_after", norm(d_v), x, role=R.FFN_NORM, label="norm")
        f = ffn(g, f, FFNSpec(d_v, d_ff_v, act, bias=True,
                              names={"up": "mlp/fc1", "act": "mlp/activation_fn", "down": "mlp/fc2"}))
        f = g.op("lambda_2", ops.ChannelScale(d_v), f, role=R.RESIDUAL_SCALE, label="λ₂ ⊙ mlp_out")
        x = g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + λ₂ mlp_out")
    if not flags["vision_mean_pooling"]:
        x = g.op(f"{prefix}/layernorm", ops.LayerNorm(d_v), x, role=R.VISION_NORM, label="LayerNorm")
    return x


def _vision(g, x, flags):
    s = sympy.Integer(flags["pixel_shuffle"])
    p = "multi_modal_projector"
    feats = intern_vit(g, flags)                                                              # (B·N, n+1, d_v)
    feats = g.op(f"{p}/select", ops.DropTokens(1), feats, role=R.VISION_SELECT, label="patches (CLS dropped)")
    feats = g.op(f"{p}/pixel_shuffle", ops.PixelShuffle(s), feats, role=R.VISION_POOL,
                 label=f"pixel shuffle {s}×{s}")                                               # (B·N, t, s²·d_v)
    feats = g.op(f"{p}/layer_norm", ops.LayerNorm(s * s * d_v), feats, role=R.VISION_NORM, label="LayerNorm")
    feats = g.op(f"{p}/linear_1", ops.Linear(s * s * d_v, d, bias=True), feats, role=R.VISION_PROJECTOR,
                 label="linear 1")
    feats = g.op(f"{p}/act", activation(flags["projector_activation"]), feats, role=R.VISION_ACT, label="act")
    feats = g.op(f"{p}/linear_2", ops.Linear(d, d, bias=True), feats, role=R.VISION_PROJECTOR,
                 label="linear 2")                                                            # (B·N, t, d)
    g.require("le", N_img * sympy.frac(S_img / P_patch / s), "an image's patch grid side S_img/P_patch must be a "
              f"multiple of the pixel shuffle's side {s} (1/downsample_ratio)", id="patches_divide_image")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.ScatterImageTokens(N_img), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="internvl", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), VISION_PREFIXES)
