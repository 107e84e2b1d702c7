"""Speech2Text (Wang et al. 2020, "fairseq S2T"; transformers' ``Speech2TextForConditionalGeneration``),
declared on the op catalog with transformers' module names.

The encoder reads filterbank features (B, frames, N_mel) (``input_feat_per_channel`` ×
``input_channels`` numbers a frame): moved channels first, ``conv_layers`` 1-D convolutions of
stride 2 (the first N_mel -> conv_channels, the last -> 2·d), each followed by a GLU over the
channels (halving them), moved channels last: T_enc = frames / 2^conv_layers positions. The
result (× √d when ``scale_embedding``) plus sinusoidal positions (a buffer, no parameters; read
from the subsampled padding mask), L pre-LN layers (self-attention with biases, an MLP), a final
LayerNorm. The decoder: token embeddings (× √d) plus sinusoidal positions, L_dec pre-LN layers
(causal self-attention, cross-attention, MLP), a final LayerNorm and ``lm_head`` tied to the
token table.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, L_dec, N_mel, T_dec, T_enc, V, d, h
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import attention
from .bart import bart_attention_spec, bart_ffn_spec
from .ffn import ffn


def _layer(g, x, flags, drop, memory=None, causal=False):
    a = g.op("self_attn_layer_norm", ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = attention(g, a, bart_attention_spec("self_attn", d / h, drop, causal=causal))
    x = g.op("self_attn_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    if memory is not None:
        a = g.op("encoder_attn_layer_norm", ops.LayerNorm(d), x, role=R.CROSS_NORM, label="LayerNorm_cross")
        o = attention(g, a, bart_attention_spec("encoder_attn", d / h, drop), memory=memory)
        x = g.op("encoder_attn_add", ops.Add(), x, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
    a = g.op("final_layer_norm", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")
    f = ffn(g, a, bart_ffn_spec(flags, drop))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def _embed(g, stack, x, ids, flags, drop):
    """× √d (scale_embedding), + sinusoidal positions of ids' length, dropout."""
    if flags["embed_scale"]:
        x = g.op(f"model/{stack}/embed_scale", ops.Scale(sympy.sqrt(d)), x, role=R.EMBEDDING_SCALE,
                 label="× √d")
    pos = g.op(f"model/{stack}/embed_positions", ops.SinusoidalPositions(d), ids, role=R.POSITION_EMBEDDING,
               label="sinusoids")                                                             # (T, d)
    x = g.op(f"model/{stack}/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="+ positions")
    return g.op(f"model/{stack}/dropout", ops.Dropout(), x, role=R.DROPOUT) if drop else x


def _subsampler(g, flags):
    n, k, c = (sympy.Integer(flags[f]) for f in ("conv_layers", "conv_kernel", "conv_channels"))
    feats = g.input("input_features", (B, 2 ** n * T_enc, N_mel), dtype="act", label="filterbank frames",
                    role=R.AUDIO)                                                             # (B, frames, N_mel)
    x = g.op("model/encoder/conv/channels_first", ops.ChannelsLast(), feats, role=R.AUDIO_TRANSPOSE,
             label="channels first")                                                          # (B, N_mel, frames)
    c_in = N_mel
    for i in range(int(n)):
        c_out = c if i < n - 1 else 2 * d
        x = g.op(f"model/encoder/conv/conv_layers/{i}", ops.Conv1d(c_in, c_out, k, sympy.Integer(2)), x,
                 role=R.AUDIO_CONV, label=f"conv{i + 1} (k={k}, stride 2)")
        x = g.op(f"model/encoder/conv/glu_{i}", ops.GLU(), x, role=R.AUDIO_ACT, label="GLU")  # (B, c_out/2, ·)
        c_in = c_out / 2
    return g.op("model/encoder/conv/channels_last", ops.ChannelsLast(), x, role=R.AUDIO_TRANSPOSE,
                label="frames")                                                               # (B, T_enc, d)


def build(flags, bound, name="speech_to_text"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    x = _subsampler(g, flags)
    mask = g.input("attention_mask", (B, T_enc), label="padding mask (subsampled)", role=R.EXTRA_IDS)
    x = _embed(g, "encoder", x, mask, flags, drop)
    with g.repeat("model/encoder/layers", L, label="encoder layer", carry=x, role=R.STACK, length=T_enc):
        x = _layer(g, x, flags, drop)                                                         # (B, T_enc, d)
    enc = g.op("model/encoder/layer_norm", ops.LayerNorm(d), x, role=R.FINAL_NORM, label="LayerNorm_enc")
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = g.op("model/decoder/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    y = _embed(g, "decoder", y, ids, flags, drop)
    with g.repeat("model/decoder/layers", L_dec, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        y = _layer(g, y, flags, drop, memory=enc, causal=True)                               # (B, T_dec, d)
    y = g.op("model/decoder/layer_norm", ops.LayerNorm(d), y, role=R.FINAL_NORM, label="LayerNorm_dec")
    if flags["head"] == "none":
        return g.build(output=y, flags=dict(flags))
    tie = {"weight": g.param("model/decoder/embed_tokens")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie, role=R.HEAD,
                  label="logits")                                                             # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
