"""SpeechT5 (Ao et al. 2022, "SpeechT5: Unified-Modal Encoder-Decoder Pre-Training for Spoken
Language Processing"; transformers' ``SpeechT5ForSpeechToText``): a speech encoder held (its
parameters declared at transformers' module paths, not run) beside the text decoder, which
``blocks/seq2seq_decoder.py`` builds over token ids (post-LN layers, sinusoidal positions, each
layer's cross-attention held: transformers runs it only with ``encoder_hidden_states``).

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

from functools import partial

import sympy

from ... import ops
from ...core.symbols import L_a, N_aud, d, d_ff_a, h_a
from ...graph import roles as R
from .held_audio import held, layer_norm, linear, one, refuse_audio
from .seq2seq_decoder import build as decoder_build


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


def build(flags, bound, name="speecht5"):
    return decoder_build(flags, bound, name=name, held=partial(_encoder, flags=flags))
