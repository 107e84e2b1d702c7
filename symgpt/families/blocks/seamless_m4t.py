"""SeamlessM4T and SeamlessM4T v2 speech-to-text (Seamless Communication 2023; transformers'
``SeamlessM4TForSpeechToText``, ``SeamlessM4Tv2ForSpeechToText``): a w2v-BERT 2.0 Conformer speech
encoder (held: its parameters declared at transformers' module paths, not run) and a pre-LN
Transformer text decoder counted given the encoder's output (B, T_enc, d) (transformers'
``encoder_outputs``).

The speech encoder (``speech_encoder``): ``feature_projection`` (a LayerNorm of the f input features,
f -> d with bias); L_a Conformer layers of two feed-forwards (d -> d_ff_a -> d, biases; each with a
LayerNorm before), self-attention (a LayerNorm; q, k, v, out with biases; "relative": linear_pos
without bias and pos_bias_u, pos_bias_v of h_a × d/h_a; "relative_key" (v2): a distance_embedding
of left + right + 1 rows of d/h_a; "rotary": nothing more), a convolution module (a LayerNorm,
pointwise_conv1 d -> 2·d, a depthwise conv of kernel K, a BatchNorm (v1) or LayerNorm (v2) of d,
pointwise_conv2 d -> d; no biases) and a final LayerNorm; the encoder's LayerNorm; an
``intermediate_ffn`` (d -> d_ff_a -> d); with add_adapter, n adapter layers (residual_layer_norm,
residual_conv d -> 2·d of kernel k with bias, self_attn_layer_norm, self_attn_conv the same,
q, k, v, out with biases, ffn_layer_norm, a feed-forward d -> d_ff_a -> d); ``inner_layer_norm``.

The text decoder (``text_decoder``): the token table ``shared`` (× √d with scale_embedding) plus
sinusoidal positions (a buffer), L pre-LN layers (causal self-attention, cross-attention, an FFN
fc1 -> act -> fc2 with biases), a final LayerNorm, ``lm_head`` tied to ``shared``.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, L_a, N_aud, T_dec, T_enc, V, d, d_ff, d_ff_a, h, h_a
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import attention
from .bart import bart_attention_spec, bart_ffn_spec
from .ffn import ffn
from .held_audio import held, layer_norm, linear, one, refuse_audio


def _ffn(g, path):
    linear(g, f"{path}/intermediate_dense", d, d_ff_a, True)
    linear(g, f"{path}/output_dense", d_ff_a, d, True)


def _attn(g, path):
    for n in ("linear_q", "linear_k", "linear_v", "linear_out"):
        linear(g, f"{path}/{n}", d, d, True)


def _conv(g, path, c_in, c_out, kernel, bias, label):
    held(g, path, ops.Conv1d(c_in, c_out, sympy.Integer(kernel), bias=bias), c_in, label)


def _conformer_layer(g, flags):
    dh = d / h_a
    layer_norm(g, "ffn1_layer_norm", d)
    _ffn(g, "ffn1")
    layer_norm(g, "self_attn_layer_norm", d)
    _attn(g, "self_attn")
    if flags["audio_pos"] == "relative":
        linear(g, "self_attn/linear_pos", d, d, False)
        for n in ("pos_bias_u", "pos_bias_v"):
            held(g, f"self_attn/{n}", ops.Embedding(h_a, dh), dh, n)
    elif flags["audio_pos"] == "relative_key":
        held(g, "self_attn/distance_embedding", ops.Embedding(sympy.Integer(flags["audio_pos_rows"]), dh), dh,
             "distance_embedding")
    layer_norm(g, "conv_module/layer_norm", d)
    _conv(g, "conv_module/pointwise_conv1", d, 2 * d, 1, False, "pointwise_conv1")
    held(g, "conv_module/depthwise_conv", ops.Conv1d(one(), d, sympy.Integer(flags["audio_conv_kernel"]), bias=False),
         one(), "depthwise_conv")
    layer_norm(g, "conv_module/depthwise_norm", d, "BatchNorm (v1) or LayerNorm (v2)")
    _conv(g, "conv_module/pointwise_conv2", d, d, 1, False, "pointwise_conv2")
    layer_norm(g, "ffn2_layer_norm", d)
    _ffn(g, "ffn2")
    layer_norm(g, "final_layer_norm", d)


def _encoder(g, flags):
    e, f_in = "speech_encoder", flags["feat_in"]
    g.require("integer", d / h_a, "d must be divisible by h_a (the speech encoder's heads)",
              id="audio_heads_divide_width")
    layer_norm(g, f"{e}/feature_projection/layer_norm", f_in)
    linear(g, f"{e}/feature_projection/projection", f_in, d, True)
    with g.repeat(f"{e}/encoder/layers", L_a, label="Conformer layer (held)", role=R.STACK, length=one()):
        _conformer_layer(g, flags)
    layer_norm(g, f"{e}/encoder/layer_norm", d)
    _ffn(g, f"{e}/intermediate_ffn")
    if flags["adapter_layers"]:
        k = flags["adapter_kernel"]
        with g.repeat(f"{e}/adapter/layers", sympy.Integer(flags["adapter_layers"]), label="adapter layer (held)",
                      role=R.STACK, length=one()):
            for n in ("residual", "self_attn"):
                layer_norm(g, f"{n}_layer_norm", d)
                _conv(g, f"{n}_conv", d, 2 * d, k, True, f"{n}_conv")
            _attn(g, "self_attn")
            layer_norm(g, "ffn_layer_norm", d)
            _ffn(g, "ffn")
    layer_norm(g, f"{e}/inner_layer_norm", d)
    refuse_audio(g, N_aud, "SeamlessM4T")


def _layer(g, y, memory, flags, drop):
    a = g.op("self_attn_layer_norm", ops.LayerNorm(d), y, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = attention(g, a, bart_attention_spec("self_attn", d / h, drop, causal=True))
    y = g.op("self_attn_add", ops.Add(), y, o, role=R.ATTENTION_RESIDUAL, label="Y + attn_out")
    a = g.op("cross_attention_layer_norm", ops.LayerNorm(d), y, role=R.CROSS_NORM, label="LayerNorm_cross")
    o = attention(g, a, bart_attention_spec("cross_attention", d / h, drop), memory=memory)
    y = g.op("cross_attention_add", ops.Add(), y, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
    a = g.op("ffn_layer_norm", ops.LayerNorm(d), y, role=R.FFN_NORM, label="LayerNorm_ffn")
    f = ffn(g, a, bart_ffn_spec(flags, drop))
    return g.op("ffn_add", ops.Add(), y, f, role=R.FFN_RESIDUAL, label="Y + ffn_out")


def build(flags, bound, name="seamless_m4t"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    _encoder(g, flags)
    mem = g.input("encoder_hidden_states", (B, T_enc, d), dtype="act", label="the encoder's output (given)",
                  role=R.AUDIO)                                                               # (B, T_enc, d)
    p = "text_decoder"
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = g.op("shared", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    if flags["embed_scale"]:
        y = g.op(f"{p}/embed_scale", ops.Scale(sympy.sqrt(d)), y, role=R.EMBEDDING_SCALE, label="tok_emb × √d")
    pos = g.op(f"{p}/embed_positions", ops.SinusoidalPositions(d), ids, role=R.POSITION_EMBEDDING, label="sinusoids")
    y = g.op(f"{p}/add", ops.Add(), y, pos, role=R.EMBEDDING_ADD, label="Y0")                  # (B, T_dec, d)
    if drop:
        y = g.op(f"{p}/dropout", ops.Dropout(), y, role=R.DROPOUT)
    with g.repeat(f"{p}/layers", L, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        y = _layer(g, y, mem, flags, drop)                                                    # (B, T_dec, d)
    y = g.op(f"{p}/layer_norm", ops.LayerNorm(d), y, role=R.FINAL_NORM, label="LayerNorm_dec")
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie={"weight": g.param("shared")},
                  role=R.HEAD, label="logits")                                                # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
