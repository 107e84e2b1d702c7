"""Moonshine (Jeffries et al. 2024, "Moonshine: Speech Recognition for Live Transcription and Voice
Commands"; transformers' ``MoonshineForConditionalGeneration``), declared with transformers'
module names.

The encoder reads raw 16 kHz samples (B, S): three unpadded convolutions (conv1: 1 -> d, kernel
127, stride 64, no bias, tanh, a one-group GroupNorm; conv2: d -> 2d, kernel 7, stride 3, GELU;
conv3: 2d -> d, kernel 3, stride 2, GELU), channels last: T_enc = ⌊(⌊(⌊(S-127)/64⌋+1-7)/3⌋+1-3)/2⌋+1
positions, about 41.7 a second; the graph reads the shortest input of T_enc positions, S = 384·T_enc
+ 511 samples (a longer one of the same T_enc runs conv1 and conv2 over a few more positions:
not counted). L pre-LN layers (LayerNorms without
bias; self-attention with an interleaved partial rotary on Q and K, no bias on the output; an MLP
with biases), a final LayerNorm. The decoder: token embeddings, L_dec pre-LN layers (causal
self-attention with the rotary, cross-attention over the encoder's output without it, a gated MLP
whose fused fc1 holds the value and gate halves), a final LayerNorm, ``proj_out`` tied to the
token table.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, L_dec, T_dec, T_enc, V, d, d_ff, h
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn

I = sympy.Integer
#: the input samples of T_enc encoder positions (the shortest such input)
SAMPLES = 384 * T_enc + 511


def _attn(module, flags, drop, causal=False):
    return AttentionSpec(d, h, dh=d / h, module=module,
                         names={"q": f"{module}/q_proj", "k": f"{module}/k_proj", "v": f"{module}/v_proj",
                                "o": f"{module}/o_proj"},
                         causal=causal, dropout=drop, rotary_interleave=True,
                         projections=Projections(bias=bool(flags["attention_bias"]), out_bias=False))


def _sublayer(g, x, norm, role, body, residual_role, label):
    a = g.op(norm, ops.LayerNorm(d, bias=False), x, role=role, label=f"LayerNorm ({norm})")
    return g.op(f"{norm}_add", ops.Add(), x, body(a), role=residual_role, label=label)


def _stem(g):
    # input_values (B, S), unsqueezed to one channel (a view)
    x = g.input("input_values", (B, I(1), SAMPLES), dtype="act", label="16 kHz samples", role=R.AUDIO)
    x = g.op("model/encoder/conv1", ops.Conv1dValid(I(1), d, I(127), I(64), bias=False), x, role=R.AUDIO_CONV,
             label="conv1 (k=127, stride 64)")                                                 # (B, d, 6·T_enc + 7)
    x = g.op("model/encoder/conv1_act", ops.Tanh(), x, role=R.AUDIO_ACT, label="tanh")
    x = g.op("model/encoder/groupnorm", ops.GroupNorm1(d), x, role=R.AUDIO_ACT, label="GroupNorm")
    x = g.op("model/encoder/conv2", ops.Conv1dValid(d, 2 * d, I(7), I(3)), x, role=R.AUDIO_CONV,
             label="conv2 (k=7, stride 3)")                                                    # (B, 2d, 2·T_enc + 1)
    x = g.op("model/encoder/conv2_act", ops.GELU(approximate="none"), x, role=R.AUDIO_ACT, label="GELU")
    x = g.op("model/encoder/conv3", ops.Conv1dValid(2 * d, d, I(3), I(2)), x, role=R.AUDIO_CONV,
             label="conv3 (k=3, stride 2)")                                                    # (B, d, T_enc)
    x = g.op("model/encoder/conv3_act", ops.GELU(approximate="none"), x, role=R.AUDIO_ACT, label="GELU")
    return g.op("model/encoder/permute", ops.ChannelsLast(), x, role=R.AUDIO_TRANSPOSE, label="frames")


def build(flags, bound, name="moonshine"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    rdims = I(flags["rotary_dims"])  # a table of rdims columns: the first rdims of each head rotate
    x = _stem(g)                                                                               # (B, T_enc, d)
    pos = g.input("position_ids", (I(1), T_enc), label="encoder positions", role=R.EXTRA_IDS)
    rot = g.op("model/encoder/rotary_emb", ops.RotaryTable(rdims, sympy.Integer(1)), pos, role=R.ROTARY_TABLE, label="cos, sin")
    enc_act = activation(flags["encoder_activation"])
    with g.repeat("model/encoder/layers", L, label="encoder layer", carry=x, role=R.STACK, length=T_enc):
        x = _sublayer(g, x, "input_layernorm", R.ATTENTION_NORM,
                      lambda a: attention(g, a, _attn("self_attn", flags, drop), rotary=rot),
                      R.ATTENTION_RESIDUAL, "X + attn_out")
        x = _sublayer(g, x, "post_attention_layernorm", R.FFN_NORM,
                      lambda a: ffn(g, a, FFNSpec(d, d_ff, enc_act, bias=True,
                                                  names={"up": "mlp/fc1", "act": "mlp/activation_fn",
                                                         "down": "mlp/fc2"})),
                      R.FFN_RESIDUAL, "X + ffn_out")
    enc = g.op("model/encoder/layer_norm", ops.LayerNorm(d, bias=False), x, role=R.FINAL_NORM, label="LayerNorm_enc")
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)
    y = g.op("model/decoder/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    drot = g.op("model/decoder/rotary_emb", ops.RotaryTable(rdims, sympy.Integer(1)), ids, role=R.ROTARY_TABLE, label="cos, sin")
    dec_act = activation(flags["activation"])
    with g.repeat("model/decoder/layers", L_dec, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        y = _sublayer(g, y, "input_layernorm", R.ATTENTION_NORM,
                      lambda a: attention(g, a, _attn("self_attn", flags, drop, causal=True), rotary=drot),
                      R.ATTENTION_RESIDUAL, "Y + attn_out")
        y = _sublayer(g, y, "post_attention_layernorm", R.CROSS_NORM,
                      lambda a: attention(g, a, _attn("encoder_attn", flags, drop), memory=enc),
                      R.CROSS_RESIDUAL, "Y + cross_out")
        y = _sublayer(g, y, "final_layernorm", R.FFN_NORM,
                      lambda a: ffn(g, a, FFNSpec(d, d_ff, dec_act, bias=True, gated=True, fused_gate_up=True,
                                                  names={"gate_up": "mlp/fc1", "act": "mlp/activation_fn",
                                                         "mul": "mlp/mul", "down": "mlp/fc2"})),
                      R.FFN_RESIDUAL, "Y + ffn_out")
    y = g.op("model/decoder/norm", ops.LayerNorm(d, bias=False), y, role=R.FINAL_NORM, label="LayerNorm_dec")
    if flags["head"] == "none":
        return g.build(output=y, flags=dict(flags))
    tie = {"weight": g.param("model/decoder/embed_tokens")} if flags["tied"] else None
    logits = g.op("proj_out", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie, role=R.HEAD, label="logits")
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
