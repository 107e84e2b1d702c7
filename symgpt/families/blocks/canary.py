"""Canary and Cohere ASR (transformers' ``CanaryForConditionalGeneration``,
``CohereAsrForConditionalGeneration``): a FastConformer speech encoder (``ParakeetEncoder``, NVIDIA
NeMo's; held: its parameters declared at transformers' module paths, not run) and a pre-LN
Transformer decoder whose forward is counted given the encoder's output (B, T_enc, d_a), as
transformers' ``encoder_outputs`` argument (and ``generate`` after its first step) passes it.

The encoder (``model/encoder``): ``subsampling``, a Conv2d 1 -> C (k×k, stride s, bias) and n - 1
pairs of a depthwise Conv2d C -> C (k×k, groups C, bias) and a pointwise Conv2d C -> C (1×1, bias),
n = log2(subsampling_factor), then ``linear`` (C·(N_mel / s^n) -> d_a, bias); L_a Conformer layers:
two feed-forwards (linear1 d_a -> d_ff_a, linear2 back; biases with attention_bias), self-attention
(q, k, v, o with attention_bias; relative_k_proj without bias; the content and position biases
bias_u, bias_v of h_a × d_a/h_a), a convolution module (pointwise_conv1 d_a -> 2·d_a, a depthwise
conv of kernel K, a BatchNorm's weight and bias, pointwise_conv2 d_a -> d_a; biases with
convolution_bias) and five LayerNorms.

The decoder (``model/decoder``): token embeddings plus positions (Canary: fixed sinusoids, a buffer;
Cohere ASR: a learned table of T_max rows), ``embedding_layernorm``, L pre-LN layers (causal
self-attention, cross-attention over the encoder's output, an MLP fc1 -> act -> fc2 with biases),
a final LayerNorm and ``proj_out`` (d -> V with a bias; its weight tied to the token table where
tie_word_embeddings). Cohere ASR maps the encoder's output to d first (``proj``, d_a -> d, bias).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, L_a, N_aud, T_dec, T_enc, T_max, V, d, d_a, d_ff, d_ff_a, d_head, h, h_a, h_kv
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .held_audio import held, layer_norm, linear, one, refuse_audio


def _conv(g, path, c_in, c_out, kernel, bias, label):
    held(g, path, ops.Conv1d(c_in, c_out, sympy.Integer(kernel), bias=bias), c_in, label)


def _encoder(g, flags):
    e, c, k = "model/encoder", flags["sub_channels"], flags["sub_kernel"]
    g.require("integer", d_a / h_a, "d_a must be divisible by h_a (the encoder's heads)", id="audio_heads_divide_width")
    _conv(g, f"{e}/subsampling/layers/0", 1, c, k * k, True, f"Conv2d 1 -> {c} ({k}×{k})")
    if flags["sub_layers"] > 1:
        with g.repeat(f"{e}/subsampling/pairs", sympy.Integer(flags["sub_layers"] - 1),
                      label="depthwise + pointwise Conv2d (held)", role=R.STACK, length=one()):
            _conv(g, "depthwise", 1, c, k * k, True, f"depthwise Conv2d ({k}×{k})")
            _conv(g, "pointwise", c, c, 1, True, "pointwise Conv2d (1×1)")
    linear(g, f"{e}/subsampling/linear", c * flags["sub_freq"], d_a, True)
    ab, cb = flags["audio_attn_bias"], flags["audio_conv_bias"]
    with g.repeat(f"{e}/layers", L_a, label="Conformer layer (held)", role=R.STACK, length=one()):
        for ff in ("feed_forward1", "feed_forward2"):
            linear(g, f"{ff}/linear1", d_a, d_ff_a, ab)
            linear(g, f"{ff}/linear2", d_ff_a, d_a, ab)
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            linear(g, f"self_attn/{n}", d_a, d_a, ab)
        linear(g, "self_attn/relative_k_proj", d_a, d_a, False)
        for n in ("bias_u", "bias_v"):
            held(g, f"self_attn/{n}", ops.Embedding(h_a, d_a / h_a), d_a / h_a, n)
        _conv(g, "conv/pointwise_conv1", d_a, 2 * d_a, 1, cb, "pointwise_conv1")
        held(g, "conv/depthwise_conv", ops.Conv1d(one(), d_a, sympy.Integer(flags["audio_conv_kernel"]), bias=cb),
             one(), "depthwise_conv")
        layer_norm(g, "conv/norm", d_a, "BatchNorm (weight, bias)")
        _conv(g, "conv/pointwise_conv2", d_a, d_a, 1, cb, "pointwise_conv2")
        for n in ("norm_feed_forward1", "norm_self_att", "norm_conv", "norm_feed_forward2", "norm_out"):
            layer_norm(g, n, d_a)
    refuse_audio(g, N_aud, "Canary and Cohere ASR")


def _attn(module, flags, drop, causal):
    names = {s: f"{module}/{s}_proj" for s in ("q", "k", "v", "o")}
    return AttentionSpec(d, h, dh=d_head, kv_heads=h_kv if flags["gqa"] else None, module=module, names=names, causal=causal, dropout=drop,
                         projections=Projections(bias=bool(flags["attn_bias"])))


def _layer(g, y, memory, flags, drop):
    a = g.op("input_layernorm", ops.LayerNorm(d), y, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = attention(g, a, _attn("self_attn", flags, drop, True))
    y = g.op("self_attn_add", ops.Add(), y, o, role=R.ATTENTION_RESIDUAL, label="Y + attn_out")
    a = g.op("post_attention_layernorm", ops.LayerNorm(d), y, role=R.CROSS_NORM, label="LayerNorm_cross")
    o = attention(g, a, _attn("encoder_attn", flags, drop, False), memory=memory)
    y = g.op("encoder_attn_add", ops.Add(), y, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
    a = g.op("final_layernorm", ops.LayerNorm(d), y, role=R.FFN_NORM, label="LayerNorm_ffn")
    f = ffn(g, a, FFNSpec(d, d_ff, activation(flags["activation"]), bias=True, dropout=drop,
                          names={"up": "mlp/fc1", "act": "mlp/act", "down": "mlp/fc2", "dropout": "mlp/dropout"}))
    return g.op("ffn_add", ops.Add(), y, f, role=R.FFN_RESIDUAL, label="Y + ffn_out")


def build(flags, bound, name="canary"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d_head, "d_head must be a whole number", id="head_width_whole")
    _encoder(g, flags)
    p = "model/decoder"
    width = d_a if flags["enc_proj"] else d  # without a projection the encoder's width is d (required below)
    mem = g.input("encoder_hidden_states", (B, T_enc, width), dtype="act", label="the encoder's output (given)",
                  role=R.AUDIO)                                                               # (B, T_enc, d_a)
    if flags["enc_proj"]:
        mem = g.op(f"{p}/proj", ops.Linear(d_a, d, bias=True), mem, role=R.AUDIO_PROJECTOR, label="proj d_a -> d")
    else:
        for diff, side in ((d_a - d, "above"), (d - d_a, "below")):
            g.require("le", diff, f"the encoder's width d_a must equal d (no projection between them), not {side} it",
                      id=f"audio_width_not_{side}_d")
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = g.op(f"{p}/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    if flags["positions"] == "learned":
        g.require("le", T_dec - T_max, "T_dec must not exceed T_max, the decoder's position table",
                  id="length_within_positions")
        pos = g.op(f"{p}/pos_emb", ops.PositionEmbedding(T_max, d), ids, role=R.POSITION_EMBEDDING, label="pos_emb")
    else:
        pos = g.op(f"{p}/pos_emb", ops.SinusoidalPositions(d), ids, role=R.POSITION_EMBEDDING, label="sinusoids")
    y = g.op(f"{p}/add", ops.Add(), y, pos, role=R.EMBEDDING_ADD, label="Y0")                # (B, T_dec, d)
    y = g.op(f"{p}/embedding_layernorm", ops.LayerNorm(d), y, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    with g.repeat(f"{p}/layers", L, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        y = _layer(g, y, mem, flags, drop)                                                    # (B, T_dec, d)
    y = g.op(f"{p}/norm", ops.LayerNorm(d), y, role=R.FINAL_NORM, label="LayerNorm_dec")
    tie = {"weight": g.param(f"{p}/embed_tokens")} if flags["tied"] else None
    logits = g.op("proj_out", ops.Linear(d, V, bias=True, tag="lm_head"), y, tie=tie, role=R.HEAD,
                  label="logits")                                                             # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
