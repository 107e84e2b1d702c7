"""Voxtral Realtime (Mistral AI 2026; transformers' ``VoxtralRealtimeForConditionalGeneration``): a
streaming audio encoder and a two-layer projector (held) beside a Mistral-style text decoder whose
every layer scales its FFN input by 1 + MLP(t_cond) (``ffn/time_modulation``, ``ops/modulation.py``).

Held, parameters counted, audio input refused: the encoder (``VoxtralRealtimeEncoder``: two causal
1-D convolutions, kernel 3, the second stride 2, with biases; L_a layers of q (bias), k (no bias),
v (bias) and o (bias) projections over h_a heads of ``audio_head_dim``, two RMSNorms, a SwiGLU MLP
whose down projection has a bias; a final RMSNorm) and the projector (linear_1: d_a·downsample ->
d, linear_2: d -> d, no biases). Positions are rotary (buffers); ``time_embedding`` is sinusoids
(a buffer): neither has a parameter.
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import L_a, N_aud, d, d_a, d_ff_a, h_a
from ...graph import roles as R
from .decoder import build as decoder_build
from .held_audio import held, linear, one, refuse_audio


def _rms(g, path, width):
    held(g, path, ops.RMSNorm(width), width, path.split("/")[-1])


def _tower(g, x, flags):
    t, mel, hd = "audio_tower", flags["audio_mel_bins"], flags["audio_head_dim"]
    held(g, f"{t}/embedder/conv1", ops.Linear(3 * mel, d_a, bias=True), 3 * mel, "causal conv 3")
    held(g, f"{t}/embedder/conv2", ops.Linear(3 * d_a, d_a, bias=True), 3 * d_a, "causal conv 3 stride 2")
    with g.repeat(f"{t}/layers", L_a, label="audio layer (held)", role=R.STACK, length=one()):
        linear(g, "self_attn/q_proj", d_a, h_a * hd, True)
        linear(g, "self_attn/k_proj", d_a, h_a * hd, False)
        linear(g, "self_attn/v_proj", d_a, h_a * hd, True)
        linear(g, "self_attn/o_proj", h_a * hd, d_a, True)
        _rms(g, "self_attn_layer_norm", d_a)
        _rms(g, "final_layer_norm", d_a)
        linear(g, "mlp/gate_proj", d_a, d_ff_a, False)
        linear(g, "mlp/up_proj", d_a, d_ff_a, False)
        linear(g, "mlp/down_proj", d_ff_a, d_a, True)
    _rms(g, f"{t}/norm", d_a)
    linear(g, "multi_modal_projector/linear_1", d_a * flags["audio_downsample"], d, False)
    linear(g, "multi_modal_projector/linear_2", d, d, False)
    refuse_audio(g, N_aud, "Voxtral Realtime")
    return x


def build(flags, bound, name="voxtral_realtime", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))
