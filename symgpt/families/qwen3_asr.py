"""Qwen3-ASR (Qwen 2025; transformers' ``Qwen3ASRForConditionalGeneration``): an audio encoder and
a projector beside a Qwen3 text decoder (``blocks/qwen3_asr.py`` builds it).

Audio clips per sequence are the size N_aud: a config is read with N_aud = 0 (text only, as the
model's forward without ``input_features``); ``--set N_aud=1`` counts one clip padded to 30 s,
whose 390 audio tokens (13 a second, for n_window 50) T must count.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .audio_lm import AUDIO_CHOICES, AUDIO_HELP
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_ADDED = {"audio_conv_channels": 480, "audio_conv_freq": 16, "audio_output_dim": 3584,
          # the encoder run over audio (Qwen3ASREncoderConfig)
          "audio_mel_bins": 128, "audio_n_window": 50, "audio_window_infer": 800, "audio_activation": "gelu",
          "audio_output_is_d": True}
_HELP = {**AUDIO_HELP,
         "audio_mel_bins": "the log-mel bins a frame (num_mel_bins)",
         "audio_n_window": "half the log-mel frames of a chunk the convolutions read (n_window: 2·n_window a chunk)",
         "audio_window_infer": "the frames whose positions attend to each other (n_window_infer, a multiple of "
                               "2·n_window)",
         "audio_output_is_d": "the projector's output_dim equals the text hidden_size (else audio cannot be merged)",
         "audio_conv_channels": "the channels C of the audio tower's three 3×3 convolutions (downsample_hidden_size)",
         "audio_conv_freq": "the mel bins left after the three stride-2 convolutions (num_mel_bins halved 3 times)",
         "audio_output_dim": "the projector's output width (output_dim)"}

FAMILIES = (Family(name="qwen3_asr", description="Qwen3-ASR: an audio encoder over 1-s log-mel chunks, attention "
                   "in 8-s windows, a two-layer projector, a Qwen3 text decoder",
                   flags=Extended(FLAGS, dict(gqa=True, qk_norm="head"), _ADDED),
                   sizes=SIZES + ("d_a", "h_a", "L_a", "d_ff_a", "N_aud"),
                   optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.qwen3_asr", "build"), name="qwen3_asr"),
                   flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES, added=AUDIO_CHOICES)),)


def _halve(n: int) -> int:
    return (n - 1) // 2 + 1  # a 3×3 stride-2 convolution with padding 1


def _audio_notes(f: Fields, flags: dict, d: int) -> None:
    chunk, infer = 2 * flags["audio_n_window"], flags["audio_window_infer"]
    if (100 * 30) % chunk or infer < chunk:
        raise SymgptError(f"{f.where}: a 30-s clip's 3000 log-mel frames must be a multiple of 2·n_window ({chunk}), "
                          f"and n_window_infer ({infer}) at least 2·n_window, for whole chunks and windows")
    t = _halve(_halve(_halve(chunk)))
    if t != 13:  # Qwen3ASREncoder's _get_feat_extract_output_lengths counts 13 positions a full chunk
        raise SymgptError(f"{f.where}: audio_config.n_window {flags['audio_n_window']} leaves {t} positions a chunk; "
                          "transformers' Qwen3ASREncoder counts 13 (n_window 50), so audio of it is not modelled")
    P, W = 3000 // chunk * t, t * (infer // chunk)
    f.notes.append(f"audio: N_aud clips per sequence (0 here; --set N_aud=1 counts one), each padded to 30 s as "
                   f"Qwen3ASRFeatureExtractor does by default (padding='max_length': 3000 log-mel frames; its "
                   f"processor pads a batch to its longest clip instead): {3000 // chunk} chunks of {chunk} frames, "
                   f"{t} positions each after three stride-2 convolutions, {P:,} audio tokens a clip; attention "
                   f"within windows of {W} positions ({P // W} full" + (f", the last of {P % W}" if P % W else "")
                   + "); T counts those tokens")
    if not flags["audio_output_is_d"]:
        f.notes.append(f"audio_config.output_dim ({flags['audio_output_dim']}) differs from the text hidden_size "
                       f"({d}): transformers cannot merge the audio features, so N_aud must be 0")


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
                 audio_conv_freq=_halve(_halve(_halve(mel))), audio_output_dim=a.int("output_dim", 3584),
                 audio_mel_bins=mel, audio_n_window=a.int("n_window", 50, minimum=1),
                 audio_window_infer=a.int("n_window_infer", 800, minimum=1))
    flags["audio_activation"] = a.activation("activation_function", "gelu")
    flags["audio_output_is_d"] = flags["audio_output_dim"] == sizes["d"]
    a.bool("scale_embedding", False)  # Qwen3ASREncoder's embed_scale scales nothing in its forward: no count
    a.silent("max_position_embeddings", "max_source_positions",
             "dropout", "attention_dropout", "activation_dropout", "initializer_range", "id2label", "label2id",
             "is_encoder_decoder")
    note_leftovers(f, a, "audio_config")
    _audio_notes(f, flags, sizes["d"])
    flags["tied"] = f.bool("tie_word_embeddings", True)  # Qwen3ASRForConditionalGeneration ties by its own config
    f.silent("audio_token_id", "timestamp_token_id", "token_classification_bias",
             "id2label", "label2id", "initializer_range", "is_encoder_decoder")
    sizes["N_aud"] = 0
    return "qwen3_asr", flags, sizes


READERS = {"qwen3_asr": Reader(read, ("Qwen3ASRForConditionalGeneration",))}

PRESETS: tuple = ()
