"""Qwen3-ASR (Qwen 2025; transformers' ``Qwen3ASRForConditionalGeneration``): an audio encoder and
a projector (held, ``blocks/qwen3_asr.py``) beside a Qwen3 text decoder. Counted: every parameter
and the forward over token ids; the cost of audio input is not modelled (N_aud must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_ADDED = {"audio_conv_channels": 480, "audio_conv_freq": 16, "audio_output_dim": 3584}
_HELP = {"audio_conv_channels": "the channels C of the audio tower's three 3×3 convolutions (downsample_hidden_size)",
         "audio_conv_freq": "the mel bins left after the three stride-2 convolutions (num_mel_bins halved 3 times)",
         "audio_output_dim": "the projector's output width (output_dim)"}

FAMILIES = (Family(name="qwen3_asr", description="Qwen3-ASR: an audio encoder and projector (held: audio input is "
                   "not modelled), a Qwen3 text decoder",
                   flags=Extended(FLAGS, dict(gqa=True, qk_norm="head"), _ADDED),
                   sizes=SIZES + ("d_a", "h_a", "L_a", "d_ff_a", "N_aud"),
                   optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.qwen3_asr", "build"), name="qwen3_asr"),
                   flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES)),)


def _halve(n: int) -> int:
    return (n - 1) // 2 + 1  # a 3×3 stride-2 convolution with padding 1


def read(f: Fields):
    """transformers' Qwen3ASRConfig: text_config (Qwen3Config), audio_config (Qwen3ASREncoderConfig)."""
    from .qwen3 import read as read_qwen3

    text = sub_fields(f, "text_config")
    if not text.cfg:
        raise SymgptError(f"{f.where}: a Qwen3-ASR config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    mt = text.cfg.get("model_type", "qwen3")
    if mt != "qwen3":
        raise SymgptError(f"{f.where}: a Qwen3-ASR text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_qwen3(text)
    note_leftovers(f, text, "text_config")
    a = sub_fields(f, "audio_config")
    sizes.update(d_a=a.int("d_model", 1280), h_a=a.int("encoder_attention_heads", 20),
                 L_a=a.int("encoder_layers", 32), d_ff_a=a.int("encoder_ffn_dim", 5120))
    mel = a.int("num_mel_bins", 128)
    flags.update(audio_conv_channels=a.int("downsample_hidden_size", 480),
                 audio_conv_freq=_halve(_halve(_halve(mel))), audio_output_dim=a.int("output_dim", 3584))
    a.activation("activation_function", "gelu")
    a.silent("scale_embedding", "max_position_embeddings", "n_window", "n_window_infer", "max_source_positions",
             "dropout", "attention_dropout", "activation_dropout", "initializer_range", "id2label", "label2id",
             "is_encoder_decoder")
    note_leftovers(f, a, "audio_config")
    f.notes.append("audio input is not modelled for Qwen3-ASR: the audio tower and projector are held, their "
                   "parameters counted; N_aud must be 0")
    flags["tied"] = f.bool("tie_word_embeddings", True)  # Qwen3ASRForConditionalGeneration ties by its own config
    f.silent("audio_token_id", "timestamp_token_id", "token_classification_bias",
             "id2label", "label2id", "initializer_range", "is_encoder_decoder")
    sizes["N_aud"] = 0
    return "qwen3_asr", flags, sizes


READERS = {"qwen3_asr": Reader(read, ("Qwen3ASRForConditionalGeneration",))}

PRESETS: tuple = ()
