"""Kyutai speech-to-text (Kyutai 2025; transformers' ``KyutaiSpeechToTextForConditionalGeneration``): a
decoder over a text token and K audio codebook tokens a position (their embeddings summed), beside
the Mimi codec, held (``blocks/kyutai.py``). Counted: every parameter and the decoder's forward over
the token ids; encoding audio into codebook tokens is not modelled (N_aud must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, heads, note_leftovers, sub_fields

_CODEC = {"codec_channels": 1, "codec_filters": 64, "codec_kernel": 7, "codec_last_kernel": 3,
          "codec_residual_kernel": 3, "codec_compress": 2, "codec_residual_layers": 1, "codec_conv_shortcut": False,
          "codec_ratios": "8,6,5,4", "codec_hidden": 512, "codec_intermediate": 2048, "codec_layers": 8,
          "codec_heads": 8, "codec_kv_heads": 8, "codec_head_dim": 64, "codec_attention_bias": False,
          "codec_vq_dim": 256, "codec_latent_stride": 2, "codec_upsample_groups": 512}
_ADDED = {"codebooks": 32, "codebook_vocab": 2049, "rotary_per_layer": True, "cache_window": 375, **_CODEC}
_HELP = {"codebooks": "audio codebook tokens a position, embedded and summed with the text token's (num_codebooks)",
         "codebook_vocab": "rows of each codebook in the embedding table (codebook_vocab_size)",
         "cache_window": "sliding_window: the forward attends every key (a full causal mask), a generation's "
                         "DynamicCache keeps the last sliding_window keys; T must not exceed it (null: no bound)",
         "rotary_per_layer": "each layer computes its own rotary cos/sin (KyutaiSpeechToTextAttention.rotary_emb)",
         **{k: f"the Mimi codec's {k[6:].replace('_', ' ')} (MimiConfig)" for k in _CODEC}}
_HELP["codec_ratios"] = "the Mimi codec's upsampling_ratios, comma-separated"
_HELP["codec_latent_stride"] = ("the Mimi codec's resampling stride (latent_stride; null: frame_rate equals "
                                "encodec_frame_rate, no resampling convs)")


class _Ratios(tuple):
    """codec_ratios' choices: its default listed, any comma-separated positive integers accepted."""

    def __contains__(self, value) -> bool:
        parts = str(value).split(",")
        return isinstance(value, str) and all(p.isdigit() and int(p) > 0 for p in parts)


FAMILIES = (Family(name="kyutai_speech_to_text", description="Kyutai speech-to-text: a decoder over text and audio "
                   "codebook tokens, the Mimi codec held (audio is not encoded)",
                   flags=Extended(FLAGS, dict(fused_gate_up=True), _ADDED), sizes=SIZES + ("N_aud",),
                   optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.kyutai", "build"), name="kyutai_speech_to_text"),
                   flag_help=Extended(FLAG_HELP, added=_HELP),
                   choices=Extended(CHOICES, added={"codec_ratios": _Ratios((_CODEC["codec_ratios"],))})),)


