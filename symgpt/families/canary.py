"""Canary (NVIDIA 2024; transformers' ``CanaryForConditionalGeneration``) and Cohere ASR
(``CohereAsrForConditionalGeneration``): a FastConformer speech encoder (``ParakeetEncoder``; held,
``blocks/canary.py``) and a pre-LN Transformer decoder. Counted: every parameter, and the decoder's
forward given the encoder's output of T_enc positions (transformers' ``encoder_outputs``); audio
input to the encoder is not modelled (N_aud must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields

FLAGS = {"activation": "relu", "attn_bias": True, "gqa": False, "positions": "sinusoidal", "enc_proj": False, "tied": True,
         "dropout": False, "loss": True,
         "sub_channels": 256, "sub_kernel": 3, "sub_layers": 3, "sub_freq": 16, "audio_attn_bias": True,
         "audio_conv_bias": True, "audio_conv_kernel": 9}
CHOICES = {"activation": ("relu", "gelu", "gelu_tanh", "gelu_new", "silu"), "positions": ("sinusoidal", "learned")}
FLAG_HELP = {
    "activation": "the decoder MLP's activation (hidden_act)",
    "attn_bias": "the decoder's attention projections have biases (attention_bias)",
    "gqa": "the decoder's keys and values have h_kv heads of their own (num_key_value_heads below h)",
    "positions": "sinusoidal (Canary: fixed sinusoids, a buffer) or learned (Cohere ASR: pos_emb of T_max rows)",
    "enc_proj": "the encoder's output is mapped d_a -> d before the cross-attention (Cohere ASR's proj)",
    "tied": "proj_out's weight is the token embedding (tie_word_embeddings); its bias is its own",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
    "sub_channels": "the subsampling convolutions' channels C (subsampling_conv_channels)",
    "sub_kernel": "the subsampling convolutions' kernel k (k×k; subsampling_conv_kernel_size)",
    "sub_layers": "the subsampling's stride-s stages n = log2(subsampling_factor)",
    "sub_freq": "the mel bins left after the subsampling, N_mel // s^n (the linear map reads C times as many)",
    "audio_attn_bias": "the encoder's attention and feed-forward projections have biases (attention_bias)",
    "audio_conv_bias": "the encoder's convolution module has biases (convolution_bias)",
    "audio_conv_kernel": "the convolution module's depthwise kernel (conv_kernel_size)",
}
SIZES = ("L", "d", "h", "d_head", "V", "d_ff", "T_max", "d_a", "h_a", "L_a", "d_ff_a", "N_aud")

FAMILIES = tuple(Family(
    name=n, description=f"{t}: a FastConformer speech encoder (held: audio input is not modelled), a pre-LN decoder "
                        "with cross-attention over the encoder's output",
    flags={**FLAGS, **over}, sizes=SIZES, optional=("T_enc", "h_kv"),
    build=partial(Ref("symgpt.families.blocks.canary", "build"), name=n), flag_help=FLAG_HELP, choices=CHOICES)
    for n, t, over in (("canary", "Canary", {}),
                       ("cohere_asr", "Cohere ASR", {"positions": "learned", "enc_proj": True, "tied": False})))

#: ParakeetEncoderConfig's defaults
PARAKEET = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 8, "intermediate_size": 4096,
            "attention_bias": True, "convolution_bias": True, "conv_kernel_size": 9, "subsampling_factor": 8,
            "subsampling_conv_channels": 256, "num_mel_bins": 80, "subsampling_conv_kernel_size": 3,
            "subsampling_conv_stride": 2}
#: the encoder_config defaults each parent sets (CanaryConfig's and CohereAsrConfig's sub_configs_defaults)
CANARY_ENCODER = {"num_hidden_layers": 32, "num_mel_bins": 128}
COHERE_ENCODER = {"hidden_size": 1280, "num_hidden_layers": 48, "intermediate_size": 5120, "num_mel_bins": 128}


def _encoder(f: Fields, defaults: dict):
    """transformers' ParakeetEncoderConfig (the encoder_config), over *defaults*."""
    e = sub_fields(f, "encoder_config")
    mt = e.cfg.get("model_type", "parakeet_encoder")
    if mt != "parakeet_encoder":
        raise SymgptError(f"{f.where}: an encoder_config of model_type {str(mt)[:40]!r} is not modelled")
    D = {**PARAKEET, **defaults}
    sizes = {"d_a": e.int("hidden_size", D["hidden_size"]), "L_a": e.int("num_hidden_layers", D["num_hidden_layers"]),
             "h_a": e.int("num_attention_heads", D["num_attention_heads"]),
             "d_ff_a": e.int("intermediate_size", D["intermediate_size"])}
    if e.int("num_key_value_heads", sizes["h_a"]) != sizes["h_a"] or e.cfg.get("head_dim") not in (
            None, sizes["d_a"] // sizes["h_a"]):
        raise SymgptError(f"{f.where}: an encoder with grouped key/value heads or its own head_dim is not modelled")
    factor, stride = e.int("subsampling_factor", D["subsampling_factor"]), e.int("subsampling_conv_stride", 2)
    n = factor.bit_length() - 1
    if factor != 1 << n:
        raise SymgptError(f"{f.where}: encoder_config.subsampling_factor {factor} is not a power of 2")
    flags = {"sub_channels": e.int("subsampling_conv_channels", 256), "sub_kernel": e.int("subsampling_conv_kernel_size", 3),
             "sub_layers": n, "sub_freq": e.int("num_mel_bins", D["num_mel_bins"]) // stride ** n,
             "audio_attn_bias": e.bool("attention_bias", True), "audio_conv_bias": e.bool("convolution_bias", True),
             "audio_conv_kernel": e.int("conv_kernel_size", 9)}
    if not flags["sub_freq"]:
        raise SymgptError(f"{f.where}: encoder_config.num_mel_bins leaves no frequency after the subsampling")
    e.activation("hidden_act", "silu")
    e.silent("scale_input", "max_position_embeddings", "dropout", "dropout_positions", "layerdrop",
             "activation_dropout", "attention_dropout", "initializer_range", "id2label", "label2id",
             "is_encoder_decoder")
    note_leftovers(f, e, "encoder_config")
    return sizes, flags


def _decoder(f: Fields, head_dim, kv_default=None):
    """A decoder's fields (CanaryDecoderConfig, or CohereAsrConfig's own)."""
    d, h = f.int("hidden_size", 1024), f.int("num_attention_heads", 8)
    sizes = {"V": f.int("vocab_size", 16384), "d": d, "L": f.int("num_hidden_layers", 8), "h": h,
             "h_kv": f.int("num_key_value_heads", kv_default or h), "d_head": f.int("head_dim", head_dim or d // h),
             "d_ff": f.int("intermediate_size", 4096), "T_max": f.int("max_position_embeddings", 1024)}
    if h % sizes["h_kv"]:
        raise SymgptError(f"{f.where}: num_attention_heads {h} is not a multiple of num_key_value_heads {sizes['h_kv']}")
    flags = {"activation": f.activation("hidden_act", "relu"), "attn_bias": f.bool("attention_bias", True),
             "gqa": sizes["h_kv"] != h}
    return sizes, flags


_NOTE = ("audio input is not modelled for {}: the FastConformer encoder is held, its parameters counted; N_aud must "
         "be 0. The forward counted is the decoder's given the encoder's output of T_enc positions (transformers' "
         "encoder_outputs, which generate passes after its first step); T_enc is the encoder's output length: the "
         "log-mel frames (100 a second at 16 kHz, hop 160: transformers' ParakeetFeatureExtractor) divided, rounding "
         "up, by the subsampling's stride (subsampling_conv_stride) at each of its {} stages")


def read_canary(f: Fields):
    """transformers' CanaryConfig: encoder_config (ParakeetEncoderConfig), decoder_config (CanaryDecoderConfig)."""
    asizes, aflags = _encoder(f, CANARY_ENCODER if "encoder_config" not in f.cfg else {})
    dec = sub_fields(f, "decoder_config")
    sizes, flags = _decoder(dec, 128)
    dec.silent("attention_dropout", "initializer_range", "id2label", "label2id", "is_encoder_decoder")
    note_leftovers(f, dec, "decoder_config")
    if f.int("vocab_size", 16384) != sizes["V"]:
        raise SymgptError(f"{f.where}: vocab_size differs from decoder_config.vocab_size (transformers refuses it)")
    if asizes["d_a"] != sizes["d"]:
        raise SymgptError(f"{f.where}: an encoder width other than the decoder's is not modelled (CanaryDecoder has "
                          "no projection between them)")
    flags.update(aflags, tied=f.bool("tie_word_embeddings", True))
    f.silent("id2label", "label2id", "initializer_range", "is_encoder_decoder")
    f.notes.append(_NOTE.format("Canary", flags["sub_layers"]))
    return "canary", flags, {**sizes, **asizes, "N_aud": 0}


def read_cohere_asr(f: Fields):
    """transformers' CohereAsrConfig: the decoder's fields at the top, encoder_config (ParakeetEncoderConfig
    over CohereAsrConfig's encoder defaults, which a given encoder_config is merged over too)."""
    asizes, aflags = _encoder(f, COHERE_ENCODER)
    sizes, flags = _decoder(f, None)
    flags.update(aflags, tied=f.bool("tie_word_embeddings", False))
    f.silent("attention_dropout", "id2label", "label2id", "initializer_range", "is_encoder_decoder")
    f.notes.append(_NOTE.format("Cohere ASR", flags["sub_layers"]))
    return "cohere_asr", flags, {**sizes, **asizes, "N_aud": 0}


READERS = {"canary": Reader(read_canary, ("CanaryForConditionalGeneration",)),
           "cohere_asr": Reader(read_cohere_asr, ("CohereAsrForConditionalGeneration",))}

PRESETS: tuple = ()
