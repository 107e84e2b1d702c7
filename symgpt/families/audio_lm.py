"""An audio encoder beside a text decoder (``blocks/audio_lm.py`` builds it): Qwen2-Audio (Chu et
al. 2024; ``Qwen2AudioForConditionalGeneration``: Whisper's encoder, its positions average-pooled
in pairs, a linear projector, a Qwen2 decoder).

Audio clips per sequence are the size N_aud: a config is read with N_aud = 0 (text only, as the
model's forward without ``input_features``); ``--set N_aud=1`` counts one padded 30-s clip, whose
T_src/2 = 750 audio positions T must count.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

BUILD = Ref("symgpt.families.blocks.audio_lm", "build")

#: the audio encoder's and the clips' sizes, besides the decoder's
AUDIO_SIZES = ("d_a", "h_a", "L_a", "d_ff_a", "N_mel", "T_src", "N_aud")
AUDIO_FLAGS = {"audio_activation": "gelu"}
AUDIO_HELP = {"audio_activation": "the audio encoder's MLP activation (its convolutions always use GELU)"}
AUDIO_CHOICES = {"audio_activation": ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")}

FAMILIES = (Family(
    name="qwen2_audio",
    description="Qwen2-Audio: Whisper's audio encoder, pooled in pairs, a linear projector, Qwen2 text decoder",
    flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True), AUDIO_FLAGS), sizes=SIZES + AUDIO_SIZES,
    optional=OPTIONAL, build=partial(BUILD, name="qwen2_audio"),
    flag_help=Extended(FLAG_HELP, added=AUDIO_HELP), choices=Extended(CHOICES, added=AUDIO_CHOICES)),)


def read(f: Fields):
    """transformers' Qwen2AudioConfig: text_config (Qwen2Config), audio_config
    (Qwen2AudioEncoderConfig, whose defaults Qwen2AudioConfig overrides)."""
    from .qwen2 import read as read_qwen2

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "qwen2")
    if mt != "qwen2":
        raise SymgptError(f"{f.where}: a Qwen2-Audio text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_qwen2(text)
    note_leftovers(f, text, "text_config")
    a = sub_fields(f, "audio_config")
    sizes.update(d_a=a.int("d_model", 1280), h_a=a.int("encoder_attention_heads", 20), L_a=a.int("encoder_layers", 32),
                 d_ff_a=a.int("encoder_ffn_dim", 5120), N_mel=a.int("num_mel_bins", 128),
                 T_src=a.int("max_source_positions", 1500))
    flags["audio_activation"] = a.activation("activation_function", "gelu")
    a.bool("scale_embedding", False)  # WhisperEncoder-style scale of nothing the encoder embeds: no count
    a.silent("encoder_layerdrop", "dropout", "attention_dropout", "activation_dropout", "initializer_range",
             "id2label", "label2id", "num_hidden_layers")
    note_leftovers(f, a, "audio_config")
    f.silent("audio_token_index", "audio_token_id", "ignore_index", "id2label", "label2id", "initializer_range",
             "tie_word_embeddings")
    f.notes.append(f"audio: N_aud clips per sequence (0 here; --set N_aud=1 counts one), each padded to 30 s as "
                   f"transformers' WhisperFeatureExtractor does (3000 log-mel frames): the encoder runs over "
                   f"T_src = {sizes['T_src']:,} positions (50 a second), pooled in pairs to {sizes['T_src'] // 2:,} "
                   f"audio tokens a clip (25 a second); T counts those tokens")
    f.notes.append("the audio encoder's position table (embed_positions, T_src × d_a sinusoids) is a frozen "
                   "parameter (requires_grad False): counted, as the checkpoint stores it; training memory counts a "
                   "gradient and optimizer state for it, which PyTorch does not allocate (T_src·d_a elements over)")
    sizes["N_aud"] = 0
    return "qwen2_audio", flags, sizes


READERS = {"qwen2_audio": Reader(read, ("Qwen2AudioForConditionalGeneration",))}

PRESETS: tuple = ()
