"""SpeechT5 (Ao et al. 2022, "SpeechT5: Unified-Modal Encoder-Decoder Pre-Training for Spoken
Language Processing"; transformers' ``SpeechT5ForSpeechToText``): a speech encoder held (its
parameters declared at transformers' module paths, not run) and the text decoder, counted given
the encoder's output (B, T_enc, d) (transformers' ``encoder_outputs``): the text prenet's token
embeddings (× √d with scale_embedding) plus sinusoidal positions (a buffer), L post-LN layers
(causal self-attention, cross-attention, a feed-forward intermediate_dense -> act ->
output_dense, all with biases, each followed by its residual add and LayerNorm), no final
LayerNorm, and the postnet's ``lm_head`` tied to the token table where tie_word_embeddings.

The speech encoder (``SpeechT5EncoderWithSpeechPrenet``): the wav2vec 2.0 feature encoder
(``feature_encoder``: n 1-D convolutions of c channels over the raw samples, the first from one
channel; a GroupNorm of c groups after the first (``feat_extract_norm`` "group") or a LayerNorm
after each ("layer")), ``feature_projection`` (LayerNorm of c, c -> d with bias), a
``masked_spec_embed`` of d when SpecAugment is on, ``pos_conv_embed`` (a grouped convolution of
kernel K under weight normalisation: weight_g of K, weight_v of d·(d/G)·K, a bias of d), then
``wrapped_encoder``: a LayerNorm, L_a post-LN layers (q, k, v, out projections with biases, a
LayerNorm, intermediate_dense d -> d_ff_a and output_dense back, both with biases, a final
LayerNorm) and a relative-position table ``pe_k`` of 2·R rows of d/h_a.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, L_a, N_aud, T_dec, T_enc, V, d, d_ff, d_ff_a, h, h_a
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import attention
from .bart import bart_attention_spec
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .held_audio import held, layer_norm, linear, one, refuse_audio


def conv(g, path, c_in, c_out, kernel, bias, label):
    """A 1-D convolution's parameters (weight (c_out, c_in, kernel), a bias), held."""
    held(g, path, ops.Conv1d(c_in, c_out, sympy.Integer(kernel) if isinstance(kernel, int) else kernel,
                             bias=bias), c_in, label)


def feature_encoder(g, prefix, flags, width=d, pos_prefix=None, name="feature_encoder"):
    """wav2vec 2.0's convolutional feature encoder (its module *name*), its projection and its
    convolutional positions (under *pos_prefix*, else *prefix*): SpeechT5's speech prenet,
    Wav2Vec2Model's front, held; *width* the encoder's (d for SpeechT5)."""
    c, n, bias = flags["feat_channels"], flags["feat_layers"], flags["feat_bias"]
    f = f"{prefix}/{name}/conv_layers"
    conv(g, f"{f}/0/conv", 1, c, flags["feat_kernel"], bias, "conv 0 (from the samples)")
    layer_norm(g, f"{f}/0/layer_norm", c, "GroupNorm" if flags["feat_norm"] == "group" else "LayerNorm")
    if n > 1:
        # the other convolutions: c -> c each; their kernels' widths summed (feat_kernel_rest)
        conv(g, f"{f}/rest/conv", c, c, flags["feat_kernel_rest"], False, f"convs 1..{n - 1} (kernels summed)")
        if bias:
            held(g, f"{f}/rest/bias", ops.Embedding(sympy.Integer(n - 1), c), c, "their biases")
        if flags["feat_norm"] == "layer":
            with g.repeat(f"{f}/rest/layer_norm", sympy.Integer(n - 1), label="LayerNorm (held)", role=R.STACK,
                          length=one()):
                layer_norm(g, "layer_norm", c)
    layer_norm(g, f"{prefix}/feature_projection/layer_norm", c)
    linear(g, f"{prefix}/feature_projection/projection", c, width, True)
    if flags["masked_embed"]:
        held(g, f"{prefix}/masked_spec_embed", ops.Embedding(one(), width), width, "masked_spec_embed")
    k, groups = sympy.Integer(flags["pos_conv_kernel"]), sympy.Integer(flags["pos_conv_groups"])
    g.require("integer", width / groups, "the encoder's width must be divisible by pos_conv_groups",
              id="pos_conv_groups_divide_width")
    pos = f"{pos_prefix or prefix}/pos_conv_embed/conv"
    held(g, f"{pos}/weight_g", ops.Embedding(one(), k), k, "weight_g (weight norm)")
    conv(g, pos, width / groups, width, k, True, "weight_v, bias (grouped conv)")


