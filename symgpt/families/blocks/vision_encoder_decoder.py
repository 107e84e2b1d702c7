"""transformers' ``VisionEncoderDecoderModel`` with a ViT encoder and a BERT decoder (TrOCR-style
captioning, Li et al. 2021; the default ``VisionEncoderDecoderConfig`` pairs ``ViTModel`` with
``BertLMHeadModel``), declared with transformers' module names.

The encoder is ViT (``blocks/vit.py``) with ``ViTModel``'s pooler (run, its output unused), its
FFN of width d_ff_v. The decoder is BERT run as a causal LM: token + token-type + learned position
embeddings and a LayerNorm; L_dec post-norm blocks of causal self-attention, cross-attention onto
the encoder's output (keys and values from every ViT position, biases everywhere) and a GELU MLP,
each followed by its residual add and LayerNorm; then BERT's prediction head (dense, activation,
LayerNorm, a decoder tied to the token table with a bias of its own) over the T_dec positions.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L_dec, S_img, P_patch, T_dec, T_max, V, d, d_ff, d_ff_v, h
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .vit import encoder


def _decoder_input(g, flags, drop):
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)    # (B, T_dec)
    x = g.op("decoder/bert/embeddings/word_embeddings", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING,
             label="tok_emb")
    tt = g.input("decoder_token_type_ids", (B, T_dec), label="token types", role=R.TOKEN_TYPES)
    te = g.op("decoder/bert/embeddings/token_type_embeddings", ops.Embedding(sympy.Integer(flags["type_vocab"]), d),
              tt, role=R.TOKEN_TYPE_EMBEDDING, label="type_emb")
    x = g.op("decoder/bert/embeddings/add_token_type", ops.Add(), x, te, role=R.EMBEDDING_ADD, label="tok + type")
    pos = g.op("decoder/bert/embeddings/position_embeddings", ops.PositionEmbedding(T_max, d, offset=0, ids="buffer"),
               ids, role=R.POSITION_EMBEDDING, label="pos_emb")                                  # (T_dec, d)
    x = g.op("decoder/bert/embeddings/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="Y0")
    x = g.op("decoder/bert/embeddings/LayerNorm", ops.LayerNorm(d), x, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    if drop:
        x = g.op("decoder/bert/embeddings/dropout", ops.Dropout(), x, role=R.DROPOUT)
    return x


def _spec(module, causal, drop):
    return AttentionSpec(d, h, dh=d / h, module=f"{module}/self", causal=causal, dropout=drop,
                         names={"q": f"{module}/self/query", "k": f"{module}/self/key",
                                "v": f"{module}/self/value", "o": f"{module}/output/dense"},
                         projections=Projections(bias=True, out_bias=True))


def build(flags, bound, name="vision-encoder-decoder"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", T_dec - T_max, "T_dec must not exceed T_max, the length of the decoder's position table",
              id="length_within_positions")
    enc = encoder(g, flags, d_ff_v, drop, P="encoder/")                                         # (B, T, d)
    c = g.op("encoder/pooler/first_token", ops.FirstToken(), enc, role=R.POOLED_TOKEN, label="X[:, 0]")
    c = g.op("encoder/pooler/dense", ops.Linear(d, d), c, role=R.POOLER, label="pooler (unused)")
    g.op("encoder/pooler/activation", ops.Tanh(), c, role=R.POOLER_ACT, label="tanh(pooler)")

    return bert_decoder(g, flags, enc, L_dec, drop)


def bert_decoder(g, flags, enc, layers, drop):
    """BertLMHeadModel as a decoder (``is_decoder``, ``add_cross_attention``) of *layers* layers over
    the encoder's output *enc*, its tied prediction head and the loss: the decoder of transformers'
    VisionEncoderDecoderModel and SpeechEncoderDecoderModel defaults. Returns the built Arch."""
    y = _decoder_input(g, flags, drop)
    act = activation(flags["decoder_activation"])
    mlp = FFNSpec(d, d_ff, act, bias=True, dropout=drop,
                  names={"up": "intermediate/dense", "act": "intermediate/intermediate_act_fn",
                         "down": "output/dense", "dropout": "output/dense_dropout"})
    with g.repeat("decoder/bert/encoder/layer", layers, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        o = attention(g, y, _spec("attention", True, drop))
        y = g.op("attention/output/add", ops.Add(), y, o, role=R.ATTENTION_RESIDUAL, label="Y + attn_out")
        y = g.op("attention/output/LayerNorm", ops.LayerNorm(d), y, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        o = attention(g, y, _spec("crossattention", False, drop), memory=enc)
        y = g.op("crossattention/output/add", ops.Add(), y, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
        y = g.op("crossattention/output/LayerNorm", ops.LayerNorm(d), y, role=R.CROSS_NORM, label="LayerNorm_cross")
        f = ffn(g, y, mlp)
        y = g.op("output/add", ops.Add(), y, f, role=R.FFN_RESIDUAL, label="Y + ffn_out")
        y = g.op("output/LayerNorm", ops.LayerNorm(d), y, role=R.FFN_NORM, label="LayerNorm_ffn")  # (B, T_dec, d)
    t = g.op("decoder/cls/predictions/transform/dense", ops.Linear(d, d), y, role=R.HEAD_TRANSFORM, label="transform")
    t = g.op("decoder/cls/predictions/transform/transform_act_fn", act, t, role=R.HEAD_TRANSFORM_ACT,
             label="act(transform)")
    t = g.op("decoder/cls/predictions/transform/LayerNorm", ops.LayerNorm(d), t, role=R.HEAD_TRANSFORM_NORM,
             label="LayerNorm_head")
    out = g.op("decoder/cls/predictions/decoder", ops.Linear(d, V, bias=True, tag="lm_head"), t,
               tie={"weight": g.param("decoder/bert/embeddings/word_embeddings")}, role=R.HEAD, label="logits")
    loss = g.op("loss", ops.CrossEntropy(), out, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=out, loss=loss, flags=dict(flags))