def _codec(f: Fields) -> dict:
    """MimiConfig as the codec_* flags."""
    import math
    from fractions import Fraction

    c = sub_fields(f, "codec_config")
    mt = c.cfg.get("model_type", "mimi")
    if mt != "mimi":
        raise SymgptError(f"{f.where}: a codec_config of model_type {str(mt)[:40]!r} is not modelled")
    rs, _ = c.get("upsampling_ratios", None)
    rs = rs or [8, 6, 5, 4]
    if not isinstance(rs, list) or not all(isinstance(r, int) and not isinstance(r, bool) and r > 0 for r in rs):
        raise SymgptError(f"{c.where}: field 'upsampling_ratios' must list positive integers")
    rk, _ = c.get("residual_kernel_size", 3)
    if not isinstance(rk, int) or isinstance(rk, bool):
        raise SymgptError(f"{c.where}: a list of residual_kernel_size is not modelled")
    H, nh = c.int("hidden_size", 512), c.int("num_attention_heads", 8)
    out = dict(codec_channels=c.int("audio_channels", 1), codec_filters=c.int("num_filters", 64),
               codec_kernel=c.int("kernel_size", 7), codec_last_kernel=c.int("last_kernel_size", 3),
               codec_residual_kernel=rk, codec_compress=c.int("compress", 2),
               codec_residual_layers=c.int("num_residual_layers", 1),
               codec_conv_shortcut=c.bool("use_conv_shortcut", False), codec_ratios=",".join(map(str, rs)),
               codec_hidden=H, codec_intermediate=c.int("intermediate_size", 2048),
               codec_layers=c.int("num_hidden_layers", 8), codec_heads=nh,
               codec_kv_heads=c.int("num_key_value_heads", 8), codec_head_dim=c.int("head_dim", H // nh, optional=True)
               or H // nh, codec_attention_bias=c.bool("attention_bias", False),
               codec_vq_dim=c.int("vector_quantization_hidden_dimension", 256),
               codec_upsample_groups=c.int("upsample_groups", 512))
    # MimiConfig: encodec_frame_rate = ceil(sampling_rate / prod(ratios)); frame_rate = sampling_rate / frame_size
    # (frame_size = 2·prod(ratios)) unless frame_rate is given; latent_stride = int(encodec / frame_rate)
    sr, hop = c.int("sampling_rate", 24000), math.prod(rs)
    encodec = math.ceil(Fraction(sr, hop))
    given, _ = c.get("_frame_rate", None)
    given = given if given is not None else c.get("frame_rate", None)[0]
    rate = Fraction(given) if given is not None else Fraction(sr, 2 * hop)
    out["codec_latent_stride"] = None if rate == encodec else int(Fraction(encodec) / rate)
    c.silent("model_type", "dilation_growth_rate", "use_causal_conv", "pad_mode", "trim_right_ratio", "codebook_size",
             "codebook_dim", "num_quantizers", "num_semantic_quantizers", "hidden_act", "max_position_embeddings",
             "initializer_range", "norm_eps", "use_cache", "use_streaming", "rope_parameters", "rope_theta",
             "sliding_window", "attention_dropout", "layer_scale_initial_scale", "tie_word_embeddings", "frame_rate",
             "_frame_rate", "id2label", "label2id", "is_encoder_decoder")
    note_leftovers(f, c, "codec_config")
    return out


def read(f: Fields):
    """transformers' KyutaiSpeechToTextConfig (its codec_config a MimiConfig)."""
    sizes = {"V": f.int("vocab_size", 4001), "d": f.int("hidden_size", 2048), "L": f.int("num_hidden_layers", 48),
             "h": f.int("num_attention_heads", 32), "T_max": f.int("max_position_embeddings", 750)}
    ffn = f.int("ffn_dim", 11264)
    if ffn % 2:
        raise SymgptError(f"{f.where}: ffn_dim must be even (fc1's output is split in two halves)")
    sizes["d_ff"] = ffn // 2
    heads(f, sizes)
    if f.bool("tie_word_embeddings", False):
        raise SymgptError(f"{f.where}: a tied lm_head (tie_word_embeddings) is not modelled for Kyutai speech-to-text "
                          "(its table holds the codebook rows too)")
    flags = {"tied": False, "activation": f.activation("hidden_act", "silu"), "window": False,
             "codebooks": f.int("num_codebooks", 32), "codebook_vocab": f.int("codebook_vocab_size", 2049),
             **_codec(f)}
    # KyutaiSpeechToTextModel masks with create_causal_mask (every key attended), while a generation's
    # DynamicCache(config) keeps the last sliding_window keys: T is bounded by it
    flags["cache_window"] = f.int("sliding_window", 375, optional=True)
    f.silent("rms_norm_eps", "rope_parameters", "rope_theta", "attention_dropout", "use_cache", "initializer_range",
             "audio_bos_token_id", "audio_pad_token_id", "pad_token_id", "bos_token_id", "eos_token_id", "frame_size",
             "id2label", "label2id", "is_encoder_decoder")
    f.notes.append("the Mimi codec is held: its parameters counted, encoding audio into codebook tokens is not "
                   "modelled (N_aud must be 0); the forward counted is the decoder's over one text token and "
                   f"{flags['codebooks']} codebook tokens a position, their embeddings summed")
    f.notes.append("every key is attended (KyutaiSpeechToTextModel builds a full causal mask); a generation's cache "
                   "keeps the last sliding_window keys, so T is bounded by sliding_window")
    sizes["N_aud"] = 0
    return "kyutai_speech_to_text", flags, sizes


READERS = {"kyutai_speech_to_text": Reader(read, ("KyutaiSpeechToTextForConditionalGeneration",))}

PRESETS: tuple = ()
