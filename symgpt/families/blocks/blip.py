"""BLIP (Li et al. 2022, "BLIP: Bootstrapping Language-Image Pre-training for Unified
Vision-Language Understanding and Generation"; transformers' ``BlipForConditionalGeneration``),
declared with transformers' module names.

The vision model is BLIP-2's (``blocks/blip2.py``: one image per sequence). The text decoder
(``BlipTextLMHeadModel``) is BERT run as a causal LM: token + learned position embeddings and a
LayerNorm; L post-norm layers of causal self-attention, cross-attention onto every image position
(keys and values from width d_v) and a GELU MLP; BERT's prediction head (dense, activation,
LayerNorm, a decoder tied to the token table with a bias of its own) over the T positions.
"""

from __future__ import annotations

from ... import ops
from ...core.symbols import B, L, P_patch, S_img, T, T_max, V, d, d_ff, d_v, h
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Projections, attention
from .blip2 import vision_model
from .encoder_layers import activation
from .ffn import FFNSpec, ffn

P = "text_decoder/"


def _spec(module, causal, drop, d_memory=None):
    return AttentionSpec(d, h, dh=d / h, module=f"{module}/self", causal=causal, dropout=drop, d_memory=d_memory,
                         names={"q": f"{module}/self/query", "k": f"{module}/self/key",
                                "v": f"{module}/self/value", "o": f"{module}/output/dense"},
                         projections=Projections(bias=True, out_bias=True))


def build(flags, bound, name="blip"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", T - T_max, "T must not exceed T_max, the length of the decoder's position table",
              id="length_within_positions")
    img = vision_model(g, flags, batch=B)                                                        # (B, n, d_v)

    ids = g.input("input_ids", (B, T), label="input ids", role=R.TOKENS)                         # (B, T)
    x = g.op(P + "bert/embeddings/word_embeddings", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    pos = g.op(P + "bert/embeddings/position_embeddings", ops.PositionEmbedding(T_max, d, offset=0, ids="buffer"),
               ids, role=R.POSITION_EMBEDDING, label="pos_emb")                                  # (T, d)
    x = g.op(P + "bert/embeddings/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="X0")
    x = g.op(P + "bert/embeddings/LayerNorm", ops.LayerNorm(d), x, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    if drop:
        x = g.op(P + "bert/embeddings/dropout", ops.Dropout(), x, role=R.DROPOUT)
    act = activation(flags["activation"])
    mlp = FFNSpec(d, d_ff, act, bias=True, dropout=drop,
                  names={"up": "intermediate/dense", "act": "intermediate/intermediate_act_fn",
                         "down": "output/dense", "dropout": "output/dense_dropout"})
    with g.repeat(P + "bert/encoder/layer", L, label="decoder layer", carry=x, role=R.STACK, length=T):
        o = attention(g, x, _spec("attention", True, drop))
        x = g.op("attention/output/add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        x = g.op("attention/output/LayerNorm", ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        o = attention(g, x, _spec("crossattention", False, drop, d_memory=d_v), memory=img)
        x = g.op("crossattention/output/add", ops.Add(), x, o, role=R.CROSS_RESIDUAL, label="X + cross_out")
        x = g.op("crossattention/output/LayerNorm", ops.LayerNorm(d), x, role=R.CROSS_NORM, label="LayerNorm_cross")
        f = ffn(g, x, mlp)
        x = g.op("output/add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")
        x = g.op("output/LayerNorm", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")  # (B, T, d)
    t = g.op(P + "cls/predictions/transform/dense", ops.Linear(d, d), x, role=R.HEAD_TRANSFORM, label="transform")
    t = g.op(P + "cls/predictions/transform/transform_act_fn", act, t, role=R.HEAD_TRANSFORM_ACT,
             label="act(transform)")
    t = g.op(P + "cls/predictions/transform/LayerNorm", ops.LayerNorm(d), t, role=R.HEAD_TRANSFORM_NORM,
             label="LayerNorm_head")
    out = g.op(P + "cls/predictions/decoder", ops.Linear(d, V, bias=True, tag="lm_head"), t,
               tie={"weight": g.param(P + "bert/embeddings/word_embeddings")}, role=R.HEAD, label="logits")
    loss = g.op("loss", ops.CrossEntropy(), out, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=out, loss=loss, flags=dict(flags))
