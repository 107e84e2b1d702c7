"""Granite Speech's encoder and projector held (counted, not run), where transformers cannot run
the config on audio (the Q-Former's encoder_hidden_size is not the encoder's hidden_dim, or
window_size is not a multiple of downsample_rate): their parameters at transformers' module paths.

The encoder: input_linear (input_dim -> d_a, bias); L_a Conformer layers of two half-step
feed-forwards (LayerNorm, d_a -> m·d_a -> d_a with biases), attention (LayerNorm, to_q and to_kv
without bias, to_out with bias, a relative-position table of 2·max_pos_emb + 1 rows of dim_head),
a convolution module (LayerNorm, a 1×1 up_conv d_a -> 2·e·d_a with bias, a depthwise conv of
kernel K without bias, a BatchNorm's weight and bias, a 1×1 down_conv e·d_a -> d_a with bias) and a
post LayerNorm; the CTC heads out (d_a -> o) and out_mid (o -> d_a), with biases. The projector: a
learned query (n_q × d_q), a LayerNorm, L_q BLIP-2 Q-Former layers (self-attention and its
LayerNorm, a feed-forward d_q -> f_q -> d_q and its LayerNorm; every c-th layer a cross-attention
whose keys and values read rows of d_enc), and linear (d_q -> d) with bias.
"""

from __future__ import annotations


import sympy

from ... import ops
from ...core.symbols import L_a, N_aud, d, d_a
from ...graph import roles as R
from .held_audio import held, layer_norm, linear, one


def _ffn(g, path, width, mult):
    layer_norm(g, f"{path}/pre_norm", width)
    linear(g, f"{path}/up_proj", width, mult * width, True)
    linear(g, f"{path}/down_proj", mult * width, width, True)


def _encoder(g, flags):
    e = "encoder"
    inner, dh, mult = flags["audio_heads"] * flags["audio_head_dim"], flags["audio_head_dim"], flags["audio_ff_mult"]
    conv = flags["audio_conv_expansion"] * d_a
    linear(g, f"{e}/input_linear", flags["audio_input_dim"], d_a, True)
    with g.repeat(f"{e}/layers", L_a, label="Conformer layer (held)", role=R.STACK, length=one()):
        _ffn(g, "ff1", d_a, mult)
        layer_norm(g, "attn/pre_norm", d_a)
        linear(g, "attn/to_q", d_a, inner, False)
        linear(g, "attn/to_kv", d_a, 2 * inner, False)
        linear(g, "attn/to_out", inner, d_a, True)
        rows = 2 * flags["audio_max_pos"] + 1
        held(g, "attn/rel_pos_emb", ops.Embedding(sympy.Integer(rows), dh), dh, "relative positions")
        layer_norm(g, "conv/norm", d_a)
        linear(g, "conv/up_conv", d_a, 2 * conv, True, "up_conv 1×1")
        linear(g, "conv/depth_conv/conv", flags["audio_conv_kernel"], conv, False, "depthwise conv")
        layer_norm(g, "conv/batch_norm", conv, "batch_norm (weight, bias)")
        linear(g, "conv/down_conv", conv, d_a, True, "down_conv 1×1")
        _ffn(g, "ff2", d_a, mult)
        layer_norm(g, "post_norm", d_a)
    linear(g, f"{e}/out", d_a, flags["audio_ctc_dim"], True)
    linear(g, f"{e}/out_mid", flags["audio_ctc_dim"], d_a, True)


def _projector(g, flags):
    p, dq, fq, L = "projector", flags["qformer_hidden"], flags["qformer_ffn"], flags["qformer_layers"]
    held(g, f"{p}/query", ops.AddPositions(flags["qformer_queries"], dq), dq, "learned queries")
    layer_norm(g, f"{p}/qformer/layernorm", dq)
    cross = len(range(0, L, flags["qformer_cross_every"]))
    with g.repeat(f"{p}/qformer/encoder/layer", sympy.Integer(L), label="Q-Former layer (held)", role=R.STACK,
                  length=one()):
        for n in ("query", "key", "value"):
            linear(g, f"attention/attention/{n}", dq, dq, True)
        linear(g, "attention/output/dense", dq, dq, True)
        layer_norm(g, "attention/output/LayerNorm", dq)
        linear(g, "intermediate_query/dense", dq, fq, True)
        linear(g, "output_query/dense", fq, dq, True)
        layer_norm(g, "output_query/LayerNorm", dq)
    with g.repeat(f"{p}/qformer/encoder/crossattention", sympy.Integer(cross), label="Q-Former cross-attention (held)",
                  role=R.STACK, length=one()):
        linear(g, "attention/query", dq, dq, True)
        for n in ("key", "value"):
            linear(g, f"attention/{n}", flags["qformer_encoder_width"], dq, True)
        linear(g, "output/dense", dq, dq, True)
        layer_norm(g, "output/LayerNorm", dq)
    linear(g, f"{p}/linear", dq, d, True)


def tower(g, x, flags):
    """The encoder and projector held; audio refused (N_aud must be 0)."""
    _encoder(g, flags)
    _projector(g, flags)
    g.require("le", N_aud, "transformers cannot run this Granite Speech config on audio (encoder_hidden_size is not "
              "the encoder's hidden_dim, or window_size not a multiple of downsample_rate): N_aud must be 0",
              id="audio_cannot_run")
    return x
