"""The Vision Transformer (Dosovitskiy et al. 2021), declared on the op catalog with transformers'
ViT module names.

An image batch (B, C_img, S_img, S_img) is cut into (S_img/P_patch)² patches of P_patch × P_patch
pixels by a convolution with kernel = stride = P_patch (the patch embedding: a linear map of each
flattened patch), a learned class token is prepended and a learned (1, T, d) position table added,
so the encoder's sequence length is T = (S_img/P_patch)² + 1. L pre-norm blocks of bidirectional
self-attention and a GELU MLP, a final LayerNorm, then the head the ``head`` flag names:
``classifier`` (a linear map of the class token to N_cls classes: ``ViTForImageClassification``;
trained with transformers' single-label cross-entropy over the N_cls logits),
``pooler`` (dense d -> d and tanh on the class token: ``ViTModel``) or ``none``.
"""

from __future__ import annotations

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, C_img, L, N_cls, P_patch, S_img, d, d_ff, h
from .attention import AttentionSpec, Projections, attention
from .ffn import FFNSpec, ffn
from .encoder_layers import activation

#: the encoder's sequence length: the patches and the class token
LENGTH = (S_img / P_patch) ** 2 + 1


def build(flags, bound):
    drop = bool(flags["dropout"])
    ff = d_ff if "d_ff" in bound else 4 * d
    g = Builder("vit", declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")

    x = encoder(g, flags, ff, drop)

    head = flags["head"]
    if head == "none":
        return g.build(output=x, flags=dict(flags))
    c = g.op("first_token", ops.FirstToken(), x, role=R.POOLED_TOKEN, label="X[:, 0]")          # (B, d)
    if head == "classifier":
        out = g.op("classifier", ops.Linear(d, N_cls), c, role=R.HEAD, label="class logits")   # (B, N_cls)
        # given labels, transformers' single-label classification: cross-entropy over N_cls
        loss = g.op("loss", ops.CrossEntropy(), out, role=R.LOSS, label="loss")
        return g.build(output=out, loss=loss, flags=dict(flags))
    else:
        c = g.op("pooler/dense", ops.Linear(d, d), c, role=R.POOLER, label="pooler")           # (B, d)
        out = g.op("pooler/activation", ops.Tanh(), c, role=R.POOLER_ACT, label="tanh(pooler)")
    return g.build(output=out, flags=dict(flags))

def encoder(g, flags, ff, drop, P=""):
    """ViT's embeddings, its L blocks (feed-forward width *ff*) and final LayerNorm, the node
    paths under the prefix *P*: the encoder's output (B, T, d)."""
    px = g.input("pixel_values", (B, C_img, S_img, S_img), dtype="act", label="pixels",
                 role=R.PIXELS)                                                                 # (B, C, S, S)
    x = g.op(P + "embeddings/patch_embeddings/projection", ops.Conv2d(C_img, d, P_patch), px, role=R.PATCH_EMBEDDING,
             label="patches (conv P×P, stride P)")                                             # (B, d, S/P, S/P)
    x = g.op(P + "embeddings/patch_embeddings/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN,
             label="patch sequence")                                                            # (B, (S/P)², d)
    x = g.op(P + "embeddings/cls_token", ops.ClassToken(d), x, role=R.CLASS_TOKEN, label="[CLS] + patches")  # (B, T, d)
    x = g.op(P + "embeddings/position_embeddings", ops.AddPositions(LENGTH, d), x, role=R.POSITION_EMBEDDING,
             label="X0")                                                                        # (B, T, d)
    if drop:
        x = g.op(P + "embeddings/dropout", ops.Dropout(), x, role=R.DROPOUT)

    attn = AttentionSpec(d, h, dh=d / h, module="attention/attention",
                         names={"q": "attention/attention/query", "k": "attention/attention/key",
                                "v": "attention/attention/value", "o": "attention/output/dense"},
                         causal=False, dropout=drop,
                         projections=Projections(bias=bool(flags["qkv_bias"]), out_bias=True))
    mlp = FFNSpec(d, ff, activation(flags["activation"]), bias=True, dropout=drop,
                  names={"up": "intermediate/dense", "act": "intermediate/intermediate_act_fn",
                         "down": "output/dense", "dropout": "output/dense_dropout"})
    with g.repeat(P + "encoder/layer", L, label="encoder layer", carry=x, role=R.STACK, length=LENGTH):
        a = g.op("layernorm_before", ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_1")
        o = attention(g, a, attn)
        x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        f = g.op("layernorm_after", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_2")
        f = ffn(g, f, mlp)
        x = g.op("output_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")      # (B, T, d)
    return g.op(P + "layernorm", ops.LayerNorm(d), x, role=R.FINAL_NORM, label="LayerNorm_final")
