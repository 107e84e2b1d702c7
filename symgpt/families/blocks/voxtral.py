"""Voxtral (Mistral AI 2025, "Voxtral"; transformers' ``VoxtralForConditionalGeneration``): a
Whisper-style audio encoder beside a Llama text decoder, declared with transformers' module names.

Audio: N_aud clips per sequence, each padded to 30 s (``WhisperFeatureExtractor``: 3000 log-mel
frames), read by the encoder (``blocks/whisper.audio_encoder`` under ``audio_tower/``: T_src =
1500 positions of width d_a). Its output is reshaped to rows of ``audio_config.intermediate_size``
= d_ff_a numbers (``reshape(-1, intermediate_size)``: d_ff_a/d_a = 4 consecutive positions side by
side, a view), then ``multi_modal_projector``: linear_1 (d_ff_a -> d, no bias), the activation,
linear_2 (d -> d, no bias): T_src·d_a/d_ff_a = 375 audio tokens a clip (12.5 a second). The
decoder's T counts them. The encoder runs once, in the prefill; nothing of it is cached.
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import B, N_aud, T, T_src, d, d_a, d_ff_a, h_a, L_a
from ...graph import roles as R
from .encoder_layers import activation
from .vlm import with_encoder
from .whisper import audio_encoder

AUDIO_PREFIXES = ("audio_tower/", "multi_modal_projector/", "merge_audio_tokens", "input_features")

#: the decoder positions one padded 30-s clip takes
TOKENS_PER_CLIP = T_src * d_a / d_ff_a


def _audio(g, x, flags):
    enc = audio_encoder(g, {"activation": flags["audio_activation"]}, False, prefix="audio_tower",
                        dims=(d_a, h_a, L_a, d_ff_a), length=T_src, batch=B * N_aud)      # (B·N, T_src, d_a)
    g.require("integer", d_ff_a / d_a, "d_ff_a must be a multiple of d_a (positions are stacked into rows of d_ff_a)",
              id="audio_stack_divides")
    g.require("integer", TOKENS_PER_CLIP, "T_src·d_a/d_ff_a must be an integer (whole stacked rows a clip)",
              id="audio_rows_divide")
    s = g.op("audio_tower/stack", ops.StackFrames(d_ff_a / d_a), enc, role=R.AUDIO_TRANSPOSE,
             label="reshape to rows of d_ff_a")                                           # (B·N, T_src·d_a/d_ff_a, d_ff_a)
    p = g.op("multi_modal_projector/linear_1", ops.Linear(d_ff_a, d, bias=False), s, role=R.AUDIO_PROJECTOR,
             label="linear_1")
    p = g.op("multi_modal_projector/act", activation(flags["projector_activation"]), p, role=R.AUDIO_ACT,
             label="act")
    p = g.op("multi_modal_projector/linear_2", ops.Linear(d, d, bias=False), p, role=R.AUDIO_PROJECTOR,
             label="linear_2")                                                            # (B·N, 375, d)
    g.require("le", N_aud * TOKENS_PER_CLIP - T, "T must count the N_aud clips' audio tokens (N_aud·T_src·d_a/d_ff_a)",
              id="audio_tokens_within_sequence")
    return g.op("merge_audio_tokens", ops.MergeImageTokens(), x, p, role=R.IMAGE_MERGE,
                label="merge audio features")                                             # (B, T, d)


def build(flags, bound, name="voxtral", labels=None):
    """A Llama text decoder (the decoder's flags) with Voxtral's audio encoder and projector beside it."""
    return with_encoder(flags, bound, name, labels, partial(_audio, flags=flags), AUDIO_PREFIXES)
