"""An audio encoder beside a text decoder: Qwen2-Audio (Chu et al. 2024, "Qwen2-Audio Technical
Report"; transformers' ``Qwen2AudioForConditionalGeneration``), declared with transformers' module
names.

Audio: N_aud clips per sequence, each padded to 30 s (``WhisperFeatureExtractor``: 3000 log-mel
frames), read by Whisper's encoder (``blocks/whisper.audio_encoder``: two convolutions, T_src =
1500 positions, L_a pre-LN layers of width d_a) under ``audio_tower/``, whose output is
average-pooled in pairs (``nn.AvgPool1d(2, 2)``: T_src/2 = 750 positions a clip, 25 a second)
and mapped to the text width by ``multi_modal_projector/linear`` (with bias). The decoder's T counts
those N_aud·T_src/2 audio positions (``input_ids`` holds one audio token per position), whose
embeddings the audio features replace. The encoder runs once, in the prefill; nothing of it is
cached.
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import B, N_aud, T, T_src, d, d_a, d_ff_a, h_a, L_a
from ...graph import roles as R
from .vlm import with_encoder
from .whisper import audio_encoder

#: the node paths under which the audio encoder and projector live
AUDIO_PREFIXES = ("audio_tower/", "multi_modal_projector/", "merge_audio_tokens", "input_features")

#: the decoder positions one padded 30-s clip takes: the encoder's T_src positions pooled in pairs
TOKENS_PER_CLIP = T_src / 2


def _pool(g, x):
    return g.op("audio_tower/avg_pooler", ops.AvgPoolFrames(2), x, role=R.AUDIO_POOL,
                label="avg pool 2")                                                       # (B·N, T_src/2, d_a)


def _audio(g, x, flags):
    p = audio_encoder(g, {"activation": flags["audio_activation"]}, False, prefix="audio_tower",
                      dims=(d_a, h_a, L_a, d_ff_a), length=T_src, batch=B * N_aud, pool=_pool)  # (B·N, T_src/2, d_a)
    g.require("integer", T_src / 2, "T_src must be even (the encoder's positions are pooled in pairs)",
              id="audio_pool_divides")
    feats = g.op("multi_modal_projector/linear", ops.Linear(d_a, d, bias=True), p, role=R.AUDIO_PROJECTOR,
                 label="projection")                                                      # (B·N, T_src/2, d)
    g.require("le", N_aud * TOKENS_PER_CLIP - T, "T must count the N_aud clips' audio positions (N_aud·T_src/2)",
              id="audio_tokens_within_sequence")
    return g.op("merge_audio_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge audio features")                                             # (B, T, d)


def build(flags, bound, name="audio_lm", labels=None):
    """A text decoder (the decoder's flags) with an audio encoder and projector beside it."""
    return with_encoder(flags, bound, name, labels, partial(_audio, flags=flags), AUDIO_PREFIXES)
