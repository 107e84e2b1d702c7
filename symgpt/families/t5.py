"""T5 (Raffel et al. 2020) and T5 v1.1, declared on the op catalog with transformers' module names.

Two stacks with two sequence lengths: an encoder of L blocks over T_enc tokens and a decoder of
L_dec blocks over T_dec tokens. Pre-norm RMSNorm (T5's LayerNorm has a scale and no shift, no
mean); no biases anywhere; attention scores are not divided by √d_head (T5 folds that into its
initialisation); heads of d_head = ``d_kv`` (h·d_head need not be d). Positions are a relative
bias: each stack's first layer owns a (buckets, h) table (bidirectional buckets in the encoder,
causal in the decoder), computed once per forward pass and added to every layer's scores; the
table is counted once, as transformers does. Every decoder block has cross-attention: queries
from the decoder, keys and values computed from the encoder's output in every layer (no bias).
The FFN is ReLU (v1.0) or gated-GELU (v1.1: ``wi_0``, ``wi_1``). The token embedding is shared
by both stacks. T5 v1.0 rescales the decoder's output by d^(-1/2) before its tied LM head; v1.1
does not rescale, and its checkpoints keep an untied head -- but transformers 5 ties T5's head
whatever ``tie_word_embeddings`` says (that field only decides the rescaling), so a config read
from config.json is counted as transformers builds it (``tied=false`` counts the untied head).
"""

from __future__ import annotations

import sympy

from .. import ops
from .. import roles as R
from ..graph import Builder
from ..symbols import B, L, L_dec, T_dec, T_enc, V, d, d_ff, d_head, h
from .base import Family, register_family
from .layers import attention, ffn

FLAGS = {
    "tied": True,             # the LM head is the shared embedding
    "head_scale": True,       # the decoder output is rescaled by d^-1/2 before the head (v1.0)
    "ffn": "mlp",             # mlp (ReLU, v1.0) | gated (gated-GELU, v1.1)
    "activation": "relu",     # relu | gelu_new | gelu_tanh | gelu | silu
    "buckets": 32,            # relative_attention_num_buckets
    "head": "lm",             # lm (...ForConditionalGeneration) | none (...Model: the decoder's hidden states)
    "dropout": False,
    "loss": True,
}
CHOICES = {"head": ("lm", "none"), "ffn": ("mlp", "gated"),
           "activation": ("relu", "gelu_new", "gelu_tanh", "gelu", "silu")}
FLAG_HELP = {
    "tied": "the LM head shares the token embedding",
    "head_scale": "the decoder output is multiplied by d^-1/2 before the LM head (T5 v1.0; not v1.1)",
    "ffn": "mlp (wi, act, wo: T5 v1.0) or gated (wi_0, wi_1: T5 v1.1 gated-GELU)",
    "activation": "relu (v1.0), gelu_new (v1.1: transformers' tanh-GELU written out of elementwise "
                  "ops, which keeps four tensors for backward), gelu_tanh (the fused op), gelu or silu",
    "buckets": "relative position buckets (a (buckets, h) table per stack)",
    "head": "lm (the LM head and loss: ForConditionalGeneration) or none (the bare Model)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
}


def _ffn(g, flags, x, prefix, drop):
    gated = flags["ffn"] == "gated"
    names = ({"gate": f"{prefix}/DenseReluDense/wi_0", "up": f"{prefix}/DenseReluDense/wi_1"} if gated
             else {"up": f"{prefix}/DenseReluDense/wi"})
    names.update(act=f"{prefix}/DenseReluDense/act", mul=f"{prefix}/DenseReluDense/mul",
                 down=f"{prefix}/DenseReluDense/wo")
    return ffn(g, x, d_model=d, ff=d_ff, names=names, act=flags["activation"], bias=False, gated=gated,
               dropout=drop, act_dropout=drop)


def _proj(prefix):
    return {n: f"{prefix}/{n}" for n in "qkvo"}


