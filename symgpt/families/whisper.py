"""Whisper (Radford et al. 2022, "Robust Speech Recognition via Large-Scale Weak Supervision"): a
speech encoder--decoder (``blocks/whisper.py`` builds it) counted as transformers'
``WhisperForConditionalGeneration`` (or ``WhisperModel``: no head). ``WhisperForCausalLM`` (the
text decoder alone) is the ``seq2seq_decoder`` family.

The encoder's length is T_enc positions, half the mel frames; a config is read with T_enc = T_src
= max_source_positions (1500: every input padded to 30 s, as transformers' WhisperFeatureExtractor
does and WhisperEncoder requires)."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {"activation": "gelu", "embed_scale": False, "tied": True, "head": "lm", "dropout": False, "loss": True}
CHOICES = {"head": ("lm", "none"), "activation": ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")}
FLAG_HELP = {
    "activation": "the MLPs' activation (activation_function; the two convolutions always use GELU)",
    "embed_scale": "the decoder's token embeddings are multiplied by sqrt(d) (scale_embedding)",
    "tied": "proj_out shares the decoder's token embedding",
    "head": "lm (proj_out and the loss: WhisperForConditionalGeneration) or none (WhisperModel)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
}

FAMILIES = (Family(
    name="whisper",
    description="Whisper: two-conv front-end over log-mel frames, pre-LN audio encoder, decoder with "
                "cross-attention (WhisperForConditionalGeneration)",
    flags=FLAGS, sizes=("L", "L_dec", "d", "h", "V", "d_ff", "T_max", "N_mel", "T_src"),
    # T_enc: a length, bound by a config read and by the presets at T_src (every input padded to 30 s)
    optional=("T_enc",),
    build=partial(Ref("symgpt.families.blocks.whisper", "build"), name="whisper"),
    flag_help=FLAG_HELP, choices=CHOICES),)

#: the transformers class -> the head counted
HEADS = {"WhisperForConditionalGeneration": "lm", "WhisperModel": "none"}

#: WhisperConfig's fields that change no parameter or forward FLOP of these classes: generation,
#: the audio classifier's, SpecAugment's masks of the training inputs (no arithmetic counted)
_ELSEWHERE = {"suppress_tokens", "begin_suppress_tokens", "use_weighted_layer_sum", "classifier_proj_size",
              "apply_spec_augment", "mask_time_prob", "mask_time_length", "mask_time_min_masks",
              "mask_feature_prob", "mask_feature_length", "mask_feature_min_masks", "median_filter_width",
              "encoder_layerdrop", "decoder_layerdrop", "forced_decoder_ids", "max_length",
              "num_hidden_layers", "gradient_checkpointing"}


def audio_note(T_src: int) -> str:
    return (f"audio: log-mel frames at 100 a second (16 kHz, hop 160: transformers' WhisperFeatureExtractor), "
            f"halved by conv2's stride: T_enc = frames/2 = 50 positions a second; every input is padded to "
            f"30 s, as transformers' WhisperFeatureExtractor does (3000 frames), so T_enc = T_src = {T_src:,} "
            f"whatever the audio's length (WhisperEncoder accepts no other); a shorter --set T_enc prices an "
            f"unpadded encoder that adds the first T_enc rows of its position table, which transformers does not run")


def read(f: Fields):
    """transformers' WhisperConfig, as WhisperForConditionalGeneration or WhisperModel
    (WhisperForCausalLM: ``seq2seq_decoder.read_whisper``; also a config that names no class, as
    symgpt read it before the encoder--decoder was modelled)."""
    if f.architecture in (None, "WhisperForCausalLM"):
        from .seq2seq_decoder import read_whisper

        return read_whisper(f)
    sizes = {"V": f.int("vocab_size", 51865), "d": f.int("d_model", 384),
             "L": f.int("encoder_layers", 4), "L_dec": f.int("decoder_layers", 4),
             "h": f.int("encoder_attention_heads", 6), "d_ff": f.int("encoder_ffn_dim", 1536),
             "T_max": f.int("max_target_positions", 448), "N_mel": f.int("num_mel_bins", 80),
             "T_src": f.int("max_source_positions", 1500)}
    if f.int("decoder_attention_heads", 6) != sizes["h"] or f.int("decoder_ffn_dim", 1536) != sizes["d_ff"]:
        raise SymgptError(f"{f.where}: encoder and decoder with different heads or FFN widths are not "
                          "supported (one h and one d_ff)")
    f.used.update(_ELSEWHERE)
    flags = {"activation": f.activation("activation_function", "gelu"),
             "embed_scale": f.bool("scale_embedding", False),
             "tied": f.bool("tie_word_embeddings", True),
             "head": HEADS[f.architecture]}
    sizes["T_enc"] = sizes["T_src"]
    f.notes.append(audio_note(sizes["T_src"]))
    f.notes.append("the encoder's position table (embed_positions, T_src × d sinusoids) is a frozen parameter "
                   "(requires_grad False): counted in the parameters, as the checkpoint stores it; backward computes no "
                   "gradient for it, but training memory counts a gradient and optimizer state for it like every "
                   "parameter's, which PyTorch does not allocate (T_src·d elements over)")
    return "whisper", flags, sizes


READERS = {"whisper": Reader(read, (*HEADS, "WhisperForCausalLM"))}

# Whisper checkpoints (Radford et al. 2022, Table 1; openai/whisper-* on the Hugging Face Hub):
# WhisperForConditionalGeneration, d_ff = 4·d, the head tied to the token embedding
_SRC = "Radford et al. 2022 (Whisper), Table 1; openai/{} config.json on the Hugging Face Hub"
_NOTE = ("{:,} parameters (transformers' WhisperForConditionalGeneration; the checkpoint's safetensors hold as "
         "many); published: {}. {} log-mel bins; 30 s of audio = 3,000 frames -> T_enc = 1,500 positions (every "
         "input padded to 30 s). The encoder's position table (1,500 × d) is a frozen parameter: counted, as the "
         "checkpoint stores it; training memory counts a gradient and optimizer state for it that PyTorch does not "
         "allocate")


def _whisper(name, dims, count, published):
    """A Whisper checkpoint's preset; *dims* = (d, L, L_dec, h, V, N_mel)."""
    d, L, L_dec, h, V, N_mel = dims
    sizes = {"V": V, "d": d, "L": L, "L_dec": L_dec, "h": h, "d_ff": 4 * d, "T_max": 448, "N_mel": N_mel,
             "T_src": 1500, "T_enc": 1500}
    return Preset(name, "whisper", sizes, flags={"head": "lm"}, source=_SRC.format(name),
                  note=_NOTE.format(count, published, N_mel))


PRESETS = (
    _whisper("whisper-tiny", (384, 4, 4, 6, 51865, 80), 37_760_640, "39M"),
    _whisper("whisper-base", (512, 6, 6, 8, 51865, 80), 72_593_920, "74M"),
    _whisper("whisper-small", (768, 12, 12, 12, 51865, 80), 241_734_912, "244M"),
    _whisper("whisper-medium", (1024, 24, 24, 16, 51865, 80), 763_857_920, "769M"),
    _whisper("whisper-large-v3", (1280, 32, 32, 20, 51866, 128), 1_543_490_560, "1550M"),
    _whisper("whisper-large-v3-turbo", (1280, 32, 4, 20, 51866, 128), 808_878_080, "809M"),
)
