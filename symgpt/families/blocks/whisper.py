"""Whisper (Radford et al. 2022, "Robust Speech Recognition via Large-Scale Weak Supervision"),
declared on the op catalog with transformers' ``WhisperForConditionalGeneration`` module names.

The encoder reads log-mel features (B, N_mel, 2·T_enc): two 1-D convolutions of kernel 3 with
GELU (conv1: N_mel -> d, stride 1; conv2: d -> d, stride 2, halving the frames), the frames moved
channels last, the first T_enc rows of a (T_src, d) sinusoidal position table added (transformers'
``embed_positions``: an ``nn.Embedding`` frozen with ``requires_grad_(False)``, a parameter of the
checkpoint: counted, never trained), L pre-LN layers (self-attention, GELU MLP) and a final
LayerNorm. The decoder: token embeddings (× √d when ``scale_embedding``) plus a learned table of
T_max rows, L_dec pre-LN layers (causal self-attention, cross-attention over the encoder's output,
MLP), a final LayerNorm and ``proj_out`` tied to the token table. Every attention's k_proj has no
bias.

Audio: 16 kHz samples, a hop of 160 (``WhisperFeatureExtractor``): 100 mel frames per second;
conv2's stride 2 leaves T_enc = frames / 2 = 50 positions per second. transformers pads (or
truncates) every input to 30 s: 3000 frames, T_enc = T_src = 1500.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, L_dec, N_mel, T_dec, T_enc, T_max, T_src, V, d, d_ff, h
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Projections, attention
from .bart import bart_attention_spec, bart_ffn_spec
from .encoder_layers import activation
from .ffn import FFNSpec, ffn

#: mel frames per second of 16 kHz audio at WhisperFeatureExtractor's hop of 160 samples
FRAMES_PER_SECOND = sympy.Integer(16000) / 160
#: the seconds every input is padded (or cut) to by WhisperFeatureExtractor (its chunk_length)
PADDED_SECONDS = 30


def encoder_positions(seconds) -> sympy.Expr:
    """T_enc of *seconds* of audio fed unpadded: 100 frames a second, halved by conv2's stride."""
    return FRAMES_PER_SECOND * seconds / 2


