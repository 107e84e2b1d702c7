"""Kyutai speech-to-text (Kyutai 2025; transformers' ``KyutaiSpeechToTextForConditionalGeneration``): a
decoder over one text token and K audio codebook tokens a position, their embeddings summed
(``ops/codebooks.py``), beside the Mimi codec (held: parameters counted, audio not encoded).

The decoder: Llama's block without biases, a fused gate/up projection (fc1: d -> 2·d_ff, split in
halves), full causal attention, each layer computing its own rotary tables (``rotary_per_layer``),
an lm_head over the V text tokens.

The codec (transformers' ``MimiModel``, flags ``codec_*``): a SEANet encoder (a conv of kernel k from
the audio channels to F filters; per ratio r of the reversed upsampling ratios at width s = F·2^i,
residual blocks (a conv s -> s/compress of the residual kernel, a conv s/compress -> s of kernel 1, an
optional kernel-1 shortcut) and a conv s -> 2s of kernel 2r; a conv of the last kernel to H), a
Transformer of L_c layers (q/k/v/o, two LayerNorms with biases, two layer scales, an MLP H -> I -> H,
no biases), a downsampling conv H -> H of kernel 2·stride (no bias) when the frame rate is resampled,
and the mirror image for decoding (a grouped transposed conv, the Transformer, the SEANet decoder
of transposed convs); the split residual quantizer's input and output projections (H <-> D_vq, kernel
1, no bias) of its semantic and acoustic halves. Every other conv has a bias. The codebooks are
buffers.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, N_aud, T, d
from ...graph import roles as R
from .decoder import build as decoder_build
from .held_audio import held, layer_norm, linear, one, refuse_audio

I = sympy.Integer


def _conv(g, path, n_in, n_out, kernel, bias=True, label="conv"):
    held(g, path, ops.Linear(I(n_in * kernel), I(n_out), bias=bias), I(n_in * kernel), label)


def _resblocks(g, path, dim, f):
    hidden = dim // f["codec_compress"]
    for j in range(f["codec_residual_layers"]):
        _conv(g, f"{path}/{j}/block/1", dim, hidden, f["codec_residual_kernel"], label="residual conv")
        _conv(g, f"{path}/{j}/block/3", hidden, dim, 1, label="residual conv 1")
        if f["codec_conv_shortcut"]:
            _conv(g, f"{path}/{j}/shortcut", dim, dim, 1, label="shortcut conv")


def _transformer(g, path, f):
    H, heads, kv, hd = I(f["codec_hidden"]), I(f["codec_heads"]), I(f["codec_kv_heads"]), I(f["codec_head_dim"])
    bias = bool(f["codec_attention_bias"])
    with g.repeat(f"{path}/layers", I(f["codec_layers"]), label="codec layer (held)", role=R.STACK, length=one()):
        linear(g, "self_attn/q_proj", H, heads * hd, bias)
        linear(g, "self_attn/k_proj", H, kv * hd, bias)
        linear(g, "self_attn/v_proj", H, kv * hd, bias)
        linear(g, "self_attn/o_proj", heads * hd, H, bias)
        linear(g, "mlp/fc1", H, I(f["codec_intermediate"]), False)
        linear(g, "mlp/fc2", I(f["codec_intermediate"]), H, False)
        layer_norm(g, "input_layernorm", H)
        layer_norm(g, "post_attention_layernorm", H)
        for s in ("self_attn_layer_scale", "mlp_layer_scale"):
            held(g, f"{s}/scale", ops.ChannelScale(H), H, s)


def ratios(spec) -> list[int]:
    return [int(r) for r in str(spec).split(",")]


def mimi(g, f, prefix="codec_model"):
    """The Mimi codec's parameters (held) under *prefix*."""
    F, H, k, rs = f["codec_filters"], f["codec_hidden"], f["codec_kernel"], ratios(f["codec_ratios"])
    e = f"{prefix}/encoder/encoder_seanet"
    _conv(g, f"{e}/first", f["codec_channels"], F, k)
    scale = 1
    for i, r in enumerate(reversed(rs)):
        s = scale * F
        _resblocks(g, f"{e}/stage{i}/residual", s, f)
        _conv(g, f"{e}/stage{i}/down", s, 2 * s, 2 * r, label=f"conv stride {r}")
        scale *= 2
    _conv(g, f"{e}/last", scale * F, H, f["codec_last_kernel"])
    _transformer(g, f"{prefix}/encoder/encoder_transformer", f)
    stride = f["codec_latent_stride"]
    if stride:  # the frame rate resampled: transformers' frame_rate != encodec_frame_rate
        _conv(g, f"{prefix}/encoder/downsample", H, H, 2 * stride, bias=False, label="downsample")
        # a grouped transposed conv: weight (H, H/groups, 2·stride), no bias
        _conv(g, f"{prefix}/decoder/upsample", H // f["codec_upsample_groups"], H, 2 * stride, bias=False,
              label="upsample")
    _transformer(g, f"{prefix}/decoder/decoder_transformer", f)
    dd = f"{prefix}/decoder/decoder_seanet"
    scale = 2 ** len(rs)
    _conv(g, f"{dd}/first", H, scale * F, k)
    for i, r in enumerate(rs):
        s = scale * F
        # a transposed conv s -> s/2: weight (s, s/2, 2r), bias (s/2)
        _conv(g, f"{dd}/stage{i}/up", s, s // 2, 2 * r, label=f"transposed conv stride {r}")
        _resblocks(g, f"{dd}/stage{i}/residual", s // 2, f)
        scale //= 2
    _conv(g, f"{dd}/last", F, f["codec_channels"], f["codec_last_kernel"])
    vq = f["codec_vq_dim"]
    if vq != H:
        for half in ("semantic", "acoustic"):
            q = f"{prefix}/quantizer/{half}_residual_vector_quantizer"
            _conv(g, f"{q}/input_proj", H, vq, 1, bias=False, label="input_proj")
            _conv(g, f"{q}/output_proj", vq, H, 1, bias=False, label="output_proj")


def _inputs(g, x, flags):
    K, Vc = I(flags["codebooks"]), I(flags["codebook_vocab"])
    ids = g.input("audio_ids", (B, T, K), label="codebook ids", role=R.CODEBOOK_TOKENS)
    x = g.op("embedding/codebooks", ops.CodebookEmbeddings(K * Vc + 1, d), x, ids, role=R.CODEBOOK_EMBEDDING,
             label="+ Σ codebook embeddings")                                           # (B, T, d)
    mimi(g, flags)
    if flags["cache_window"]:
        w = flags["cache_window"]
        g.require("le", T - I(w), f"T must be at most {w} (sliding_window): the forward attends every key, a "
                  "generation's cache keeps the last sliding_window keys; longer sequences are not modelled",
                  id="within_cache_window")
    refuse_audio(g, N_aud, "Kyutai speech-to-text (the Mimi codec)")
    return x


def build(flags, bound, name="kyutai_speech_to_text", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_inputs, flags=flags))