def build(flags, bound):
    drop = bool(flags["dropout"])
    buckets = sympy.Integer(flags["buckets"])
    g = Builder("t5")

    # --- encoder ---------------------------------------------------------------------------
    ids = g.input("input_ids", (B, T_enc), label="input ids", role=R.TOKENS)                   # (B, T_enc)
    x = g.op("shared", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")      # (B, T_enc, d)
    if drop:
        x = g.op("encoder/dropout", ops.Dropout(), x, role=R.DROPOUT)
    bias = g.op("encoder/relative_attention_bias", ops.RelativePositionBias(buckets, h, bidirectional=True),
                ids, role=R.RELATIVE_BIAS, label="position bias")                              # (1, h, T_enc, T_enc)
    with g.repeat("encoder/block", L, label="encoder block", carry=x, role=R.STACK, length=T_enc):
        a = g.op("layer/0/layer_norm", ops.RMSNorm(d), x, role=R.ATTENTION_NORM, label="norm_attn")
        o = attention(g, a, d_model=d, heads=h, dh=d_head, module="layer/0/SelfAttention",
                      names=_proj("layer/0/SelfAttention"), bias=False, scaled=False, position_bias=bias,
                      dropout=drop)
        x = g.op("layer/0/add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        f = g.op("layer/1/layer_norm", ops.RMSNorm(d), x, role=R.FFN_NORM, label="norm_ffn")
        f = _ffn(g, flags, f, "layer/1", drop)
        x = g.op("layer/1/add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")     # (B, T_enc, d)
    enc = g.op("encoder/final_layer_norm", ops.RMSNorm(d), x, role=R.FINAL_NORM, label="encoder output")
    if drop:
        enc = g.op("encoder/dropout_out", ops.Dropout(), enc, role=R.DROPOUT)

    # --- decoder ---------------------------------------------------------------------------
    dids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = g.op("decoder/embed_tokens", ops.Embedding(V, d), dids, tie={"weight": g.param("shared")},
             role=R.TOKEN_EMBEDDING, label="tok_emb (shared)")                                 # (B, T_dec, d)
    if drop:
        y = g.op("decoder/dropout", ops.Dropout(), y, role=R.DROPOUT)
    dbias = g.op("decoder/relative_attention_bias", ops.RelativePositionBias(buckets, h, bidirectional=False),
                 dids, role=R.RELATIVE_BIAS, label="position bias")                            # (1, h, T_dec, T_dec)
    with g.repeat("decoder/block", L_dec, label="decoder block", carry=y, role=R.STACK, length=T_dec):
        a = g.op("layer/0/layer_norm", ops.RMSNorm(d), y, role=R.ATTENTION_NORM, label="norm_attn")
        o = attention(g, a, d_model=d, heads=h, dh=d_head, module="layer/0/SelfAttention",
                      names=_proj("layer/0/SelfAttention"), bias=False, scaled=False, causal=True,
                      position_bias=dbias, dropout=drop)
        y = g.op("layer/0/add", ops.Add(), y, o, role=R.ATTENTION_RESIDUAL, label="Y + attn_out")
        c = g.op("layer/1/layer_norm", ops.RMSNorm(d), y, role=R.CROSS_NORM, label="norm_cross")
        o = attention(g, c, d_model=d, heads=h, dh=d_head, module="layer/1/EncDecAttention",
                      names=_proj("layer/1/EncDecAttention"), bias=False, scaled=False, memory=enc,
                      dropout=drop)
        y = g.op("layer/1/add", ops.Add(), y, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
        f = g.op("layer/2/layer_norm", ops.RMSNorm(d), y, role=R.FFN_NORM, label="norm_ffn")
        f = _ffn(g, flags, f, "layer/2", drop)
        y = g.op("layer/2/add", ops.Add(), y, f, role=R.FFN_RESIDUAL, label="Y + ffn_out")     # (B, T_dec, d)
    y = g.op("decoder/final_layer_norm", ops.RMSNorm(d), y, role=R.FINAL_NORM, label="decoder output")
    if drop:
        y = g.op("decoder/dropout_out", ops.Dropout(), y, role=R.DROPOUT)
    if flags["head"] == "none":
        return g.build(output=y, flags=dict(flags))
    if flags["head_scale"]:
        y = g.op("lm_head/rescale", ops.Scale(d ** sympy.Rational(-1, 2)), y, role=R.HEAD_SCALE,
                 label="Y × d^-1/2")
    tie = {"weight": g.param("shared")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie, role=R.HEAD,
                  label="logits")                                                              # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))


T5 = register_family(Family(
    name="t5",
    description="T5 / T5 v1.1: encoder-decoder, RMSNorm, relative position bias, cross-attention",
    flags=FLAGS, sizes=("L", "L_dec", "d", "h", "d_head", "V", "d_ff"), build=build,
    flag_help=FLAG_HELP, choices=CHOICES))