def _layer(g, x, flags, drop, memory=None, causal=False):
    spec = bart_attention_spec("self_attn", d / h, drop, causal=causal,
                               projections=Projections(bias=True, k_bias=False))
    a = g.op("self_attn_layer_norm", ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = attention(g, a, spec)
    x = g.op("self_attn_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    if memory is not None:
        cross = bart_attention_spec("encoder_attn", d / h, drop, projections=Projections(bias=True, k_bias=False))
        a = g.op("encoder_attn_layer_norm", ops.LayerNorm(d), x, role=R.CROSS_NORM, label="LayerNorm_cross")
        o = attention(g, a, cross, memory=memory)
        x = g.op("encoder_attn_add", ops.Add(), x, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
    a = g.op("final_layer_norm", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")
    f = ffn(g, a, bart_ffn_spec(flags, drop))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def _encoder_layer(g, x, flags, drop, dims):
    """A pre-LN encoder layer of width dims[0], dims[1] heads, MLP width dims[3]."""
    width, heads, _, ff = dims
    spec = AttentionSpec(width, heads, dh=width / heads, module="self_attn",
                         names={"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj",
                                "o": "self_attn/out_proj"},
                         causal=False, dropout=drop, projections=Projections(bias=True, k_bias=False))
    a = g.op("self_attn_layer_norm", ops.LayerNorm(width), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = attention(g, a, spec)
    x = g.op("self_attn_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    a = g.op("final_layer_norm", ops.LayerNorm(width), x, role=R.FFN_NORM, label="LayerNorm_ffn")
    f = ffn(g, a, FFNSpec(width, ff, activation(flags["activation"]), bias=True, dropout=drop, act_dropout=drop,
                          names={"up": "fc1", "act": "activation_fn", "down": "fc2",
                                 "act_dropout": "activation_fn_dropout", "dropout": "fc2_dropout"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def audio_encoder(g, flags, drop, *, prefix="model/encoder", dims=(d, h, L, d_ff), length=T_enc, batch=B, pool=None):
    """Whisper's audio encoder over (batch, N_mel, 2·length) log-mel features: (batch, length,
    width), under *prefix* (Whisper's ``model/encoder``; Qwen2-Audio's ``audio_tower``). *pool*
    (``g, x -> x``): an op between the last layer and the final LayerNorm (Qwen2-Audio's pooling)."""
    width, _, layers, _ = dims
    act = ops.GELU(approximate="none")  # WhisperEncoder: nn.functional.gelu, whatever activation_function says
    mel = g.input("input_features", (batch, N_mel, 2 * length), dtype="act", label="log-mel frames", role=R.AUDIO)
    x = g.op(f"{prefix}/conv1", ops.Conv1d(N_mel, width, sympy.Integer(3)), mel, role=R.AUDIO_CONV,
             label="conv1 (k=3)")                                                            # (B, d, 2·T_enc)
    x = g.op(f"{prefix}/conv1_act", act, x, role=R.AUDIO_ACT, label="GELU")
    x = g.op(f"{prefix}/conv2", ops.Conv1d(width, width, sympy.Integer(3), sympy.Integer(2)), x, role=R.AUDIO_CONV,
             label="conv2 (k=3, stride 2)")                                                  # (B, d, T_enc)
    x = g.op(f"{prefix}/conv2_act", act, x, role=R.AUDIO_ACT, label="GELU")
    x = g.op(f"{prefix}/permute", ops.ChannelsLast(), x, role=R.AUDIO_TRANSPOSE, label="frames")  # (B, T_enc, d)
    if length != T_src:
        g.require("le", length - T_src, f"{length} must not exceed T_src, the rows of the encoder's position table",
                  id="audio_within_positions")
    x = g.op(f"{prefix}/embed_positions", ops.AddPositionRows(T_src, width), x, role=R.POSITION_EMBEDDING,
             label="+ sinusoids (frozen)")                                                    # (B, T_enc, d)
    if drop:
        x = g.op(f"{prefix}/dropout", ops.Dropout(), x, role=R.DROPOUT)
    with g.repeat(f"{prefix}/layers", layers, label="encoder layer", carry=x, role=R.STACK, length=length):
        x = _encoder_layer(g, x, flags, drop, dims)                                            # (B, T_enc, d)
    if pool is not None:
        x = pool(g, x)
    return g.op(f"{prefix}/layer_norm", ops.LayerNorm(width), x, role=R.FINAL_NORM, label="LayerNorm_enc")


def encoder(g, flags, drop):
    """Whisper's encoder: (B, T_enc, d)."""
    return audio_encoder(g, flags, drop)


def build(flags, bound, name="whisper"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    enc = encoder(g, flags, drop)
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = g.op("model/decoder/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    if flags["embed_scale"]:
        y = g.op("model/decoder/embed_scale", ops.Scale(sympy.sqrt(d)), y, role=R.EMBEDDING_SCALE,
                 label="tok_emb × √d")
    g.require("le", T_dec - T_max, "T_dec must not exceed T_max, the decoder's position table (max_target_positions)",
              id="length_within_positions")
    pos = g.op("model/decoder/embed_positions", ops.PositionEmbedding(T_max, d), ids, role=R.POSITION_EMBEDDING,
               label="pos_emb")                                                               # (T_dec, d)
    y = g.op("model/decoder/add", ops.Add(), y, pos, role=R.EMBEDDING_ADD, label="Y0")       # (B, T_dec, d)
    if drop:
        y = g.op("model/decoder/dropout", ops.Dropout(), y, role=R.DROPOUT)
    with g.repeat("model/decoder/layers", L_dec, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        y = _layer(g, y, flags, drop, memory=enc, causal=True)                               # (B, T_dec, d)
    y = g.op("model/decoder/layer_norm", ops.LayerNorm(d), y, role=R.FINAL_NORM, label="LayerNorm_dec")
    if flags["head"] == "none":
        return g.build(output=y, flags=dict(flags))
    tie = {"weight": g.param("model/decoder/embed_tokens")} if flags["tied"] else None
    logits = g.op("proj_out", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie, role=R.HEAD,
                  label="logits")                                                             # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
