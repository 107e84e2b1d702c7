"""Qwen3-ASR (Qwen 2025; transformers' ``Qwen3ASRForConditionalGeneration``): an audio encoder
(``Qwen3ASRAudioEncoder``) and a two-layer projector beside a Qwen3 text decoder. Held: audio
input is not modelled (chunked windows, three stride-2 3×3 convolutions over the log-mel
spectrogram); the parameters are counted.

The tower: conv2d1 (1 -> C channels), conv2d2 and conv2d3 (C -> C), 3×3 kernels with biases;
conv_out (C·F -> d_a, no bias, F the mel bins after three halvings); L_a layers of q/k/v/out
projections with biases, two LayerNorms, fc1 and fc2 with biases; ln_post. Its positions are
sinusoids (a buffer, no parameter). The projector: linear_1 (d_a -> d_a) and linear_2
(d_a -> output_dim), both with biases.
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import L_a, N_aud, d_a, d_ff_a
from ...graph import roles as R
from .decoder import build as decoder_build
from .held_audio import held, layer_norm, linear, one, refuse_audio


def _tower(g, x, flags):
    c, freq, out = flags["audio_conv_channels"], flags["audio_conv_freq"], flags["audio_output_dim"]
    t = "audio_tower"
    held(g, f"{t}/conv2d1", ops.Linear(9, c, bias=True), 9, "conv 3×3 stride 2")
    held(g, f"{t}/conv2d2", ops.Linear(9 * c, c, bias=True), 9 * c, "conv 3×3 stride 2")
    held(g, f"{t}/conv2d3", ops.Linear(9 * c, c, bias=True), 9 * c, "conv 3×3 stride 2")
    linear(g, f"{t}/conv_out", c * freq, d_a, False)
    with g.repeat(f"{t}/layers", L_a, label="audio layer (held)", role=R.STACK, length=one()):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            linear(g, f"self_attn/{n}", d_a, d_a, True)
        layer_norm(g, "self_attn_layer_norm", d_a)
        linear(g, "fc1", d_a, d_ff_a, True)
        linear(g, "fc2", d_ff_a, d_a, True)
        layer_norm(g, "final_layer_norm", d_a)
    layer_norm(g, f"{t}/ln_post", d_a)
    linear(g, "multi_modal_projector/linear_1", d_a, d_a, True)
    linear(g, "multi_modal_projector/linear_2", d_a, out, True)
    refuse_audio(g, N_aud, "Qwen3-ASR")
    return x


def build(flags, bound, name="qwen3_asr", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))
