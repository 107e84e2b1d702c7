"""Qwen3-ASR (Qwen 2025; transformers' ``Qwen3ASRForConditionalGeneration``): an audio encoder
(``Qwen3ASREncoder``) and a two-layer projector beside a Qwen3 text decoder, declared with
transformers' module names.

Audio: N_aud clips per sequence, each padded to 30 s (``Qwen3ASRFeatureExtractor``'s default
``padding="max_length"``, chunk_length 30: 100 log-mel frames a second, 3000 a clip), read in
chunks of 2·n_window frames (K chunks a clip): conv2d1 (1 -> C), conv2d2 and conv2d3 (C -> C),
3×3, stride 2, padding 1, each followed by GELU, over (mel bins, frames); the chunk's t positions
(13 for 100 frames) flattened to rows of C·F (F the mel bins left) and mapped by conv_out
(C·F -> d_a, no bias); fixed sinusoids added (a buffer). The clip's P = K·t positions run through
L_a pre-LN layers whose attention stays within windows of t·(n_window_infer // (2·n_window))
positions (104 for the defaults: ``get_audio_cu_seqlens``; the clip's last window holds the
remainder), then ln_post and the projector: linear_1 (d_a -> d_a), the activation, linear_2
(d_a -> output_dim), both with biases. P audio tokens a clip (390 for the defaults, 13 a second);
the decoder's T counts them. The encoder runs once, in the prefill; nothing of it is cached.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, N_aud, T, d, d_a, d_ff_a, h_a, L_a
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .vlm import with_encoder

AUDIO_PREFIXES = ("audio_tower/", "multi_modal_projector/", "merge_audio_tokens", "input_features")

#: log-mel frames a second (16 kHz samples, a hop of 160) and the seconds a clip is padded to
#: (Qwen3ASRFeatureExtractor: hop_length 160, chunk_length 30, padding="max_length")
FRAMES_PER_SECOND, CLIP_SECONDS = 100, 30


def _strided(n: int) -> int:
    return (n - 1) // 2 + 1  # a 3×3 convolution of stride 2 and padding 1


def clip_sizes(flags) -> dict:
    """The numbers of one padded clip: frames, chunks K, chunk frames, positions t a chunk, P a
    clip, the attention window and the windows' count and remainder."""
    nw, infer = flags["audio_n_window"], flags["audio_window_infer"]
    if not isinstance(nw, int) or not isinstance(infer, int) or nw < 1:
        raise SymgptError(f"audio_n_window and audio_window_infer must be positive integers, got {nw!r}, {infer!r}")
    chunk = 2 * nw
    frames = FRAMES_PER_SECOND * CLIP_SECONDS
    t = _strided(_strided(_strided(chunk)))
    chunks = frames // chunk
    window = t * (infer // chunk)
    if frames % chunk or not window or t != 13:  # Qwen3ASREncoder counts 13 positions a full chunk
        raise SymgptError(f"a 30-s clip in chunks of 2·audio_n_window = {chunk} frames, windows of "
                          f"audio_window_infer = {infer} frames: transformers' Qwen3ASREncoder runs 100-frame "
                          "chunks (13 positions) and windows of at least one chunk")
    P = chunks * t
    return dict(frames=frames, chunk=chunk, chunks=chunks, t=t, P=P, window=window, full=P // window,
                rest=P % window)


def _spec():
    return AttentionSpec(d_a, h_a, dh=d_a / h_a, module="self_attn",
                         names={"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj",
                                "o": "self_attn/out_proj"},
                         causal=False, projections=Projections(bias=True))


def _windowed_attention(g, a, c, rows, layers):
    """Attention of *a* (rows, P, d_a) within windows: the full ones batched, the last one apart
    (its projections the weights of the layer *layers*, declared once)."""
    I, parts = sympy.Integer, []
    W, n, r = I(c["window"]), I(c["full"]), I(c["rest"])
    if n:
        w = a if not r else g.op("windows_rows", ops.Rows(0, n * W), a, role=R.AUDIO_TRANSPOSE,
                                  label="full windows")                                    # (rows, n·W, d_a)
        w = g.op("windows", ops.Regroup(rows * n, d_a), w, role=R.AUDIO_TRANSPOSE,
                 label="windows of positions")                                             # (rows·n, W, d_a)
        o = attention(g, w, _spec())                                                       # (rows·n, W, d_a)
        parts.append(g.op("windows_back", ops.Regroup(rows, d_a), o, role=R.AUDIO_TRANSPOSE,
                          label="windows joined"))                                         # (rows, n·W, d_a)
    if r:
        last = a if not n else g.op("last_window", ops.Rows(n * W, r), a, role=R.AUDIO_TRANSPOSE,
                                    label="last window")                                   # (rows, r, d_a)
        if n:
            with g.repeat("last_window_attn", 1, label="the last window's attention (the same weights)",
                          length=r), g.shares(layers):
                parts.append(attention(g, last, _spec()))                                  # (rows, r, d_a)
        else:
            parts.append(attention(g, last, _spec()))
    if len(parts) == 1:
        return parts[0]
    return g.op("windows_concat", ops.ConcatRows(), *parts, role=R.AUDIO_TRANSPOSE, label="windows joined")


def _layer(g, x, flags, c, rows, layers):
    a = g.op("self_attn_layer_norm", ops.LayerNorm(d_a), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    o = _windowed_attention(g, a, c, rows, layers)
    x = g.op("self_attn_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    a = g.op("final_layer_norm", ops.LayerNorm(d_a), x, role=R.FFN_NORM, label="LayerNorm_ffn")
    f = ffn(g, a, FFNSpec(d_a, d_ff_a, activation(flags["audio_activation"]), bias=True,
                          names={"up": "fc1", "act": "activation_fn", "down": "fc2"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def _audio(g, x, flags):
    I, t_ = sympy.Integer, "audio_tower"
    c = clip_sizes(flags)
    C, mel, clips = I(flags["audio_conv_channels"]), I(flags["audio_mel_bins"]), B * N_aud
    gelu = ops.GELU(approximate="none")  # Qwen3ASREncoder: F.gelu after each convolution
    h = g.input("input_features", (clips * c["chunks"], 1, mel, I(c["chunk"])), dtype="act", role=R.AUDIO,
                label="log-mel chunks")                                                  # (B·N·K, 1, N_mel, 2·n_window)
    for i, c_in in ((1, I(1)), (2, C), (3, C)):
        h = g.op(f"{t_}/conv2d{i}", ops.Conv2dStrided(c_in, C, I(3), I(2), I(1)), h, role=R.AUDIO_CONV,
                 label=f"conv2d{i} (3×3, stride 2)")
        h = g.op(f"{t_}/conv2d{i}_act", gelu, h, role=R.AUDIO_ACT, label="GELU")      # (B·N·K, C, F_i, t_i)
    freq = I(flags["audio_conv_freq"])
    h = g.op(f"{t_}/flatten", ops.Regroup(clips * c["chunks"], C * freq), h, role=R.AUDIO_TRANSPOSE,
             label="positions × (C·F)")                                                  # (B·N·K, t, C·F)
    h = g.op(f"{t_}/conv_out", ops.Linear(C * freq, d_a, bias=False), h, role=R.AUDIO_PROJECTOR,
             label="conv_out")                                                            # (B·N·K, t, d_a)
    h = g.op(f"{t_}/positional_embedding", ops.AddSinusoidRows(d_a), h, role=R.POSITION_EMBEDDING,
             label="+ sinusoids (a buffer)")
    h = g.op(f"{t_}/clips", ops.Regroup(clips, d_a), h, role=R.AUDIO_TRANSPOSE,
             label="chunks joined")                                                      # (B·N, P, d_a)
    with g.repeat(f"{t_}/layers", L_a, label="audio layer", carry=h, role=R.STACK, length=I(c["P"])) as layers:
        h = _layer(g, h, flags, c, clips, layers)
    h = g.op(f"{t_}/ln_post", ops.LayerNorm(d_a), h, role=R.FINAL_NORM, label="ln_post")
    p = g.op("multi_modal_projector/linear_1", ops.Linear(d_a, d_a, bias=True), h, role=R.AUDIO_PROJECTOR,
             label="linear_1")
    p = g.op("multi_modal_projector/act", activation(flags["audio_activation"]), p, role=R.AUDIO_ACT, label="act")
    out = d if flags["audio_output_is_d"] else I(flags["audio_output_dim"])
    p = g.op("multi_modal_projector/linear_2", ops.Linear(d_a, out, bias=True), p,
             role=R.AUDIO_PROJECTOR, label="linear_2")                                   # (B·N, P, output_dim)
    if not flags["audio_output_is_d"]:
        g.require("le", N_aud, "the projector's output_dim differs from the text hidden_size: transformers cannot "
                  "place the audio features among the text embeddings (N_aud must be 0)", id="audio_width_differs")
        return x
    g.require("le", N_aud * c["P"] - T, f"T must count the N_aud clips' audio tokens (N_aud·{c['P']})",
              id="audio_tokens_within_sequence")
    return g.op("merge_audio_tokens", ops.MergeImageTokens(), x, p, role=R.IMAGE_MERGE,
                label="merge audio features")                                             # (B, T, d)


def build(flags, bound, name="qwen3_asr", labels=None):
    """A Qwen3 text decoder (the decoder's flags) with Qwen3-ASR's audio encoder and projector beside it."""
    return with_encoder(flags, bound, name, labels, partial(_audio, flags=flags), AUDIO_PREFIXES)
