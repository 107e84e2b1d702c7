"""Voxtral (Mistral AI 2025; transformers' ``VoxtralForConditionalGeneration``): Whisper's audio
encoder, four positions stacked per row, a two-layer projector, a Llama decoder
(``blocks/voxtral.py`` builds it).

Audio clips per sequence are the size N_aud: a config is read with N_aud = 0 (text only, as the
model's forward without ``input_features``); ``--set N_aud=1`` counts one padded 30-s clip, whose
T_src·d_a/d_ff_a = 375 audio tokens T must count.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .audio_lm import AUDIO_CHOICES, AUDIO_FLAGS, AUDIO_HELP, AUDIO_SIZES
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_ACTS = ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")
PROJ_FLAGS = {**AUDIO_FLAGS, "projector_activation": "gelu"}
PROJ_HELP = {**AUDIO_HELP, "projector_activation": "the activation between the projector's two linear maps"}
PROJ_CHOICES = {**AUDIO_CHOICES, "projector_activation": _ACTS}

FAMILIES = (Family(
    name="voxtral",
    description="Voxtral: Whisper's audio encoder, 4 positions stacked per row, a two-layer projector, Llama decoder",
    flags=Extended(FLAGS, {}, PROJ_FLAGS), sizes=SIZES + AUDIO_SIZES,
    optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.voxtral", "build"), name="voxtral"),
    flag_help=Extended(FLAG_HELP, added=PROJ_HELP), choices=Extended(CHOICES, added=PROJ_CHOICES)),)


def read_audio_encoder(f: Fields, a: Fields, sizes: dict, flags: dict) -> None:
    """A Whisper-style encoder section (``VoxtralEncoderConfig`` and its kind): its sizes and flag."""
    sizes.update(d_a=a.int("hidden_size", 1280), h_a=a.int("num_attention_heads", 20),
                 L_a=a.int("num_hidden_layers", 32), d_ff_a=a.int("intermediate_size", 5120),
                 N_mel=a.int("num_mel_bins", 128), T_src=a.int("max_source_positions", 1500))
    flags["audio_activation"] = a.activation("activation_function", "gelu")
    a.bool("scale_embedding", False)  # scales nothing the encoder embeds: no count
    a.silent("layerdrop", "dropout", "attention_dropout", "activation_dropout", "initializer_range",
             "id2label", "label2id", "vocab_size")


#: VoxtralConfig's defaults under its text_config's own (``sub_configs_defaults``: a 3B Llama)
TEXT_DEFAULTS = {"vocab_size": 131072, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 30,
                 "num_key_value_heads": 8, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
                 "head_dim": 128}


def read(f: Fields):
    """transformers' VoxtralConfig: text_config (LlamaConfig), audio_config (VoxtralEncoderConfig)."""
    from .llama import read as read_llama

    sub = sub_fields(f, "text_config")
    text = Fields({**TEXT_DEFAULTS, **sub.cfg}, sub.where)
    mt = text.cfg.get("model_type", "llama")
    if mt != "llama":
        raise SymgptError(f"{f.where}: a Voxtral text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_llama(text)
    note_leftovers(f, text, "text_config")
    a = sub_fields(f, "audio_config")
    read_audio_encoder(f, a, sizes, flags)
    note_leftovers(f, a, "audio_config")
    flags["projector_activation"] = f.activation("projector_hidden_act", "gelu")
    f.silent("audio_token_id", "hidden_size", "id2label", "label2id", "initializer_range", "tie_word_embeddings")
    per_clip = sizes["T_src"] * sizes["d_a"] // sizes["d_ff_a"] if sizes["d_ff_a"] else 0
    f.notes.append(f"audio: N_aud clips per sequence (0 here; --set N_aud=1 counts one), each padded to 30 s as "
                   f"transformers' WhisperFeatureExtractor does (3000 log-mel frames): the encoder runs over "
                   f"T_src = {sizes['T_src']:,} positions (50 a second), stacked {sizes['d_ff_a'] // max(sizes['d_a'], 1)} "
                   f"to a row: {per_clip:,} audio tokens a clip; T counts those tokens")
    f.notes.append("the audio encoder's position table (embed_positions, T_src × d_a) is a frozen parameter "
                   "(requires_grad False): counted, as the checkpoint stores it; training memory counts a gradient "
                   "and optimizer state for it, which PyTorch does not allocate (T_src·d_a elements over)")
    sizes["N_aud"] = 0
    return "voxtral", flags, sizes


READERS = {"voxtral": Reader(read, ("VoxtralForConditionalGeneration",))}

PRESETS: tuple = ()