def _encoder(g, flags):
    e = "speecht5/encoder"
    g.require("integer", d / h_a, "d must be divisible by h_a (the encoder's heads)", id="audio_heads_divide_width")
    feature_encoder(g, f"{e}/prenet", flags)
    layer_norm(g, f"{e}/wrapped_encoder/layer_norm", d)
    with g.repeat(f"{e}/wrapped_encoder/layers", L_a, label="speech encoder layer (held)", role=R.STACK,
                  length=one()):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            linear(g, f"attention/{n}", d, d, True)
        layer_norm(g, "layer_norm", d)
        linear(g, "feed_forward/intermediate_dense", d, d_ff_a, True)
        linear(g, "feed_forward/output_dense", d_ff_a, d, True)
        layer_norm(g, "final_layer_norm", d)
    rows = sympy.Integer(2 * flags["rel_positions"])
    held(g, f"{e}/wrapped_encoder/embed_positions/pe_k", ops.Embedding(rows, d / h_a), d / h_a,
         "relative positions (pe_k)")
    refuse_audio(g, N_aud, "SpeechT5")


def _layer(g, y, memory, flags, drop):
    o = attention(g, y, bart_attention_spec("self_attn", d / h, drop, causal=True))
    y = g.op("self_attn_add", ops.Add(), y, o, role=R.ATTENTION_RESIDUAL, label="Y + attn_out")
    y = g.op("self_attn_layer_norm", ops.LayerNorm(d), y, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = attention(g, y, bart_attention_spec("encoder_attn", d / h, drop), memory=memory)
    y = g.op("encoder_attn_add", ops.Add(), y, o, role=R.CROSS_RESIDUAL, label="Y + cross_out")
    y = g.op("encoder_attn_layer_norm", ops.LayerNorm(d), y, role=R.CROSS_NORM, label="LayerNorm_cross")
    f = ffn(g, y, FFNSpec(d, d_ff, activation(flags["activation"]), bias=True, dropout=drop, act_dropout=drop,
                          names={"up": "feed_forward/intermediate_dense", "act": "feed_forward/act",
                                 "down": "feed_forward/output_dense", "act_dropout": "feed_forward/act_dropout",
                                 "dropout": "feed_forward/dropout"}))
    y = g.op("ffn_add", ops.Add(), y, f, role=R.FFN_RESIDUAL, label="Y + ffn_out")
    return g.op("final_layer_norm", ops.LayerNorm(d), y, role=R.FFN_NORM, label="LayerNorm_ffn")


def build(flags, bound, name="speecht5"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    _encoder(g, flags)
    mem = g.input("encoder_hidden_states", (B, T_enc, d), dtype="act", label="the encoder's output (given)",
                  role=R.AUDIO)                                                               # (B, T_enc, d)
    p = "speecht5/decoder/prenet"
    ids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = g.op(f"{p}/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    if flags["embed_scale"]:
        y = g.op(f"{p}/embed_scale", ops.Scale(sympy.sqrt(d)), y, role=R.EMBEDDING_SCALE, label="tok_emb × √d")
    pos = g.op(f"{p}/embed_positions", ops.SinusoidalPositions(d), ids, role=R.POSITION_EMBEDDING, label="sinusoids")
    y = g.op(f"{p}/add", ops.Add(), y, pos, role=R.EMBEDDING_ADD, label="Y0")                  # (B, T_dec, d)
    if drop:
        y = g.op(f"{p}/dropout", ops.Dropout(), y, role=R.DROPOUT)
    with g.repeat("speecht5/decoder/wrapped_decoder/layers", L, label="decoder layer", carry=y, role=R.STACK,
                  length=T_dec):
        y = _layer(g, y, mem, flags, drop)                                                    # (B, T_dec, d)
    tie = {"weight": g.param(f"{p}/embed_tokens")} if flags["tied"] else None
    logits = g.op("text_decoder_postnet/lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie,
                  role=R.HEAD, label="logits")                                                # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
