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

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, L_dec, T_dec, T_enc, V, d, d_ff, d_head, h
from .attention import AttentionSpec, Scores, attention
from .ffn import FFNSpec, ffn
from .encoder_layers import activation, lm_head

def _ffn(g, flags, x, prefix, drop):
    gated = flags["ffn"] == "gated"
    names = ({"gate": f"{prefix}/DenseReluDense/wi_0", "up": f"{prefix}/DenseReluDense/wi_1"} if gated
             else {"up": f"{prefix}/DenseReluDense/wi"})
    names.update(act=f"{prefix}/DenseReluDense/act", mul=f"{prefix}/DenseReluDense/mul",
                 down=f"{prefix}/DenseReluDense/wo", act_dropout=f"{prefix}/DenseReluDense/act_dropout",
                 dropout=f"{prefix}/DenseReluDense/wo_dropout")
    return ffn(g, x, FFNSpec(d, d_ff, activation(flags["activation"]), names=names, gated=gated, dropout=drop,
                             act_dropout=drop))


def _proj(prefix):
    return {n: f"{prefix}/{n}" for n in "qkvo"}


def _attention(g, x, module, drop, causal=False, **nodes):
    """T5's attention (self or cross over ``memory``): no biases, scores not divided by √d_head."""
    spec = AttentionSpec(d, h, dh=d_head, module=module, names=_proj(module), causal=causal, dropout=drop,
                         scores=Scores(scale=None))
    return attention(g, x, spec, **nodes)


#: sublayer -> (its norm's role and label, its residual's role, what the residual adds)
_SUBLAYERS = {"attn": (R.ATTENTION_NORM, "norm_attn", R.ATTENTION_RESIDUAL, "attn_out"),
              "cross": (R.CROSS_NORM, "norm_cross", R.CROSS_RESIDUAL, "cross_out"),
              "ffn": (R.FFN_NORM, "norm_ffn", R.FFN_RESIDUAL, "ffn_out")}


def _sublayer(g, x, n, kind, stream, body):
    """T5's pre-norm sublayer ``layer/n``: RMSNorm, *body* of the normed input, the residual add
    onto the stream (X in the encoder, Y in the decoder)."""
    norm_role, norm_label, residual_role, out = _SUBLAYERS[kind]
    a = g.op(f"layer/{n}/layer_norm", ops.RMSNorm(d), x, role=norm_role, label=norm_label)
    return g.op(f"layer/{n}/add", ops.Add(), x, body(a), role=residual_role, label=f"{stream} + {out}")


def _stack_input(g, stack, ids, drop, buckets, *, owner, encoder=None):
    """A stack's token embeddings (the encoder owns the shared table, the decoder ties to it) and
    its relative position bias (bidirectional buckets in the encoder, causal in the decoder).
    *encoder* (``None``: as *owner*) says which of the two the stack is, where the decoder owns the
    table (Pop2Piano: the encoder reads features)."""
    encoder = owner if encoder is None else encoder
    tie = None if owner else {"weight": g.param("shared")}
    x = g.op("shared" if owner else f"{stack}/embed_tokens", ops.Embedding(V, d), ids, tie=tie,
             role=R.TOKEN_EMBEDDING, label="tok_emb" if owner else "tok_emb (shared)")         # (B, T, d)
    if drop:
        x = g.op(f"{stack}/dropout", ops.Dropout(), x, role=R.DROPOUT)
    bias = g.op(f"{stack}/relative_attention_bias", ops.RelativePositionBias(buckets, h, bidirectional=encoder),
                ids, role=R.RELATIVE_BIAS, label="position bias")                              # (1, h, T, T)
    return x, bias


def _features_input(g, flags, drop, buckets):
    """Pop2Piano's encoder input: (B, T_enc - 1, d) features after a composer's embedding row
    (``mel_conditioner``: an (N_composers, d) table, ``torch.cat`` in front), the relative bias
    over the T_enc positions of the encoder's padding mask."""
    feats = g.input("input_features", (B, T_enc - 1, d), dtype="act", label="features", role=R.AUDIO)
    comp = g.input("composer", (B, sympy.Integer(1)), label="composer id", role=R.EXTRA_IDS)
    c = g.op("mel_conditioner/embedding", ops.Embedding(sympy.Integer(flags["composers"]), d), comp,
             role=R.EXTRA_EMBEDDING, label="composer row")                                     # (B, 1, d)
    x = g.op("mel_conditioner/concat", ops.PrependRows(), c, feats, role=R.EMBEDDING_ADD,
             label="[composer; features]")                                                     # (B, T_enc, d)
    if drop:
        x = g.op("encoder/dropout", ops.Dropout(), x, role=R.DROPOUT)
    mask = g.input("attention_mask", (B, T_enc), label="encoder padding mask", role=R.EXTRA_IDS)
    bias = g.op("encoder/relative_attention_bias", ops.RelativePositionBias(buckets, h, bidirectional=True),
                mask, role=R.RELATIVE_BIAS, label="position bias")                             # (1, h, T_enc, T_enc)
    return x, bias


def _stack_output(g, stack, x, drop):
    x = g.op(f"{stack}/final_layer_norm", ops.RMSNorm(d), x, role=R.FINAL_NORM, label=f"{stack} output")
    return g.op(f"{stack}/dropout_out", ops.Dropout(), x, role=R.DROPOUT) if drop else x


def build(flags, bound, name="t5"):
    drop = bool(flags["dropout"])
    buckets = sympy.Integer(flags["buckets"])
    g = Builder(name, declared_roles=True)
    features = "composers" in flags  # Pop2Piano: the encoder reads features, the decoder owns the table

    if features:
        x, bias = _features_input(g, flags, drop, buckets)
    else:
        ids = g.input("input_ids", (B, T_enc), label="input ids", role=R.TOKENS)               # (B, T_enc)
        x, bias = _stack_input(g, "encoder", ids, drop, buckets, owner=True)
    with g.repeat("encoder/block", L, label="encoder block", carry=x, role=R.STACK, length=T_enc):
        x = _sublayer(g, x, 0, "attn", "X",
                      lambda a: _attention(g, a, "layer/0/SelfAttention", drop, position_bias=bias))
        x = _sublayer(g, x, 1, "ffn", "X", lambda a: _ffn(g, flags, a, "layer/1", drop))  # (B, T_enc, d)
    enc = _stack_output(g, "encoder", x, drop)

    dids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y, dbias = _stack_input(g, "decoder", dids, drop, buckets, owner=features, encoder=False)
    with g.repeat("decoder/block", L_dec, label="decoder block", carry=y, role=R.STACK, length=T_dec):
        y = _sublayer(g, y, 0, "attn", "Y", lambda a: _attention(g, a, "layer/0/SelfAttention", drop,
                                                                 causal=True, position_bias=dbias))
        y = _sublayer(g, y, 1, "cross", "Y", lambda a: _attention(g, a, "layer/1/EncDecAttention", drop, memory=enc))
        y = _sublayer(g, y, 2, "ffn", "Y", lambda a: _ffn(g, flags, a, "layer/2", drop))  # (B, T_dec, d)
    y = _stack_output(g, "decoder", y, drop)
    if flags["head"] == "none":
        return g.build(output=y, flags=dict(flags))
    if flags["head_scale"]:
        y = g.op("lm_head/rescale", ops.Scale(d ** sympy.Rational(-1, 2)), y, role=R.HEAD_SCALE,
                 label="Y × d^-1/2")
    return lm_head(g, flags, y)
